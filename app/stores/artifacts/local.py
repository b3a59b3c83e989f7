"""The local artifact store: a model's files stay in the folder it was registered from (one machine).

SQLite's default: the database file is in the data dir already, so the machine is the deployment. The
manifest is in the database all the same, so a model is loaded only from files that hash to it; there
is no second copy, so a damaged file is an error naming it, never a silent load.
"""

from __future__ import annotations

import logging
import shutil
import uuid
from pathlib import Path

from sqlalchemy.orm import Session, sessionmaker

from app.db.artifacts.model_files import ModelFileRepository
from app.stores.artifacts.files import manifest_sha256, mismatches, scan_folder
from app.stores.artifacts.port import ArtifactRef, ArtifactUnavailableError, StoredArtifact

log = logging.getLogger(__name__)


class LocalArtifactStore:
    """Manifests in the database, bytes in the registering folder."""

    name = "local"

    def __init__(self, sessions: sessionmaker[Session], owned_root: Path) -> None:
        self.sessions = sessions
        # Folders under here (the data dir's trained runs) are the store's own: deleted with their model.
        self.owned_root = owned_root

    def save(self, session: Session, version: str, folder: Path) -> StoredArtifact:
        """Record the folder's manifest in the caller's transaction."""
        entries = scan_folder(folder)
        ModelFileRepository(session).record(version, entries)
        return StoredArtifact(self.name, manifest_sha256(entries), sum(e.size for e in entries), len(entries))

    def folder(self, ref: ArtifactRef) -> Path:
        """The registering folder, once every file in it checks against the manifest."""
        with self.sessions() as session:
            entries = ModelFileRepository(session).files(ref.version)
        origin = Path(ref.origin)
        if not entries or manifest_sha256(entries) != ref.sha256:
            raise ArtifactUnavailableError(f"model {ref.version}: its manifest in the database is incomplete")
        bad = mismatches(origin, entries)
        if bad:
            raise ArtifactUnavailableError(
                f"model {ref.version}: {origin / bad[0].path} is missing or does not match its sha256 "
                f"{bad[0].sha256[:12]} ({len(bad)} of {len(entries)} files); the local artifact store keeps "
                "one copy: restore the folder, or use PAIRANK_ARTIFACT_STORE=database"
            )
        return origin

    def remove(self, session: Session, ref: ArtifactRef) -> int:
        """Forget the manifest; the folder goes in `evict` if the store owns it."""
        repository = ModelFileRepository(session)
        freed = sum(entry.size for entry in repository.files(ref.version))
        repository.drop(ref.version)
        return freed if self._owned(ref) is not None else 0

    def evict(self, ref: ArtifactRef) -> None:
        """Delete a trained model's run folder in the data dir; a folder of the operator's is left alone."""
        owned = self._owned(ref)
        if owned is not None:
            shutil.rmtree(owned, ignore_errors=True)
            log.info("deleted %s (model %s)", owned, ref.version)

    def _owned(self, ref: ArtifactRef) -> Path | None:
        # A retraining job's run folder: models/<job id>/ in the data dir, holding the origin.
        origin, root = Path(ref.origin).resolve(), self.owned_root.resolve()
        if root not in origin.parents:
            return None
        run = origin.relative_to(root).parts[0]
        try:
            uuid.UUID(run)
        except ValueError:
            return None  # an operator's own folder that happens to be in the data dir
        return root / run

    def prune(self) -> int:
        """Nothing: the local store keeps no copies (a deleted model's run folder went with it)."""
        return 0

    def stored_bytes(self, session: Session) -> int:
        """Every stored model's files, each model counted in full (each has its own folder)."""
        return ModelFileRepository(session).manifest_bytes()
