"""SQL for corpora and their document change log."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Update, delete, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.core.errors import ConflictError
from app.db.corpus_settings import SERVING_COLUMNS, CorpusSettings
from app.db.models import Corpus, Document, DocumentChange, utcnow
from app.db.notifications import CHANGES_CHANNEL, notify_changes

__all__ = ["CHANGES_CHANNEL", "ChangeLog", "CorpusMark", "CorpusRepository", "writer_turn"]


def writer_turn(which: Any) -> Update:
    """The no-op UPDATE of a corpus row that makes a transaction its writers' one turn, before it reads:
    it takes SQLite's write lock (whose driver begins a transaction only at a write) and the row lock on
    PostgreSQL."""
    return update(Corpus).where(which).values(updated_at=Corpus.updated_at)


@dataclass(frozen=True)
class CorpusMark:
    """A corpus's id, name and change mark (what a worker compares with its index's mark), and the
    settings its requests read (kept on the opened corpus)."""

    id: int
    name: str
    change_seq: int
    settings: CorpusSettings = CorpusSettings()


class CorpusRepository:
    """Queries on the corpora table."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def add(
        self,
        name: str,
        kind: str,
        description: str | None,
        index_spec: dict[str, Any] | None = None,
        default_ranking: dict[str, Any] | None = None,
        language: str = "en",
    ) -> Corpus:
        """Insert a corpus; ConflictError when the name is taken (also by a concurrent create)."""
        corpus = Corpus(
            name=name,
            kind=kind,
            description=description,
            index_spec=index_spec,
            default_ranking=default_ranking,
            language=language,
        )
        try:
            with self.session.begin_nested():
                self.session.add(corpus)
                self.session.flush()
        except IntegrityError as error:
            raise ConflictError(f"corpus {name!r} already exists", field="name") from error
        return corpus

    def get(self, name: str, *, lock: bool = False) -> Corpus | None:
        """The corpus with this name, or None; `lock` holds its row until commit (serializes writers)."""
        if lock:
            return self._locked(Corpus.name == name)
        return self.session.scalar(select(Corpus).where(Corpus.name == name))

    def language_of(self, name: str) -> str | None:
        """The corpus's language, or None when there is no such corpus (one column: no row loaded)."""
        return self.session.scalar(select(Corpus.language).where(Corpus.name == name))

    def get_by_id(self, corpus_id: int, *, lock: bool = False) -> Corpus | None:
        """The corpus with this database id, or None; `lock` as in `get`."""
        if lock:
            return self._locked(Corpus.id == corpus_id)
        return self.session.get(Corpus, corpus_id)

    def _locked(self, which: Any) -> Corpus | None:
        # SQLite has no row locks, and its driver begins a transaction only at the first write, so a
        # SELECT read the row outside any transaction and a writer could act on a stale mark or count
        # (another process committing in between). A no-op UPDATE takes the database's write lock
        # before the row is read: writers of a corpus take turns there as FOR UPDATE makes them on
        # PostgreSQL. Where SQLite returns rows from an UPDATE (3.35+), the same statement reads it.
        dialect = self.session.get_bind().dialect
        fresh = {"populate_existing": True}  # a row this session loaded before the lock is read again
        if dialect.name != "sqlite":
            return self.session.scalar(select(Corpus).where(which).with_for_update(), execution_options=fresh)
        take = writer_turn(which)
        if dialect.update_returning:
            # The row as the UPDATE left it, loaded into the session like a SELECT would.
            return self.session.scalars(
                take.returning(Corpus), execution_options={"synchronize_session": False, **fresh}
            ).one_or_none()
        self.session.execute(take)
        return self.session.scalar(select(Corpus).where(which), execution_options=fresh)

    def all(self) -> list[Corpus]:
        """Every corpus (each with its maintained document count), by name."""
        return list(self.session.scalars(select(Corpus).order_by(Corpus.name)))

    def marks(self) -> list[CorpusMark]:
        """Every corpus's id, name, change mark and settings: one cheap query per sync, whatever the sizes."""
        columns = [getattr(Corpus, column) for column in SERVING_COLUMNS]
        rows = self.session.execute(select(Corpus.id, Corpus.name, Corpus.change_seq, *columns))
        return [CorpusMark(int(i), str(n), int(s), CorpusSettings(*rest)) for i, n, s, *rest in rows]

    def count_documents(self, corpus: Corpus) -> int:
        """Number of documents in a corpus (a maintained counter, not a scan)."""
        return int(corpus.document_count)

    def delete(self, corpus: Corpus) -> None:
        """Delete a corpus and (by cascade) its documents and change log."""
        self.session.execute(delete(DocumentChange).where(DocumentChange.corpus_id == corpus.id))
        self.session.execute(delete(Document).where(Document.corpus_id == corpus.id))
        self.session.delete(corpus)

    def touch(self, corpus: Corpus) -> None:
        """Mark a corpus as changed now."""
        corpus.updated_at = utcnow()


class ChangeLog:
    """The document change log of one corpus: written with each document write, read by index followers."""

    def __init__(self, session: Session, corpus: Corpus) -> None:
        self.session = session
        self.corpus = corpus

    def record(self, changes: Sequence[tuple[Document, str]]) -> list[DocumentChange]:
        """Log (document, op) changes; moves the corpus's mark and wakes followers. Returns the entries,
        in the order given, numbered."""
        if not changes:
            return []
        rows = [
            DocumentChange(
                corpus_id=self.corpus.id,
                document_id=document.id,
                external_id=document.external_id,
                op=op,
                text_sha256=document.text_sha256 if op == "upsert" else None,
            )
            for document, op in changes
        ]
        self.session.add_all(rows)
        self.session.flush()
        self.corpus.change_seq = max(int(self.corpus.change_seq), *(int(row.seq) for row in rows))
        # Delivered at commit to every worker LISTENing; they poll as well, so a lost one is harmless.
        notify_changes(self.session, str(self.corpus.id))
        return rows

    def since(self, seq: int, limit: int = 10_000) -> list[DocumentChange]:
        """Changes after `seq`, oldest first, at most `limit` of them."""
        query = (
            select(DocumentChange)
            .where(DocumentChange.corpus_id == self.corpus.id, DocumentChange.seq > seq)
            .order_by(DocumentChange.seq)
            .limit(limit)
        )
        return list(self.session.scalars(query))
