"""The model registry: registering models with their files, which model is active, and turning a
registered version into a local folder to load, on any machine.

A model registered from a folder has its files stored by the artifact store (app/stores/artifacts) in
the registering transaction, so every process, on any machine and on an empty data dir, loads exactly
those files (each checked against its sha256). The bundled default is in every install and hub names
have no local files: those are registered without files and resolved as before.
"""

from __future__ import annotations

import logging
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from app.core.errors import ConfigurationError, ConflictError, NotFoundError
from app.db.admin_models import ModelVersion
from app.db.engine import transaction
from app.db.repositories.corpora import CorpusRepository
from app.db.repositories.jobs import MODEL_SLOT, JobRepository
from app.db.repositories.model_versions import ModelRepository
from app.stores.artifacts.port import ArtifactRef, ArtifactStore
from encoders.loader import version_folder
from pairank.models import (
    CROSS_ENCODER,
    DEFAULT_MODEL_ID,
    DEFAULT_MODEL_SHA256,
    ModelSpec,
    model_kind,
    resolve_model,
)

log = logging.getLogger(__name__)
DEFAULT_VERSION = ModelSpec(DEFAULT_MODEL_ID, "", DEFAULT_MODEL_SHA256).version


@dataclass(frozen=True)
class DeletedModel:
    """What deleting a version removed: its files' bytes, and the bytes the store freed (files other
    models or jobs share stay)."""

    version: str
    artifact_bytes: int
    freed_bytes: int


@dataclass(frozen=True)
class Registration:
    """One version to register: its spec, the path it is registered from, its source, its row's fields."""

    spec: ModelSpec
    path: str
    source: str
    fields: dict[str, Any]


def _ref(row: ModelVersion) -> ArtifactRef | None:
    if row.artifact_store is None or row.artifact_sha256 is None:
        return None
    return ArtifactRef(row.version, row.artifact_sha256, row.path)


def _looks_like_a_path(name: str) -> bool:
    return os.path.isabs(name) or name.startswith(("./", "../", "~"))


class ModelRegistry:
    """Registered versions and their files, through one artifact store."""

    def __init__(self, sessions: sessionmaker[Session], artifacts: ArtifactStore, export_dir: Path) -> None:
        self.sessions = sessions
        self.artifacts = artifacts
        self.export_dir = export_dir

    def register(self, spec: ModelSpec, path: str, source: str, **fields: Any) -> bool:
        """Register a version unless it is known, with its folder's files stored in the same transaction
        (the bundled default and hub names have none to store); False when it was known already."""
        return self.register_together([Registration(spec, path, source, fields)])[0]

    def register_together(self, registrations: list[Registration]) -> list[bool]:
        """Register several versions in one transaction (a retraining job's bi-encoder and re-ranker:
        both or neither), each unless known; whether each was new."""
        try:
            with transaction(self.sessions) as session:
                return [self._add(session, registration) for registration in registrations]
        except ConflictError:  # another process registered one at the same moment
            return [False] * len(registrations)

    def _add(self, session: Session, registration: Registration) -> bool:
        spec, folder = registration.spec, Path(registration.spec.path)
        repository = ModelRepository(session)
        if repository.get(spec.version) is not None:
            return False
        row = repository.add(
            version=spec.version,
            model_id=spec.model_id,
            path=registration.path,
            source=registration.source,
            weights_sha256=spec.weights_sha256,
            **registration.fields,
        )
        if spec.version != DEFAULT_VERSION and spec.weights_sha256 is not None and folder.is_dir():
            self._store(session, row, folder)
        return True

    def _store(self, session: Session, row: ModelVersion, folder: Path) -> None:
        stored = self.artifacts.save(session, row.version, folder)
        row.artifact_store, row.artifact_sha256 = stored.store, stored.sha256
        row.artifact_bytes, row.artifact_files = stored.bytes, stored.files

    def store_unstored(self) -> list[str]:
        """Store the files of versions registered before their store kept them (an upgrade), from their
        folders where this machine has them; the versions stored."""
        with self.sessions() as session:
            candidates = [
                (row.version, row.path)
                for row in ModelRepository(session).unstored()
                if row.version != DEFAULT_VERSION and row.weights_sha256 and Path(row.path).is_dir()
            ]
        stored = []
        for version, path in candidates:
            found = resolve_model(path)
            if found.version != version:
                log.warning(
                    "not storing model %s: the files at %s now hash to another version", version, path
                )
                continue
            with transaction(self.sessions) as session:
                row = ModelRepository(session).lock(version)  # one process stores it; the others wait, skip
                if row is not None and row.artifact_store is None:
                    self._store(session, row, Path(found.path))
                    stored.append(version)
        if stored:
            log.info("stored the files of %d models registered before: %s", len(stored), stored)
        return stored

    def spec(self, version: str, kind: str | None = None) -> ModelSpec:
        """A registered version, loadable here: its stored files in a verified local folder (fetched if
        need be), else the bundled default or the folder or hub name it was registered from; with `kind`,
        a version of another kind (a cross-encoder where a bi-encoder must serve) is a ConflictError."""
        with self.sessions() as session:
            row = ModelRepository(session).get(version)
        if row is None:
            raise NotFoundError(f"model version {version!r} is not registered", field="version")
        if kind is not None and row.kind != kind:
            raise ConflictError(f"model version {version!r} is a {row.kind}, not a {kind}", "version")
        return self._spec_of(row)

    def _spec_of(self, row: ModelVersion) -> ModelSpec:
        ref = _ref(row)
        if ref is not None:
            return ModelSpec(row.model_id, str(self.artifacts.folder(ref)), row.weights_sha256)
        if row.version == DEFAULT_VERSION:
            return resolve_model("default")  # in this install's package, wherever it was registered from
        if _looks_like_a_path(row.path) and not Path(row.path).expanduser().exists():
            raise ConfigurationError(
                f"model {row.version}: its files are not stored yet and {row.path} is not on this machine "
                "(a process that has the folder stores them when it starts)",
                "version",
            )
        spec = resolve_model(row.path)
        if spec.version != row.version:
            raise ConflictError(
                f"the weights at {row.path} now hash to {spec.version}, not {row.version}; refusing to load",
                "version",
            )
        return spec

    def active_at_start(self, configured: str) -> ModelSpec:
        """The model to serve at start-up.

        A PAIRANK_MODEL that names a model not registered yet is a new choice of the operator: it is
        registered and activated. Otherwise the registry's active version wins, so an activation or a
        rollback made through the admin API survives restarts.
        """
        configured_spec = self._configured(configured)
        with self.sessions() as session:
            repository = ModelRepository(session)
            known = repository.get(configured_spec.version) is not None
            active = repository.active()
        if known and active is not None:
            log.info("serving the registry's active model %s", active.version)
            return self._spec_of(active)
        self.register(configured_spec, configured, "configured")
        with transaction(self.sessions) as session:
            ModelRepository(session).activate(configured_spec.version)
        return self.spec(configured_spec.version)  # what every other process loads: the stored files

    def _configured(self, configured: str) -> ModelSpec:
        if model_kind(Path(configured).expanduser()) == CROSS_ENCODER:
            raise ConfigurationError(
                f"PAIRANK_MODEL={configured} is a cross-encoder (a re-ranker): it cannot serve; register it "
                "with `pairank models register` and set it on a corpus's ranking instead",
                "PAIRANK_MODEL",
            )
        # A folder another machine registered (and stored) needs no copy here: it comes from the store.
        if not _looks_like_a_path(configured) or Path(configured).expanduser().exists():
            return resolve_model(configured)
        with self.sessions() as session:
            row = ModelRepository(session).registered_from(configured, stored=True)
        if row is None:
            raise ConfigurationError(
                f"PAIRANK_MODEL={configured}: no such folder on this machine, and no model registered from "
                "it is stored in the database yet (start a process that has the folder first)",
                "PAIRANK_MODEL",
            )
        return self._spec_of(row)

    def _configured_version(self, configured: str) -> str | None:
        # What `_configured` would load, without fetching anything.
        if not _looks_like_a_path(configured) or Path(configured).expanduser().exists():
            return resolve_model(configured).version
        with self.sessions() as session:
            row = ModelRepository(session).registered_from(configured, stored=True)
        return row.version if row is not None else None

    def prune_cache(self) -> int:
        """Delete this machine's copies of models no longer registered (deleted through another
        machine); how many."""
        return self.artifacts.prune()

    def delete(self, version: str, configured: str) -> DeletedModel:
        """Forget a version and its files (blobs no other model or job uses are deleted); 404 unknown,
        409 for the active and the previous version (the rollback), PAIRANK_MODEL's, one an unfinished
        model job uses, or a cross-encoder a corpus re-ranks with."""
        if self._configured_version(configured) == version:
            raise ConflictError(
                f"{version} is this process's PAIRANK_MODEL: a restart would register and activate it again",
                "version",
            )
        with transaction(self.sessions) as session:
            repository = ModelRepository(session)
            row = repository.lock(version)
            if row is None:
                raise NotFoundError(f"model version {version!r} is not registered", field="version")
            previous = repository.previous()
            if row.is_active or (previous is not None and previous.version == version):
                role = "active" if row.is_active else "previous (the rollback target)"
                raise ConflictError(f"{version} is the {role} model; activate another first", "version")
            job = JobRepository(session).slot_holder(MODEL_SLOT)
            if job is not None and version in _versions_used_by(job.params):
                raise ConflictError(
                    f"job {job.id} ({job.kind}) is {job.status} and uses {version}", "version"
                )
            reranking = [
                c.name for c in CorpusRepository(session).all() if _reranks_with(c.default_ranking, version)
            ]
            if reranking:
                raise ConflictError(
                    f"{version} re-ranks corpora {reranking}: set their ranking without it first", "version"
                )
            ref = _ref(row)
            freed = self.artifacts.remove(session, ref) if ref is not None else 0
            size = int(row.artifact_bytes or 0)
            repository.delete(row)
        if ref is not None:
            self.artifacts.evict(ref)
        shutil.rmtree(version_folder(self.export_dir, version), ignore_errors=True)
        log.info("deleted model %s (%d bytes of files, %d freed in the store)", version, size, freed)
        return DeletedModel(version, size, freed)

    def stored_bytes(self) -> int:
        """Bytes the artifact store holds for every model."""
        with self.sessions() as session:
            return self.artifacts.stored_bytes(session)


def _reranks_with(ranking: dict[str, Any] | None, version: str) -> bool:
    stage = (ranking or {}).get("rerank")
    return isinstance(stage, dict) and stage.get("model") == version


def _versions_used_by(params: dict[str, Any]) -> set[str]:
    resolved = params.get("_resolved") or {}
    return {str(v) for v in (params.get("version"), resolved.get("base_version")) if v}
