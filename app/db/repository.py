"""The only layer that runs SQL: small repositories over one session each."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from app.db.models import Corpus, Document, utcnow


@dataclass(frozen=True)
class DocumentInput:
    """A document as sent by a client, with its text hash computed once."""

    external_id: str
    text: str
    text_sha256: str
    metadata: dict[str, Any] | None


class CorpusRepository:
    """Queries on the corpora table."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def add(self, name: str, kind: str, description: str | None) -> Corpus:
        """Insert a corpus; the caller's transaction surfaces a unique-name violation."""
        corpus = Corpus(name=name, kind=kind, description=description)
        self.session.add(corpus)
        self.session.flush()
        return corpus

    def get(self, name: str) -> Corpus | None:
        """The corpus with this name, or None."""
        return self.session.scalar(select(Corpus).where(Corpus.name == name))

    def list_with_counts(self) -> list[tuple[Corpus, int]]:
        """Every corpus with its document count, by name."""
        counts = (
            select(Document.corpus_id, func.count(Document.id).label("n"))
            .group_by(Document.corpus_id)
            .subquery()
        )
        rows = self.session.execute(
            select(Corpus, func.coalesce(counts.c.n, 0))
            .outerjoin(counts, counts.c.corpus_id == Corpus.id)
            .order_by(Corpus.name)
        )
        return [(corpus, int(count)) for corpus, count in rows]

    def change_stamps(self) -> dict[str, datetime]:
        """Corpus name -> last change time (every document write touches it)."""
        return {name: stamp for name, stamp in self.session.execute(select(Corpus.name, Corpus.updated_at))}

    def count_documents(self, corpus: Corpus) -> int:
        """Number of documents in a corpus."""
        return int(
            self.session.scalar(select(func.count(Document.id)).where(Document.corpus_id == corpus.id)) or 0
        )

    def delete(self, corpus: Corpus) -> None:
        """Delete a corpus and (by cascade) its documents."""
        self.session.execute(delete(Document).where(Document.corpus_id == corpus.id))
        self.session.delete(corpus)

    def touch(self, corpus: Corpus) -> None:
        """Mark a corpus as changed now."""
        corpus.updated_at = utcnow()


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

    def upsert(self, documents: Iterable[DocumentInput], existing: dict[str, Document]) -> tuple[int, int]:
        """Insert new documents and update changed ones; returns (inserted, updated)."""
        inserted = updated = 0
        for item in documents:
            row = existing.get(item.external_id)
            if row is None:
                self.session.add(
                    Document(
                        corpus_id=self.corpus.id,
                        external_id=item.external_id,
                        text=item.text,
                        text_sha256=item.text_sha256,
                        meta=item.metadata,
                    )
                )
                inserted += 1
            elif row.text_sha256 != item.text_sha256 or row.meta != item.metadata:
                row.text, row.text_sha256, row.meta = item.text, item.text_sha256, item.metadata
                row.updated_at = utcnow()
                updated += 1
        self.session.flush()
        return inserted, updated

    def delete(self, document: Document) -> None:
        """Delete one document."""
        self.session.delete(document)

    def hashes(self) -> dict[str, str]:
        """External id -> text hash for the whole corpus (cheap: no texts are read)."""
        rows = self.session.execute(
            select(Document.external_id, Document.text_sha256).where(Document.corpus_id == self.corpus.id)
        )
        return {external_id: digest for external_id, digest in rows}

    def texts(self, external_ids: Sequence[str]) -> dict[str, str]:
        """External id -> text for the given ids."""
        return {key: row.text for key, row in self.get_many(external_ids).items()}

    def iter_texts(self, batch_size: int = 1000) -> Iterator[list[tuple[str, str]]]:
        """All (external id, text) pairs of the corpus in batches, in id order."""
        last_id = 0
        while True:
            rows = self.session.execute(
                select(Document.id, Document.external_id, Document.text)
                .where(Document.corpus_id == self.corpus.id, Document.id > last_id)
                .order_by(Document.id)
                .limit(batch_size)
            ).all()
            if not rows:
                return
            last_id = rows[-1][0]
            yield [(external_id, text) for _, external_id, text in rows]
