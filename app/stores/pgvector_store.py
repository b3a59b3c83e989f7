"""The pgvector adapter of the vector-store port: vectors live in PostgreSQL beside their documents.

A worker keeps no vector state: every request reads the corpus's change mark and the space's mark in
one query and searches the database, so replicas see each other's writes at once. A writer stores the
vectors of the texts it changed in the same transaction as the documents (text and vector never
disagree) and moves the space's mark with the corpus's. A process serving another model (during a
swap, or a rollback to a kept model) replays the change log after its space's mark, encoding only the
documents whose stored vector is not of their current text; the vector writes and the mark move under
the corpus row's lock, the same lock writers take, so a slow replay never overwrites a newer vector.
The BM25 index is still per process (docs/guides/scaling.md), caught up on the same per-request check.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy.orm import Session, sessionmaker

from app.core.text_hash import text_sha256
from app.db.corpus_lookup import corpus_not_found, require_corpus
from app.db.corpus_settings import CorpusSettings
from app.db.engine import transaction
from app.db.models import Corpus
from app.db.repositories.corpora import ChangeLog, CorpusMark, CorpusRepository
from app.db.repositories.documents import DocumentRepository
from app.db.repositories.vectors import Space, VectorRepository, copy_rows
from app.db.vector_schema import (
    QUANTIZED_GRAPHS_FROM,
    drop_hnsw_indexes,
    ensure_vector_schema,
    pgvector_version,
)
from app.stores.lexical_store import follow_language, lexical_operations, open_lexical, own_languages
from app.stores.opened import OpenedCorpora
from app.stores.pgvector_corpus import PgCorpus
from app.stores.pgvector_maintenance import SpaceMaintenance
from app.stores.port import KnownVectors, OwnWrite
from indexes.snapshot import delete_corpus_snapshots
from indexes.spec import IndexSpec

log = logging.getLogger(__name__)
_LOG_PAGE = 5000
_BUILD_BATCH = 2048


class PgVectorStore(SpaceMaintenance):
    """Every corpus's vectors for one encoder, in PostgreSQL."""

    def __init__(self, root: Path, encoder: Any, sessions: sessionmaker[Session]) -> None:
        self.root = root
        self.encoder = encoder
        self.sessions = sessions
        self.version: str = encoder.version
        self.dimension = int(encoder.dimension)
        self._corpora: OpenedCorpora[PgCorpus] = OpenedCorpora()
        with transaction(sessions) as session:
            ensure_vector_schema(session.connection())
            self.quantized_graphs = pgvector_version(session.connection()) >= QUANTIZED_GRAPHS_FROM

    # --- opening ---------------------------------------------------------------------------------
    def open_all(self, on_corpus: Callable[[int, int, str], None] | None = None) -> None:
        """Build (or resume) every corpus's space for this model; `on_corpus(done, total, name)` first."""
        self._corpora.open_all(self.sessions, self._load, on_corpus)

    def get(self, name: str) -> PgCorpus:
        """The corpus, caught up with every committed write (one query when nothing changed)."""
        with self.sessions() as session:
            fresh = VectorRepository(session).freshness(name, self.version)
        if fresh is None:
            raise corpus_not_found(name)
        opened = self._corpora.find(fresh.corpus_id)
        if opened is None:
            return self._corpora.open(fresh.corpus_id, self._load)
        if fresh.space is None or not fresh.space.ready:
            self.forget(fresh.corpus_id)  # retired by an activation elsewhere: rebuild
            return self._corpora.open(fresh.corpus_id, self._load)
        if min(fresh.space.hwm, opened.lexical.hwm) < fresh.change_seq:
            self.catch_up(opened)
        return opened

    def opened(self) -> list[PgCorpus]:
        """The corpora this process has opened."""
        return self._corpora.all()

    def _load(self, corpus_id: int) -> PgCorpus:
        with transaction(self.sessions) as session:
            corpus = require_corpus(session, corpus_id)
            name, spec, mark = corpus.name, IndexSpec.from_dict(corpus.index_spec), int(corpus.change_seq)
            settings = CorpusSettings.of(corpus)
            space = VectorRepository(session).create_space(corpus_id, self.version, self.dimension)
        started = time.monotonic()
        if not space.ready:
            space = self._build(space, name, mark)
        storage = self._storage(name, spec)
        opened = PgCorpus(corpus_id, name, space, spec, self.sessions, settings=settings, storage=storage)
        opened.lexical = open_lexical(self.root, self.sessions, corpus_id, name, mark, settings.language)
        self.catch_up(opened)
        with self.sessions() as session:
            opened.hnsw = VectorRepository(session).has_hnsw(space)
        if self._wants_hnsw(opened):
            self.checkpoint(opened)
        log.info("vectors %s: space %d ready (%.1f s)", name, space.id, time.monotonic() - started)
        return opened

    def _storage(self, name: str, spec: IndexSpec) -> str:
        if spec.storage != "vector" and not self.quantized_graphs:
            # The corpus still works, with a float32 graph; the status shows which one it got.
            log.warning(
                "vectors %s: %s needs pgvector >= 0.7; its graph holds float32 vectors", name, spec.storage
            )
            return "vector"
        return spec.storage

    def _build(self, space: Space, name: str, mark: int) -> Space:
        # Resumable: only documents without a vector of their current text are encoded, batch by batch,
        # each committed; documents changed after `mark` are replayed from the log afterwards.
        after = 0
        while True:
            with self.sessions() as session:
                batch = VectorRepository(session).stale_documents(space, after, _BUILD_BATCH)
            if not batch:
                break
            vectors = self.encoder.encode_bulk([body for _, _, body in batch], label=f"corpus {name}")
            with transaction(self.sessions) as session:
                copy_rows(session, space, [(d, h, v) for (d, h, _), v in zip(batch, vectors, strict=True)])
            after = batch[-1][0]
        with transaction(self.sessions) as session:
            repository = VectorRepository(session)
            repository.mark_ready(space, mark)
            ready = repository.space(space.corpus_id, space.model_version)
        assert ready is not None
        return ready

    # --- writes and the log ----------------------------------------------------------------------
    def record_write(self, session: Session, corpus: Corpus, previous_mark: int, known: KnownVectors) -> None:
        """In the writer's transaction: the new texts' vectors, and the mark if it stood at the last write."""
        opened = self._corpora.find(int(corpus.id))
        if opened is None:
            return  # not opened by this process: readers replay the log
        repository = VectorRepository(session)
        repository.upsert(opened.space, [(d, sha, vector) for d, (sha, vector) in known.items()])
        repository.advance(opened.space.id, int(corpus.change_seq), only_from=previous_mark)

    def catch_up(self, opened: PgCorpus, written: OwnWrite | None = None) -> int:
        """Replay the log after the space's (and the BM25 index's) mark; returns entries applied (a
        writer's own vectors are in the rows already: `record_write`)."""
        applied = 0
        with opened.lock:
            while True:
                entries, need, texts, space_mark = self._pending(opened)
                if not entries:
                    return applied
                encoded = [(d, texts[d][1]) for d in need if d in texts]
                vectors = self.encoder.encode_bulk([t for _, t in encoded], label=f"changes to {opened.name}")
                last = int(entries[-1].seq)
                with transaction(self.sessions) as session:
                    if CorpusRepository(session).get_by_id(opened.corpus_id, lock=True) is None:
                        return applied
                    repository = VectorRepository(session)
                    current = repository.document_hashes([d for d, _ in encoded])
                    rows = [(d, text_sha256(t), v) for (d, t), v in zip(encoded, vectors, strict=True)]
                    # A text changed again since it was read: its newer entry is replayed next round.
                    repository.upsert(opened.space, [r for r in rows if current.get(r[0]) == r[1]])
                    if last > space_mark:
                        repository.advance(opened.space.id, last)
                lexical_entries = {e.document_id: e for e in entries if e.seq > opened.lexical.hwm}
                upserts, deletes = lexical_operations(lexical_entries, texts)
                languages = own_languages(self.sessions, opened.corpus_id, opened.lexical, lexical_entries)
                opened.lexical.apply(upserts, deletes, hwm=last, languages=languages)
                opened.changes_since_checkpoint += len(lexical_entries)
                applied += len(entries)
                if len(entries) < _LOG_PAGE:
                    return applied

    def _pending(self, opened: PgCorpus) -> tuple[list[Any], list[int], dict[int, tuple[str, str]], int]:
        """(log entries after the lower mark, documents to encode, texts wanted, the space's mark)."""
        with self.sessions() as session:
            corpus = CorpusRepository(session).get_by_id(opened.corpus_id)
            repository = VectorRepository(session)
            space = repository.space(opened.corpus_id, self.version)
            if corpus is None or space is None:
                return [], [], {}, 0
            entries = ChangeLog(session, corpus).since(min(space.hwm, opened.lexical.hwm), _LOG_PAGE)
            final = {e.document_id: e for e in entries if e.seq > space.hwm and e.op == "upsert"}
            stored = repository.hashes(space, list(final))
            need = [d for d, e in final.items() if stored.get(d) != e.text_sha256]
            wanted = set(need) | {e.document_id for e in entries if e.seq > opened.lexical.hwm}
            texts = DocumentRepository(session, corpus).by_ids(sorted(wanted))
        return entries, need, texts, int(space.hwm)

    def follow(self, marks: list[CorpusMark] | None = None) -> None:
        """Catch up every opened corpus that another process wrote to (requests check for themselves)."""
        if marks is None:
            with self.sessions() as session:
                marks = CorpusRepository(session).marks()
        settings = {mark.id: mark.settings for mark in marks}
        for opened in self.opened():
            opened.settings = settings.get(opened.corpus_id, opened.settings)
            with self.sessions() as session:
                repository = VectorRepository(session)
                fresh = repository.freshness(opened.name, self.version)
                opened.hnsw = repository.has_hnsw(opened.space)
            if fresh is None or fresh.corpus_id != opened.corpus_id:
                self.forget(opened.corpus_id)
            elif fresh.space is None or min(fresh.space.hwm, opened.lexical.hwm) < fresh.change_seq:
                self.catch_up(opened)
            if fresh is not None and fresh.corpus_id == opened.corpus_id:
                follow_language(self.root, self.sessions, opened, opened.settings.language)

    def forget(self, corpus_id: int) -> None:
        """Drop a corpus from this process's memory."""
        self._corpora.forget(corpus_id)

    def drop(self, corpus_id: int) -> None:
        """After a corpus's deletion (its rows went with it): its HNSW indexes and BM25 files."""
        self.forget(corpus_id)
        drop_hnsw_indexes(self.engine, corpus_id)
        delete_corpus_snapshots(self.root, corpus_id)

    # --- reads -----------------------------------------------------------------------------------
    def present_vectors(self, opened: PgCorpus, doc_ids: Sequence[int]) -> tuple[list[int], np.ndarray]:
        """(ids found, their vectors): documents deleted meanwhile are left out."""
        with self.sessions() as session:
            found = VectorRepository(session).vectors(opened.space, doc_ids)
        present = [d for d in doc_ids if d in found]
        matrix = (
            np.stack([found[d] for d in present]) if present else np.zeros((0, self.dimension), np.float32)
        )
        return present, matrix

    def vectors_of(self, opened: PgCorpus, doc_ids: Sequence[int]) -> np.ndarray:
        """Stored vectors of documents; KeyError naming a missing one."""
        present, matrix = self.present_vectors(opened, doc_ids)
        if len(present) < len(doc_ids):
            self.catch_up(opened)
            present, matrix = self.present_vectors(opened, doc_ids)
            if len(present) < len(doc_ids):
                raise KeyError(next(d for d in doc_ids if d not in set(present)))
        return matrix
