"""SQL for a corpus's documents: reads by corpus id (the search path never loads the corpus row) and
writes that keep the corpus's document count and change log."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, defer

from app.db.metadata_filter import metadata_condition
from app.db.models import Corpus, Document, DocumentChange, utcnow
from app.db.repositories.corpora import ChangeLog


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


class DocumentReader:
    """Reads of the documents table, scoped to one corpus by its database id (no corpus row needed)."""

    def __init__(self, session: Session, corpus_id: int) -> None:
        self.session = session
        self.corpus_id = corpus_id

    def get(self, external_id: str) -> Document | None:
        """One document by external id."""
        return self.session.scalar(
            select(Document).where(Document.corpus_id == self.corpus_id, Document.external_id == external_id)
        )

    def get_many(self, external_ids: Sequence[str], *, with_text: bool = True) -> dict[str, Document]:
        """Documents by external id (missing ids are simply absent), fetched in chunks; without their
        texts unless `with_text` (an upsert compares hashes and never reads back what it was sent)."""
        found: dict[str, Document] = {}
        unique_ids = list(dict.fromkeys(external_ids))
        query = select(Document) if with_text else select(Document).options(defer(Document.text))
        for start in range(0, len(unique_ids), 500):
            chunk = unique_ids[start : start + 500]
            rows = self.session.scalars(
                query.where(Document.corpus_id == self.corpus_id, Document.external_id.in_(chunk))
            )
            found.update({row.external_id: row for row in rows})
        return found

    def by_ids(self, ids: Sequence[int]) -> dict[int, tuple[str, str]]:
        """Database id -> (external id, text) for the given ids (missing ids are absent)."""
        return documents_by_ids(self.session, self.corpus_id, ids)

    def _column_by_external_id(self, column: Any, external_ids: Sequence[str]) -> dict[str, Any]:
        found: dict[str, Any] = {}
        unique_ids = list(dict.fromkeys(external_ids))
        for start in range(0, len(unique_ids), 500):
            chunk = unique_ids[start : start + 500]
            rows = self.session.execute(select(Document.external_id, column).where(
                Document.corpus_id == self.corpus_id, Document.external_id.in_(chunk)))  # fmt: skip
            found.update((str(external_id), value) for external_id, value in rows)
        return found

    def ids_of(self, external_ids: Sequence[str]) -> dict[str, int]:
        """External id -> database id for the documents that exist (two columns, never whole rows)."""
        return self._column_by_external_id(Document.id, external_ids)

    def hashes_of(self, external_ids: Sequence[str]) -> dict[str, str]:
        """External id -> text hash for the documents that exist (what an upsert must encode)."""
        return self._column_by_external_id(Document.text_sha256, external_ids)

    def external_ids(self) -> set[str]:
        """Every external id of the corpus."""
        rows = self.session.scalars(select(Document.external_id).where(Document.corpus_id == self.corpus_id))
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
                .where(Document.corpus_id == self.corpus_id, Document.id > last_id)
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
        query = select(Document.id).where(Document.corpus_id == self.corpus_id)
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
            .where(Document.corpus_id == self.corpus_id, Document.id > after)
            .order_by(Document.id)
            .limit(limit)
        )
        return list(self.session.scalars(query))

    def iter_texts(self, batch_size: int = 1000) -> Iterator[list[tuple[str, str]]]:
        """All (external id, text) pairs of the corpus in batches, in id order."""
        for rows in self._keyset([Document.external_id, Document.text], batch_size):
            yield [(external_id, body) for _, external_id, body in rows]


class DocumentRepository(DocumentReader):
    """Reads and writes of one corpus's documents; writes keep the corpus row's count and change log."""

    def __init__(self, session: Session, corpus: Corpus) -> None:
        super().__init__(session, int(corpus.id))
        self.corpus = corpus

    def upsert(
        self, documents: Iterable[DocumentInput], existing: dict[str, Document]
    ) -> tuple[int, int, list[tuple[Document, DocumentChange]]]:
        """Insert new documents and update changed ones, logging text changes.

        Returns (inserted, updated, each document whose text (or language) is new or changed with its
        log entry).
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
        entries = ChangeLog(self.session, self.corpus).record([(row, "upsert") for row in changed])
        return inserted, updated, list(zip(changed, entries, strict=True))

    def delete(self, document: Document) -> int:
        """Delete one document, leaving a tombstone in the change log; returns the new mark."""
        (entry,) = ChangeLog(self.session, self.corpus).record([(document, "delete")])
        self.session.delete(document)
        self.corpus.document_count = int(self.corpus.document_count) - 1
        return int(entry.seq)
