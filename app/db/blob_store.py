"""Files kept in the database: content-addressed blobs in chunks, and the inputs each job runs on.

A process keeps nothing another one needs: a job's inputs (its pairs, an uploaded import file) are
blobs in the database, so any worker on any machine runs any job, and a local copy in the data dir
is only a cache, verified against its sha256 whenever it is used. A blob is written in the caller's
transaction (chunk by chunk, streamed from a file): until that commits nobody sees it, so a process
killed mid-upload leaves no half blob behind. Blobs are shared by content (a job's input, a model's
file: app/db/artifacts/model_files.py); on PostgreSQL their writers hold a shared advisory lock and the
collector of unreferenced blobs an exclusive one, so a blob is never deleted under a new reference.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

from sqlalchemy import BigInteger, ForeignKey, Integer, LargeBinary, String, select, text
from sqlalchemy.orm import Mapped, Session, mapped_column

from app.db.admin_models import Job
from app.db.engine import insert_if_absent
from app.db.models import Base, UtcDateTime, utcnow

CHUNK_BYTES = 1 << 20  # 1 MiB a row: streamed without holding a whole file in memory
_BLOB_LOCK_KEY = 0x26B10B5  # the advisory lock shared by blob writers, taken alone by the collector


class Blob(Base):
    """One stored file, named by the sha256 of its content."""

    __tablename__ = "blobs"

    sha256: Mapped[str] = mapped_column(String(64), primary_key=True)
    size: Mapped[int] = mapped_column(BigInteger, nullable=False)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow, nullable=False)


class BlobChunk(Base):
    """A blob's bytes from `seq * CHUNK_BYTES` on."""

    __tablename__ = "blob_chunks"

    sha256: Mapped[str] = mapped_column(ForeignKey("blobs.sha256", ondelete="CASCADE"), primary_key=True)
    seq: Mapped[int] = mapped_column(Integer, primary_key=True)
    data: Mapped[bytes] = mapped_column(LargeBinary, nullable=False)


class JobInput(Base):
    """A named input of a job (a pairs file, an upload): which blob holds it."""

    __tablename__ = "job_inputs"

    job_id: Mapped[str] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"), primary_key=True)
    name: Mapped[str] = mapped_column(String(100), primary_key=True)
    sha256: Mapped[str] = mapped_column(ForeignKey("blobs.sha256"), nullable=False, index=True)


class BlobIntegrityError(RuntimeError):
    """A stored or cached blob whose bytes do not hash to its name."""


def file_sha256(path: Path) -> tuple[str, int]:
    """(sha256 hex, size) of a file, read in chunks."""
    digest, size = hashlib.sha256(), 0
    with path.open("rb") as handle:
        while chunk := handle.read(CHUNK_BYTES):
            digest.update(chunk)
            size += len(chunk)
    return digest.hexdigest(), size


def lock_blobs(session: Session, *, exclusive: bool = False) -> None:
    """Until the transaction ends: writers of blob references share the lock, the collector takes it alone.

    PostgreSQL only; SQLite runs one writing transaction at a time anyway.
    """
    if session.get_bind().dialect.name == "postgresql":
        function = "pg_advisory_xact_lock" if exclusive else "pg_advisory_xact_lock_shared"
        session.execute(text(f"SELECT {function}(:key)"), {"key": _BLOB_LOCK_KEY})


class BlobRepository:
    """Blobs and job inputs inside one session (the caller's transaction)."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def put_file(self, path: Path) -> str:
        """Store a file's content (once per content) and return its sha256."""
        sha256, size = file_sha256(path)
        lock_blobs(self.session)
        if not insert_if_absent(self.session, Blob, {"sha256": sha256, "size": size}):
            return sha256  # stored before (or by another transaction meanwhile, which committed)
        with path.open("rb") as handle:
            seq = 0
            while chunk := handle.read(CHUNK_BYTES):
                row = BlobChunk(sha256=sha256, seq=seq, data=chunk)
                self.session.add(row)
                self.session.flush()
                self.session.expunge(row)  # one chunk in memory at a time
                seq += 1
        return sha256

    def chunks(self, sha256: str) -> Iterator[bytes]:
        """A blob's bytes in order, streamed by one query a few chunk rows at a time."""
        query = (
            select(BlobChunk.data)
            .where(BlobChunk.sha256 == sha256)
            .order_by(BlobChunk.seq)
            .execution_options(yield_per=2)
        )
        for data in self.session.scalars(query):
            yield bytes(data)

    def size(self, sha256: str) -> int | None:
        """A stored blob's size, None when the database holds no such blob."""
        blob = self.session.get(Blob, sha256)
        return int(blob.size) if blob is not None else None

    def write_to(self, sha256: str, path: Path) -> Path:
        """Fetch a blob into `path` (atomically), verified against its sha256."""
        if self.session.get(Blob, sha256) is None:
            raise FileNotFoundError(f"blob {sha256} is not in the database")
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.{uuid.uuid4().hex}.part")
        digest = hashlib.sha256()
        try:
            with partial.open("wb") as handle:
                for chunk in self.chunks(sha256):
                    digest.update(chunk)
                    handle.write(chunk)
            if digest.hexdigest() != sha256:
                raise BlobIntegrityError(f"blob {sha256} read back as {digest.hexdigest()}")
            os.replace(partial, path)
        finally:
            partial.unlink(missing_ok=True)
        return path

    def add_input(self, job_id: str, name: str, path: Path) -> str:
        """Store a file as the job's input `name`; its sha256."""
        sha256 = self.put_file(path)
        self.session.add(JobInput(job_id=job_id, name=name, sha256=sha256))
        self.session.flush()
        return sha256

    def inputs(self, job_id: str) -> dict[str, str]:
        """The job's inputs: name -> sha256."""
        rows = self.session.execute(select(JobInput.name, JobInput.sha256).where(JobInput.job_id == job_id))
        return {name: sha256 for name, sha256 in rows}


def cached_input(session: Session, job: Job | str, name: str, cache: Path) -> Path:
    """The job's input `name` as a local file under `cache`: kept if its content checks, else fetched."""
    job_id = job if isinstance(job, str) else job.id
    repository = BlobRepository(session)
    sha256 = repository.inputs(job_id).get(name)
    if sha256 is None:
        raise FileNotFoundError(f"job {job_id} has no input {name!r}")
    path = cache / name
    if path.is_file() and file_sha256(path)[0] == sha256:
        return path
    return repository.write_to(sha256, path)
