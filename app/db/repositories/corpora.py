"""The only layer that runs SQL: small repositories over one session each."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.core.errors import ConflictError
from app.db.corpus_settings import CorpusSettings
from app.db.metadata_filter import metadata_condition
from app.db.models import Corpus, Document, DocumentChange, utcnow
from app.db.notifications import CHANGES_CHANNEL, notify_changes

__all__ = ["CHANGES_CHANNEL", "ChangeLog", "CorpusMark", "CorpusRepository", "DocumentRepository"]


class _Keep:
    """Marks an upsert that leaves a document's stored metadata as it is (the field was omitted)."""

    def __repr__(self) -> str:
        return "KEEP_METADATA"


KEEP_METADATA: Any = _Keep()


@dataclass(frozen=True)
class DocumentInput:
    """A document as sent by a client, with its text hash computed once."""

    external_id: str
    text: str
    text_sha256: str
    metadata: dict[str, Any] | None  # or KEEP_METADATA: keep what is stored (None for a new document)
    language: str | None = None  # its own (a `multi` corpus), None in a corpus of one language


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
        query = select(Corpus).where(Corpus.name == name)
        return self.session.scalar(query.with_for_update() if lock else query)

    def get_by_id(self, corpus_id: int, *, lock: bool = False) -> Corpus | None:
        """The corpus with this database id, or None; `lock` as in `get`."""
        return self.session.get(Corpus, corpus_id, with_for_update=lock)

    def all(self) -> list[Corpus]:
        """Every corpus (each with its maintained document count), by name."""
        return list(self.session.scalars(select(Corpus).order_by(Corpus.name)))

    def marks(self) -> list[CorpusMark]:
        """Every corpus's id, name, change mark and settings: one cheap query per sync, whatever the sizes."""
        columns = (Corpus.default_ranking, Corpus.ranking_calibration, Corpus.duplicate_threshold,
                   Corpus.threshold_model, Corpus.language)  # fmt: skip
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

    def record(self, changes: Sequence[tuple[Document, str]]) -> int:
        """Log (document, op) changes; moves the corpus's mark and wakes followers. Returns the new mark."""
        if not changes:
            return int(self.corpus.change_seq)
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
        return int(self.corpus.change_seq)

    def since(self, seq: int, limit: int = 10_000) -> list[DocumentChange]:
        """Changes after `seq`, oldest first, at most `limit` of them."""
        query = (
            select(DocumentChange)
            .where(DocumentChange.corpus_id == self.corpus.id, DocumentChange.seq > seq)
            .order_by(DocumentChange.seq)
            .limit(limit)
        )
        return list(self.session.scalars(query))


def documents_by_ids(session: Session, corpus_id: int, ids: Sequence[int]) -> dict[int, tuple[str, str]]:
    """Database id -> (external id, text) of a corpus's documents (missing ids are absent): one query
    per 500 ids, no corpus lookup, for the search path."""
    return {
        pk: (external_id, body)
        for pk, (external_id, body, _) in found_documents(session, corpus_id, ids).items()
    }


def found_documents(
    session: Session, corpus_id: int, ids: Sequence[int], metadata: bool = False
) -> dict[int, tuple[str, str, dict[str, Any] | None]]:
    """Database id -> (external id, text, metadata or None unless asked) of a corpus's documents."""
    found: dict[int, tuple[str, str, dict[str, Any] | None]] = {}
    unique = list(dict.fromkeys(int(i) for i in ids))
    columns = [Document.id, Document.external_id, Document.text] + ([Document.meta] if metadata else [])
    for start in range(0, len(unique), 500):
        rows = session.execute(
            select(*columns).where(
                Document.corpus_id == corpus_id, Document.id.in_(unique[start : start + 500])
            )
        )
        for row in rows:
            values: tuple[Any, ...] = tuple(row)
            found[int(values[0])] = (str(values[1]), str(values[2]), values[3] if metadata else None)
    return found


class DocumentRepository:
    """Queries on the documents table, always scoped to one corpus."""

    def __init__(self, session: Session, corpus: Corpus) -> None:
        self.session = session
        self.corpus = corpus

    def get(self, external_id: str) -> Document | None:
        """One document by external id."""
        return self.session.scalar(
            select(Document).where(Document.corpus_id == self.corpus.id, Document.external_id == external_id)
        )

    def get_many(self, external_ids: Sequence[str]) -> dict[str, Document]:
        """Documents by external id (missing ids are simply absent), fetched in chunks."""
        found: dict[str, Document] = {}
        unique_ids = list(dict.fromkeys(external_ids))
        for start in range(0, len(unique_ids), 500):
            chunk = unique_ids[start : start + 500]
            rows = self.session.scalars(
                select(Document).where(Document.corpus_id == self.corpus.id, Document.external_id.in_(chunk))
            )
            found.update({row.external_id: row for row in rows})
        return found

    def by_ids(self, ids: Sequence[int]) -> dict[int, tuple[str, str]]:
        """Database id -> (external id, text) for the given ids (missing ids are absent)."""
        return documents_by_ids(self.session, self.corpus.id, ids)

    def _column_by_external_id(self, column: Any, external_ids: Sequence[str]) -> dict[str, Any]:
        found: dict[str, Any] = {}
        unique_ids = list(dict.fromkeys(external_ids))
        for start in range(0, len(unique_ids), 500):
            chunk = unique_ids[start : start + 500]
            rows = self.session.execute(select(Document.external_id, column).where(
                Document.corpus_id == self.corpus.id, Document.external_id.in_(chunk)))  # fmt: skip
            found.update((str(external_id), value) for external_id, value in rows)
        return found

    def ids_of(self, external_ids: Sequence[str]) -> dict[str, int]:
        """External id -> database id for the documents that exist (two columns, never whole rows)."""
        return self._column_by_external_id(Document.id, external_ids)

    def hashes_of(self, external_ids: Sequence[str]) -> dict[str, str]:
        """External id -> text hash for the documents that exist (what an upsert must encode)."""
        return self._column_by_external_id(Document.text_sha256, external_ids)

    def upsert(
        self, documents: Iterable[DocumentInput], existing: dict[str, Document]
    ) -> tuple[int, int, list[Document]]:
        """Insert new documents and update changed ones, logging text changes.

        Returns (inserted, updated, documents whose text is new or changed).
        """
        inserted = updated = 0
        changed: list[Document] = []
        for item in documents:
            row = existing.get(item.external_id)
            if row is None:
                row = Document(
                    corpus_id=self.corpus.id,
                    external_id=item.external_id,
                    text=item.text,
                    text_sha256=item.text_sha256,
                    meta=None if item.metadata is KEEP_METADATA else item.metadata,
                    language=item.language,
                )
                self.session.add(row)
                changed.append(row)
                inserted += 1
            else:
                metadata = row.meta if item.metadata is KEEP_METADATA else item.metadata
                same_text = row.text_sha256 == item.text_sha256
                if same_text and row.meta == metadata and row.language == item.language:
                    continue
                # A new language changes the lexical analysis: logged like a new text (the vector follows).
                if not same_text or row.language != item.language:
                    changed.append(row)
                row.text, row.text_sha256, row.meta = item.text, item.text_sha256, metadata
                row.language = item.language
                row.updated_at = utcnow()
                updated += 1
        self.session.flush()
        self.corpus.document_count = int(self.corpus.document_count) + inserted
        ChangeLog(self.session, self.corpus).record([(row, "upsert") for row in changed])
        return inserted, updated, changed

    def delete(self, document: Document) -> int:
        """Delete one document, leaving a tombstone in the change log; returns the new mark."""
        mark = ChangeLog(self.session, self.corpus).record([(document, "delete")])
        self.session.delete(document)
        self.corpus.document_count = int(self.corpus.document_count) - 1
        return mark

    def external_ids(self) -> set[str]:
        """Every external id of the corpus."""
        rows = self.session.scalars(select(Document.external_id).where(Document.corpus_id == self.corpus.id))
        return set(rows)

    def texts(self, external_ids: Sequence[str]) -> dict[str, str]:
        """External id -> text for the given ids."""
        return {key: row.text for key, row in self.get_many(external_ids).items()}

    def _keyset(self, columns: Sequence[Any], batch_size: int) -> Iterator[list[Any]]:
        """Rows (database id first) of the whole corpus in batches, in id order (keyset paging)."""
        last_id = 0
        while True:
            rows = self.session.execute(
                select(Document.id, *columns)
                .where(Document.corpus_id == self.corpus.id, Document.id > last_id)
                .order_by(Document.id)
                .limit(batch_size)
            ).all()
            if not rows:
                return
            last_id = rows[-1][0]
            yield list(rows)

    def iter_indexable(self, batch_size: int = 1000) -> Iterator[list[tuple[int, str]]]:
        """All (database id, text) pairs of the corpus in batches, in id order."""
        for rows in self._keyset([Document.text], batch_size):
            yield [(int(pk), body) for pk, body in rows]

    def ids_matching(
        self, conditions: dict[str, Any], limit: int | None = None, language: str | None = None
    ) -> list[int]:
        """Database ids of the documents whose metadata matches every filter key, and whose own language
        is `language` when given (ids ascending)."""
        dialect = self.session.get_bind().dialect.name
        query = select(Document.id).where(Document.corpus_id == self.corpus.id)
        if language is not None:
            query = query.where(Document.language == language)
        for key, wanted in conditions.items():
            query = query.where(metadata_condition(dialect, key, wanted))
        query = query.order_by(Document.id)
        if limit is not None:
            query = query.limit(limit)
        return [int(row) for row in self.session.scalars(query)]

    def page(self, after: int, limit: int) -> list[Document]:
        """Up to `limit` documents with a database id above `after`, in id order (keyset paging)."""
        query = (
            select(Document)
            .where(Document.corpus_id == self.corpus.id, Document.id > after)
            .order_by(Document.id)
            .limit(limit)
        )
        return list(self.session.scalars(query))

    def iter_texts(self, batch_size: int = 1000) -> Iterator[list[tuple[str, str]]]:
        """All (external id, text) pairs of the corpus in batches, in id order."""
        for rows in self._keyset([Document.external_id, Document.text], batch_size):
            yield [(external_id, body) for _, external_id, body in rows]
