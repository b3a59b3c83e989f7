"""The database artifact store: a model's files are blobs in the database; the data dir only caches them.

`save` streams each file into content-addressed 1 MiB chunks (app/db/blob_store.py) in the registering
transaction, so a model is visible with all its bytes or not at all, and files shared by models (a
tokenizer) are stored once. `folder` hands out `<cache root>/<manifest sha256>/<model name>/`, checking
every file against its sha256 each time: a missing or damaged file is fetched again on its own. A copy
is fetched into a temporary folder and renamed into place under a lock every process of the machine
shares.
"""

from __future__ import annotations

import logging
import os
import shutil
import time
import uuid
from pathlib import Path

from sqlalchemy.orm import Session, sessionmaker

from app.db.artifacts.model_files import FileEntry, ModelFileRepository
from app.db.blob_store import BlobRepository
from app.db.repositories.model_versions import ModelRepository
from app.stores.artifacts.files import folder_lock, manifest_sha256, mismatches, scan_folder
from app.stores.artifacts.port import ArtifactRef, ArtifactUnavailableError, StoredArtifact

log = logging.getLogger(__name__)


class DatabaseArtifactStore:
    """Manifests and bytes in the database; verified copies under `cache_root`."""

    name = "database"

    def __init__(self, sessions: sessionmaker[Session], cache_root: Path) -> None:
        self.sessions = sessions
        self.cache_root = cache_root

    def save(self, session: Session, version: str, folder: Path) -> StoredArtifact:
        """Stream every file into blobs (once per content) and record the manifest, in the caller's
        transaction."""
        started = time.monotonic()
        entries = scan_folder(folder)
        blobs = BlobRepository(session)
        for entry in entries:
            if blobs.put_file(folder / entry.path) != entry.sha256:
                raise ArtifactUnavailableError(f"{folder / entry.path} changed while it was being stored")
        ModelFileRepository(session).record(version, entries)
        size = sum(entry.size for entry in entries)
        log.info("stored model %s: %d files, %d bytes in %.2f s", version, len(entries), size,
                 time.monotonic() - started)  # fmt: skip
        return StoredArtifact(self.name, manifest_sha256(entries), size, len(entries))

    def folder(self, ref: ArtifactRef) -> Path:
        """This machine's cached copy (damaged or missing files fetched again), else a copy fetched now.
        Never the registering folder: every process loads what the database holds, as any machine would."""
        entries = self._manifest(ref)
        root = self.cache_root / ref.sha256
        # Named after the model, as its own folder was: tools that name a model by its folder agree.
        name = ref.version.rsplit("@", 1)[0].rsplit("/", 1)[-1].strip(".") or "model"
        with folder_lock(self.cache_root, ref.sha256):
            if root.is_dir():
                self._repair(ref, root / name, entries)
            else:
                self._fetch(ref, root, name, entries)
        return root / name

    def _manifest(self, ref: ArtifactRef) -> list[FileEntry]:
        with self.sessions() as session:
            entries = ModelFileRepository(session).files(ref.version)
        if not entries or manifest_sha256(entries) != ref.sha256:
            raise ArtifactUnavailableError(f"model {ref.version}: its manifest in the database is incomplete")
        return entries

    def _repair(self, ref: ArtifactRef, cached: Path, entries: list[FileEntry]) -> None:
        bad = mismatches(cached, entries)
        if not bad:
            return
        log.warning("model %s: %d cached files missing or not matching their sha256 (%s): fetching again",
                    ref.version, len(bad), ", ".join(e.path for e in bad))  # fmt: skip
        self._write(bad, cached)
        if mismatches(cached, bad):
            raise ArtifactUnavailableError(f"model {ref.version}: {cached} still fails its sha256 check")

    def _fetch(self, ref: ArtifactRef, root: Path, name: str, entries: list[FileEntry]) -> None:
        started = time.monotonic()
        for stale in self.cache_root.glob(f".tmp-{ref.sha256}-*"):  # a fetch killed part-way
            shutil.rmtree(stale, ignore_errors=True)
        partial = self.cache_root / f".tmp-{ref.sha256}-{uuid.uuid4().hex[:8]}"
        try:
            self._write(entries, partial / name)
            os.replace(partial, root)
        finally:
            shutil.rmtree(partial, ignore_errors=True)
        size = sum(entry.size for entry in entries)
        log.info("fetched model %s from the database: %d files, %d bytes in %.2f s", ref.version,
                 len(entries), size, time.monotonic() - started)  # fmt: skip

    def _write(self, entries: list[FileEntry], folder: Path) -> None:
        # Each file is written beside its place and renamed in, after its content hashed right.
        with self.sessions() as session:
            blobs = BlobRepository(session)
            for entry in entries:
                if blobs.size(entry.sha256) is None:
                    raise ArtifactUnavailableError(
                        f"{entry.path}: blob {entry.sha256} is not in the database"
                    )
                blobs.write_to(entry.sha256, folder / entry.path)

    def remove(self, session: Session, ref: ArtifactRef) -> int:
        """Forget the manifest and delete the blobs no other model or job refers to; the bytes freed."""
        repository = ModelFileRepository(session)
        repository.drop(ref.version)
        return repository.collect_blobs().bytes

    def evict(self, ref: ArtifactRef) -> None:
        """Delete this machine's cached copy."""
        with folder_lock(self.cache_root, ref.sha256):
            shutil.rmtree(self.cache_root / ref.sha256, ignore_errors=True)
        (self.cache_root / f".{ref.sha256}.lock").unlink(missing_ok=True)

    def prune(self) -> int:
        """Delete cached copies whose manifest no registered model has (deleted elsewhere), and fetches
        killed part-way."""
        if not self.cache_root.is_dir():
            return 0
        pruned = 0
        for folder in sorted(self.cache_root.iterdir()):
            if folder.name.startswith(".tmp-"):
                with folder_lock(self.cache_root, folder.name.split("-")[1]):
                    shutil.rmtree(folder, ignore_errors=True)
                continue
            if folder.name.startswith(".") or not folder.is_dir():
                continue
            with folder_lock(self.cache_root, folder.name):  # checked under the lock a fetch takes
                with self.sessions() as session:
                    if ModelRepository(session).has_manifest(folder.name):
                        continue
                shutil.rmtree(folder, ignore_errors=True)
                pruned += 1
        if pruned:
            log.info("deleted %d cached copies of models no longer registered", pruned)
        return pruned

    def stored_bytes(self, session: Session) -> int:
        """The distinct blobs models refer to."""
        return ModelFileRepository(session).blob_bytes()
