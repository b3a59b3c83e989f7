"""A model's files: one row per file of its folder (relative path, sha256, size), and their blobs' upkeep.

The rows are the model's manifest whichever store holds the bytes: the database store keeps each file as
a blob (app/db/blob_store.py), the local store leaves it in the folder the model was registered from.
Either way a model is loaded only from files whose content hashes to these rows.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import BigInteger, ForeignKey, String, delete, exists, func, select
from sqlalchemy.orm import Mapped, Session, mapped_column

from app.db.blob_store import Blob, BlobChunk, JobInput, lock_blobs
from app.db.models import Base


class ModelFile(Base):
    """One file of a registered model's folder."""

    __tablename__ = "model_files"

    version: Mapped[str] = mapped_column(
        ForeignKey("model_versions.version", ondelete="CASCADE"), primary_key=True
    )
    path: Mapped[str] = mapped_column(String(1000), primary_key=True)  # relative, with `/`
    sha256: Mapped[str] = mapped_column(String(64), nullable=False, index=True)
    size: Mapped[int] = mapped_column(BigInteger, nullable=False)


@dataclass(frozen=True)
class FileEntry:
    """A manifest row: where a file goes in the model's folder, its content hash and size."""

    path: str
    sha256: str
    size: int


@dataclass(frozen=True)
class Collected:
    """What a collection of unreferenced blobs deleted."""

    blobs: int
    bytes: int


class ModelFileRepository:
    """Manifest rows and blob upkeep inside one session (the caller's transaction)."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def record(self, version: str, entries: Iterable[FileEntry]) -> None:
        """Store a version's manifest."""
        self.session.add_all(
            ModelFile(version=version, path=e.path, sha256=e.sha256, size=e.size) for e in entries
        )
        self.session.flush()

    def files(self, version: str) -> list[FileEntry]:
        """A version's manifest, by path."""
        query = (
            select(ModelFile.path, ModelFile.sha256, ModelFile.size)
            .where(ModelFile.version == version)
            .order_by(ModelFile.path)
        )
        return [FileEntry(path, sha256, int(size)) for path, sha256, size in self.session.execute(query)]

    def drop(self, version: str) -> None:
        """Forget a version's manifest."""
        self.session.execute(delete(ModelFile).where(ModelFile.version == version))

    def collect_blobs(self) -> Collected:
        """Delete every blob that neither a model's file nor a job's input refers to."""
        lock_blobs(self.session, exclusive=True)  # waits for transactions adding references
        referenced = exists().where(ModelFile.sha256 == Blob.sha256)
        an_input = exists().where(JobInput.sha256 == Blob.sha256)
        doomed = self.session.execute(select(Blob.sha256, Blob.size).where(~referenced, ~an_input)).all()
        names = [sha256 for sha256, _ in doomed]
        for start in range(0, len(names), 500):
            batch = names[start : start + 500]
            self.session.execute(delete(BlobChunk).where(BlobChunk.sha256.in_(batch)))
            self.session.execute(delete(Blob).where(Blob.sha256.in_(batch)))
        return Collected(len(names), sum(int(size) for _, size in doomed))

    def blob_bytes(self) -> int:
        """Bytes of the distinct blobs models refer to (files shared by content counted once)."""
        used = select(Blob.size).where(exists().where(ModelFile.sha256 == Blob.sha256)).subquery()
        return int(self.session.scalar(select(func.coalesce(func.sum(used.c.size), 0))) or 0)

    def manifest_bytes(self) -> int:
        """Bytes of every stored model's files, each model counted in full."""
        total = select(func.coalesce(func.sum(ModelFile.size), 0))
        return int(self.session.scalar(total) or 0)
