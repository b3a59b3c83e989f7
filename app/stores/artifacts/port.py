"""The artifact-store port: where a registered model's files live, and how a process gets them to load.

A model is registered with its folder's manifest (every file's relative path, sha256 and size: the
`model_files` rows) in the registering transaction, and any process later asks the store for a local
folder holding exactly those files. Two adapters implement it: `DatabaseArtifactStore` (the files as
blobs in the database, fetched into the data dir, which is only a cache: the default on PostgreSQL) and
`LocalArtifactStore` (the files stay in the folder they were registered from: one machine, SQLite's
default). One contract suite (tests/stores/test_artifact_store_contract.py) runs against both.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from sqlalchemy.orm import Session


@dataclass(frozen=True)
class ArtifactRef:
    """A stored model as the registry names it: its version, its manifest's sha256, the folder (on the
    machine that registered it) its files came from."""

    version: str
    sha256: str
    origin: str


@dataclass(frozen=True)
class StoredArtifact:
    """What `save` stored: the store's name, the manifest's sha256, the files' bytes and count."""

    store: str
    sha256: str
    bytes: int
    files: int


class ArtifactUnavailableError(RuntimeError):
    """No verified copy of a model's files can be had: missing, or not hashing to the manifest."""


class ArtifactStore(Protocol):
    """Where registered models' files live."""

    name: str  # `database` or `local`: recorded with each model it stores

    def save(self, session: Session, version: str, folder: Path) -> StoredArtifact:
        """Store a model folder's files as `version`'s artifact, in the caller's (registering) transaction:
        until it commits nothing is visible, so a process killed mid-upload leaves nothing behind."""

    def folder(self, ref: ArtifactRef) -> Path:
        """A local folder holding exactly the model's files, each checked against its sha256 now;
        ArtifactUnavailableError when no such copy can be had."""

    def remove(self, session: Session, ref: ArtifactRef) -> int:
        """Forget the model's files in the caller's transaction; the bytes the store frees."""

    def evict(self, ref: ArtifactRef) -> None:
        """After `remove` committed: delete this machine's copy of the files, where the store keeps one."""

    def prune(self) -> int:
        """Delete this machine's copies of models no longer registered; how many (0 where the store keeps
        no copies)."""

    def stored_bytes(self, session: Session) -> int:
        """Bytes the store holds for every registered model (content shared by models counted once
        where the store shares it)."""
