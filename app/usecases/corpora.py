"""Use cases on corpora and their documents: create, list, delete, all-or-nothing upserts."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from app.control.job_kinds import LANGUAGE
from app.control.job_queue import JobService
from app.control.language_job import submit_language_change
from app.core.defaults import DEFAULT_RANKING_BY_KIND
from app.core.errors import InvalidInputError, NotFoundError
from app.core.limits import check_count, check_text
from app.core.text_hash import text_sha256
from app.db.admin_models import Job
from app.db.corpus_lookup import corpus_not_found, document_not_found, require_corpus
from app.db.engine import transaction
from app.db.models import Corpus, Document
from app.db.repositories.corpora import CorpusRepository
from app.db.repositories.documents import KEEP_METADATA, DocumentInput, DocumentReader, DocumentRepository
from app.search.languages import document_languages
from app.serving.context import ServiceContext
from app.serving.state import ServingState
from app.stores.port import CorpusVectors, OwnChange, OwnWrite
from app.usecases.reranking import checked_ranking
from app.usecases.workbench.query_sets import queue_corpus_runs
from indexes.languages import MULTI, detect
from indexes.snapshot import delete_corpus_snapshots
from indexes.spec import IndexSpec


@dataclass(frozen=True)
class UpsertCounts:
    """What an upsert did."""

    inserted: int
    updated: int
    unchanged: int
    document_count: int
    model: str


def _in_language(inputs: list[DocumentInput], corpus_language: str) -> list[DocumentInput]:
    """The inputs as the locked corpus stores them, should a language job have switched its language
    since they were read: a `multi` corpus stores each one's language (detected if none), another none."""
    if corpus_language == MULTI:
        return [i if i.language else replace(i, language=detect(i.text).language) for i in inputs]
    return [replace(item, language=None) if item.language else item for item in inputs]


class CorpusService:
    """Corpora and documents, keeping the database and the corpus indexes in step."""

    def __init__(self, service: ServiceContext) -> None:
        self.service = service
        self.settings = service.settings

    def create_corpus(
        self,
        name: str,
        kind: str,
        description: str | None,
        index: dict[str, Any] | None = None,
        ranking: dict[str, Any] | None = None,
        language: str = "en",
        judgement_scale: str = "binary",
    ) -> Corpus:
        """Create an empty corpus (with an optional index spec, its ranking until calibrated: the kind's
        default unless given, and its language); ConflictError when the name is taken."""
        spec = None
        if index is not None:
            try:
                parsed = IndexSpec.from_dict(index)
                parsed.validate()
            except (TypeError, ValueError) as error:
                raise InvalidInputError(str(error), "index") from error
            spec = parsed.to_dict()
        ranking = checked_ranking(self.service, ranking, "ranking.rerank.model")
        with transaction(self.service.sessions) as session:
            default = ranking if ranking is not None else DEFAULT_RANKING_BY_KIND.get(kind)
            created = CorpusRepository(session).add(name, kind, description, spec, default, language)
            created.judgement_scale = judgement_scale
            session.flush()
            return created

    def set_ranking(self, name: str, ranking: dict[str, Any]) -> Corpus:
        """Replace a corpus's ranking (its first stage until calibrated, and its re-ranking stage: a
        registered cross-encoder, 404 unknown, 422 a bi-encoder); every process serves it at once."""
        checked = checked_ranking(self.service, ranking)
        with transaction(self.service.sessions) as session:
            corpus = require_corpus(session, name)
            corpus.default_ranking = checked
        queue_corpus_runs(self.service, name, "ranking change")  # its saved query sets, scored again
        return self.get_corpus(name)

    def list_corpora(self) -> list[Corpus]:
        """Every corpus (with its maintained document count), by name."""
        with self.service.sessions() as session:
            return CorpusRepository(session).all()

    def get_corpus(self, name: str) -> Corpus:
        """One corpus (with its maintained document count)."""
        with self.service.sessions() as session:
            return require_corpus(session, name)

    def delete_corpus(self, name: str) -> None:
        """Delete a corpus, its documents, its change log and its index snapshots."""
        with self.service.serving.write_gate.shared():
            with transaction(self.service.sessions) as session:
                repository = CorpusRepository(session)
                corpus = require_corpus(session, name, lock=True)
                corpus_id = corpus.id
                repository.delete(corpus)
            if self.service.serving.is_ready():
                self.service.serving.state().store.drop(corpus_id)
            else:
                delete_corpus_snapshots(self.settings.index_dir, corpus_id)

    def upsert_documents(
        self,
        name: str,
        documents: Sequence[tuple[str, str, dict[str, Any] | None, bool]],
        languages: Sequence[str | None] | None = None,
    ) -> UpsertCounts:
        """Insert or update (id, text, metadata, metadata given) documents, all or nothing; `languages`:
        each one's own language, if given (a `multi` corpus detects the others).

        Only new or changed texts are encoded; metadata that was not given is kept as stored.
        """
        check_count("documents", documents, self.settings.max_documents_per_request, "documents")
        for position, (_, text, _, _) in enumerate(documents):
            check_text(self.settings, f"documents[{position}].text", text)
        # Shared write gate first, then the state: a model swap can never slip between the two.
        with self.service.serving.write_gate.shared():
            state = self.service.serving.state()
            opened = state.store.get(name)
            # Encode before taking the corpus's locks, so that other writers and catch-ups wait only for
            # the write itself; a model failure leaves the database untouched. The language and the
            # stored hashes are read in one session (a one-document upsert is a handful of statements).
            with self.service.sessions() as session:
                corpus_language = CorpusRepository(session).language_of(name)
                ids = list(dict.fromkeys(doc[0] for doc in documents))
                stored = DocumentReader(session, opened.corpus_id).hashes_of(ids)
            if corpus_language is None:  # deleted by another worker since this one opened it
                raise corpus_not_found(name)
            own = document_languages(corpus_language, [text for _, text, _, _ in documents], languages)
            # An id given twice in one request: the later occurrence wins, as if sent in two requests.
            latest = {doc[0]: (*doc, lang) for doc, lang in zip(documents, own, strict=True)}
            inputs = [
                DocumentInput(d, t, text_sha256(t), m if given else KEEP_METADATA, lang)
                for d, t, m, given, lang in latest.values()
            ]
            encoded = self._encode(
                name, state, [i for i in inputs if stored.get(i.external_id) != i.text_sha256]
            )
            with opened.lock:
                return self._upsert_locked(name, inputs, state, opened, encoded)

    @staticmethod
    def _encode(name: str, state: ServingState, items: list[DocumentInput]) -> dict[str, np.ndarray]:
        vectors = state.encoder.encode_bulk([item.text for item in items], label=f"upsert into {name}")
        return {item.external_id: vector for item, vector in zip(items, vectors, strict=True)}

    def _upsert_locked(
        self,
        name: str,
        inputs: list[DocumentInput],
        state: ServingState,
        opened: CorpusVectors,
        encoded: dict[str, np.ndarray],
    ) -> UpsertCounts:
        with transaction(self.service.sessions) as session:
            corpus = require_corpus(session, name, lock=True)  # writers of one corpus take turns
            inputs = _in_language(inputs, corpus.language)
            repository = DocumentRepository(session, corpus)
            existing = repository.get_many([item.external_id for item in inputs], with_text=False)
            # The hashes again, under the lock: a text another writer changed (or deleted) since the
            # encode above is encoded now (rare, and small).
            late = [
                item
                for item in inputs
                if item.external_id not in encoded
                and (
                    item.external_id not in existing
                    or existing[item.external_id].text_sha256 != item.text_sha256
                )
            ]
            vector_of = {**encoded, **self._encode(name, state, late)} if late else encoded
            previous_mark = int(corpus.change_seq)
            inserted, updated, logged = repository.upsert(inputs, existing)
            if inserted or updated:
                CorpusRepository(session).touch(corpus)
            total = CorpusRepository(session).count_documents(corpus)
            # (A document whose language alone changed brings no vector: the write takes the log's way.)
            changes = [
                OwnChange(
                    document_id=row.id,
                    seq=int(entry.seq),
                    op="upsert",
                    text=row.text,
                    text_sha256=row.text_sha256,
                    language=row.language,
                    vector=vector_of.get(row.external_id),
                )
                for row, entry in logged
            ]
            written = OwnWrite(previous_mark, int(corpus.change_seq), tuple(changes))
            state.store.record_write(session, corpus, previous_mark, written.known())
        # Committed: the index follows (this write, and any other worker's before it).
        state.store.catch_up(opened, written)
        return UpsertCounts(inserted, updated, len(inputs) - inserted - updated, total, state.model_version)

    def set_language(self, name: str, language: str) -> Job:
        """Queue the change of a corpus's language: its lexical index is re-analysed in the background
        while queries go on (app/control/language_job.py); 409 when one is under way."""
        return submit_language_change(self.service.sessions, name, language)

    def language_job(self, name: str, job_id: str) -> Job:
        """One change-of-language job of a corpus."""
        info = JobService(self.service.sessions).get(job_id, LANGUAGE)
        if info.corpus_name != name:
            raise NotFoundError(f"language change {job_id!r} does not exist for corpus {name!r}", field="id")
        return info

    def index_status(self, name: str) -> dict[str, Any]:
        """This worker's index of the corpus: structure, size, memory, checkpoint, recall."""
        state = self.service.serving.state()
        opened = state.store.get(name)
        with self.service.sessions() as session:
            corpus = require_corpus(session, name)
            mark = int(corpus.change_seq)
        return {"model": state.model_version, **state.store.describe(opened, mark)}

    def list_documents(self, name: str, limit: int, after: int) -> tuple[list[Document], int | None]:
        """A page of documents in a stable order, and the cursor of the next page (None at the end).

        The cursor is the database id of the page's last document: pages never shift under inserts
        or deletes, and any number is a valid cursor.
        """
        with self.service.sessions() as session:
            corpus = require_corpus(session, name)
            rows = DocumentRepository(session, corpus).page(after, limit + 1)
        more = len(rows) > limit
        rows = rows[:limit]
        return rows, int(rows[-1].id) if more else None

    def export_documents(self, name: str) -> Iterator[str]:
        """Every document as one JSON line ({id, text, metadata, language if its own}), read page by page
        (404 checked first)."""
        with self.service.sessions() as session:
            require_corpus(session, name)
        return self._export_lines(name)

    def _export_lines(self, name: str) -> Iterator[str]:
        after = 0
        while True:
            with self.service.sessions() as session:
                corpus = CorpusRepository(session).get(name)
                if corpus is None:
                    return  # deleted while exporting: the stream simply ends
                rows = DocumentRepository(session, corpus).page(after, 1000)
            if not rows:
                return
            for row in rows:
                line = {"id": row.external_id, "text": row.text, "metadata": row.meta}
                if row.language is not None:  # a `multi` corpus's documents: imported back as they were
                    line["language"] = row.language
                yield json.dumps(line) + "\n"
            after = rows[-1].id

    def get_document(self, name: str, doc_id: str) -> Document:
        """One document by id."""
        with self.service.sessions() as session:
            corpus = require_corpus(session, name)
            document = DocumentRepository(session, corpus).get(doc_id)
            if document is None:
                raise document_not_found(name, doc_id)
            return document

    def delete_document(self, name: str, doc_id: str) -> None:
        """Delete one document and its vector."""
        with self.service.serving.write_gate.shared():
            state = self.service.serving.state()
            opened = state.store.get(name)
            with opened.lock:
                with transaction(self.service.sessions) as session:
                    corpus = require_corpus(session, name, lock=True)
                    repository = DocumentRepository(session, corpus)
                    document = repository.get(doc_id)
                    if document is None:
                        raise document_not_found(name, doc_id)
                    previous_mark = int(corpus.change_seq)
                    document_id = int(document.id)
                    seq = repository.delete(document)
                    CorpusRepository(session).touch(corpus)
                    state.store.record_write(session, corpus, previous_mark, {})
                written = OwnWrite(previous_mark, seq, (OwnChange(document_id, seq, "delete"),))
                state.store.catch_up(opened, written)
