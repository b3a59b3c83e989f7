"""Use cases on corpora and their documents: create, list, delete, all-or-nothing upserts."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy.exc import IntegrityError

from app.db.engine import transaction
from app.db.models import Corpus, Document
from app.db.repository import CorpusRepository, DocumentInput, DocumentRepository
from app.services.encoder import text_sha256
from app.services.errors import ConflictError, InvalidInputError, NotFoundError
from app.services.limits import check_count, check_text
from app.services.runtime import Runtime, ServingState
from indexes.bundle import delete_corpus_bundles


@dataclass(frozen=True)
class CorpusInfo:
    """A corpus as the API shows it."""

    name: str
    kind: str
    description: str | None
    document_count: int
    created_at: datetime
    updated_at: datetime
    duplicate_threshold: float | None = None
    threshold_model: str | None = None


@dataclass(frozen=True)
class DocumentInfo:
    """A document as the API shows it."""

    id: str
    text: str
    metadata: dict[str, Any] | None
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class UpsertCounts:
    """What an upsert did."""

    inserted: int
    updated: int
    unchanged: int
    document_count: int
    model: str


def _corpus_info(corpus: Corpus, count: int) -> CorpusInfo:
    return CorpusInfo(
        corpus.name,
        corpus.kind,
        corpus.description,
        count,
        corpus.created_at,
        corpus.updated_at,
        corpus.duplicate_threshold,
        corpus.threshold_model,
    )


def _document_info(document: Document) -> DocumentInfo:
    return DocumentInfo(
        document.external_id, document.text, document.meta, document.created_at, document.updated_at
    )


def corpus_not_found(name: str) -> NotFoundError:
    """The error for an unknown corpus name."""
    return NotFoundError(f"corpus {name!r} does not exist", field="name")


class CorpusService:
    """Corpora and documents, keeping the database and the corpus indexes in step."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.settings = runtime.settings

    def create_corpus(self, name: str, kind: str, description: str | None) -> CorpusInfo:
        """Create an empty corpus; ConflictError when the name is taken."""
        try:
            with transaction(self.runtime.sessions) as session:
                repository = CorpusRepository(session)
                if repository.get(name) is not None:
                    raise ConflictError(f"corpus {name!r} already exists", field="name")
                corpus = repository.add(name, kind, description)
        except IntegrityError as error:  # a concurrent create won the race for the unique name
            raise ConflictError(f"corpus {name!r} already exists", field="name") from error
        return _corpus_info(corpus, 0)

    def list_corpora(self) -> list[CorpusInfo]:
        """Every corpus with its document count."""
        with self.runtime.sessions() as session:
            return [_corpus_info(c, n) for c, n in CorpusRepository(session).list_with_counts()]

    def get_corpus(self, name: str) -> CorpusInfo:
        """One corpus with its document count."""
        with self.runtime.sessions() as session:
            repository = CorpusRepository(session)
            corpus = repository.get(name)
            if corpus is None:
                raise corpus_not_found(name)
            return _corpus_info(corpus, repository.count_documents(corpus))

    def delete_corpus(self, name: str) -> None:
        """Delete a corpus, its documents and its index bundles."""
        with self.runtime.write_gate.shared():
            with transaction(self.runtime.sessions) as session:
                repository = CorpusRepository(session)
                corpus = repository.get(name)
                if corpus is None:
                    raise corpus_not_found(name)
                repository.delete(corpus)
            if self.runtime.is_ready():
                self.runtime.state().indexes.drop(name)
            else:
                delete_corpus_bundles(self.settings.index_dir, name)

    def upsert_documents(
        self, name: str, documents: list[tuple[str, str, dict[str, Any] | None]]
    ) -> UpsertCounts:
        """Insert or update documents by id, all or nothing; only new or changed texts are encoded."""
        check_count("documents", documents, self.settings.max_documents_per_request, "documents")
        seen: set[str] = set()
        for position, (doc_id, text, _) in enumerate(documents):
            check_text(self.settings, f"documents[{position}].text", text)
            if doc_id in seen:
                raise InvalidInputError(
                    f"documents[{position}].id: duplicate id {doc_id!r} in the request", "id"
                )
            seen.add(doc_id)
        inputs = [DocumentInput(d, t, text_sha256(t), m) for d, t, m in documents]
        # Shared write gate first, then the state: a model swap can never slip between the two.
        with self.runtime.write_gate.shared():
            state = self.runtime.state()
            return self._upsert_locked(name, inputs, state)

    def _upsert_locked(self, name: str, inputs: list[DocumentInput], state: ServingState) -> UpsertCounts:
        with state.indexes.write_lock(name):
            with transaction(self.runtime.sessions) as session:
                corpus = CorpusRepository(session).get(name)
                if corpus is None:
                    raise corpus_not_found(name)
                repository = DocumentRepository(session, corpus)
                existing = repository.get_many([item.external_id for item in inputs])
                indexed = state.indexes.get(name).hashes()
                # Encode before writing: a model failure must leave the database untouched.
                to_encode = [item for item in inputs if indexed.get(item.external_id) != item.text_sha256]
                vectors = state.encoder.encode_bulk(
                    [item.text for item in to_encode], label=f"upsert into {name}"
                )
                inserted, updated = repository.upsert(inputs, existing)
                if inserted or updated:
                    CorpusRepository(session).touch(corpus)
                total = CorpusRepository(session).count_documents(corpus)
            state.indexes.apply_upsert(
                name, [i.external_id for i in to_encode], [i.text_sha256 for i in to_encode], vectors
            )
        return UpsertCounts(inserted, updated, len(inputs) - inserted - updated, total, state.model_version)

    def get_document(self, name: str, doc_id: str) -> DocumentInfo:
        """One document by id."""
        with self.runtime.sessions() as session:
            corpus = CorpusRepository(session).get(name)
            if corpus is None:
                raise corpus_not_found(name)
            document = DocumentRepository(session, corpus).get(doc_id)
            if document is None:
                raise NotFoundError(f"document {doc_id!r} does not exist in corpus {name!r}", field="id")
            return _document_info(document)

    def delete_document(self, name: str, doc_id: str) -> None:
        """Delete one document and its vector."""
        with self.runtime.write_gate.shared():
            self._delete_document_locked(name, doc_id, self.runtime.state())

    def _delete_document_locked(self, name: str, doc_id: str, state: ServingState) -> None:
        with state.indexes.write_lock(name):
            with transaction(self.runtime.sessions) as session:
                corpus = CorpusRepository(session).get(name)
                if corpus is None:
                    raise corpus_not_found(name)
                repository = DocumentRepository(session, corpus)
                document = repository.get(doc_id)
                if document is None:
                    raise NotFoundError(f"document {doc_id!r} does not exist in corpus {name!r}", field="id")
                repository.delete(document)
                CorpusRepository(session).touch(corpus)
            state.indexes.apply_remove(name, [doc_id])
