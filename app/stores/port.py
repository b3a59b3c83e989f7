"""The vector-store port: what ranking, duplicates, evaluation, calibration and swaps may use.

Two adapters implement it: `FaissStore` (Faiss indexes in this process, kept in step with the change
log: the embedded default) and `PgVectorStore` (vectors in PostgreSQL rows beside their documents,
searched with pgvector: stateless replicas). The port knows neither: `PAIRANK_VECTOR_STORE` chooses
and `app.stores.factory.open_store` builds one. One contract suite
(tests/stores/test_vector_store_contract.py) runs against both.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import numpy as np
from sqlalchemy.orm import Session

from app.db.corpus_settings import CorpusSettings
from indexes.lexical import LexicalIndex

if TYPE_CHECKING:
    from app.db.models import Corpus
    from app.db.repositories.corpora import CorpusMark

Hits = list[tuple[int, float]]  # (database document id, cosine), best first
KnownVectors = dict[int, tuple[str, np.ndarray]]  # document id -> (text hash, vector) encoded by a writer


@dataclass(frozen=True)
class OwnChange:
    """One log entry a writer just committed, with what it holds for it (upserts: text and vector)."""

    document_id: int
    seq: int
    op: str  # "upsert" or "delete"
    text: str | None = None
    text_sha256: str | None = None
    language: str | None = None
    vector: np.ndarray | None = None  # None: not encoded by the writer (its text did not change)


@dataclass(frozen=True)
class OwnWrite:
    """A committed write's own log entries: writers of a corpus take turns (`CorpusRepository.get` with
    `lock`: PostgreSQL's row lock, SQLite's write lock), so the entries after `previous_mark` up to
    `mark` are these and no others."""

    previous_mark: int
    mark: int
    changes: tuple[OwnChange, ...]

    def known(self) -> KnownVectors:
        """The vectors the writer encoded, by document id (the log's way uses them instead of encoding)."""
        return {
            c.document_id: (c.text_sha256, c.vector)
            for c in self.changes
            if c.vector is not None and c.text_sha256 is not None
        }

    def complete(self) -> bool:
        """True when every upsert brings its text and vector: the write can be applied as it is."""
        return all(c.op == "delete" or (c.vector is not None and c.text is not None) for c in self.changes)


class CorpusVectors(Protocol):
    """One corpus's searchable vectors (and its BM25 index) for the serving model."""

    corpus_id: int
    name: str
    lexical: LexicalIndex
    lock: threading.RLock  # orders this process's writes and catch-ups of the corpus
    changes_since_checkpoint: int
    last_checkpoint: datetime | None
    settings: CorpusSettings  # the row's rankings and threshold: requests read them here, not the row

    def search(self, queries: np.ndarray, k: int) -> list[Hits]:
        """Top k (id, cosine) per query row, best first."""

    def search_one(self, vector: np.ndarray, k: int) -> Hits:
        """Top k for one query (concurrent single queries may be answered together)."""

    def size(self) -> int:
        """Number of searchable vectors."""


Handle = TypeVar("Handle", bound=CorpusVectors)


class VectorStore(Protocol[Handle]):
    """Every corpus's vectors for one encoder; `Handle` is the adapter's own corpus handle."""

    def open_all(self, on_corpus: Callable[[int, int, str], None] | None = None) -> None:
        """Make every corpus searchable with this encoder; `on_corpus(done, total, name)` before each."""

    def get(self, name: str) -> Handle:
        """The corpus's vectors, current with every committed write (NotFoundError if no such corpus)."""

    def opened(self) -> list[Handle]:
        """The corpora this store has opened."""

    def record_write(self, session: Session, corpus: Corpus, previous_mark: int, known: KnownVectors) -> None:
        """Inside a document write's transaction: store what belongs beside the documents."""

    def catch_up(self, opened: Handle, written: OwnWrite | None = None) -> int:
        """Apply every committed change not yet applied; returns how many were applied. `written`: the
        caller's own write, just committed (an adapter may apply it without reading it back)."""

    def follow(self, marks: list[CorpusMark] | None = None) -> None:
        """Apply other processes' writes (and settings) to every opened corpus; `marks`: read already."""

    def forget(self, corpus_id: int) -> None:
        """Drop a deleted corpus from memory."""

    def drop(self, corpus_id: int) -> None:
        """Forget a deleted corpus and delete whatever this store kept for it."""

    def due(self, max_changes: int, max_seconds: float) -> list[Handle]:
        """Corpora whose background maintenance (snapshot, index build) is due."""

    def checkpoint(self, opened: Handle) -> bool:
        """Run that maintenance now; False when another process is doing it."""

    def describe(self, opened: Handle, corpus_mark: int) -> dict[str, Any]:
        """What GET /v1/corpora/{name}/index shows."""

    def present_vectors(self, opened: Handle, doc_ids: Sequence[int]) -> tuple[list[int], np.ndarray]:
        """(ids found, their vectors): documents deleted meanwhile are left out."""

    def vectors_of(self, opened: Handle, doc_ids: Sequence[int]) -> np.ndarray:
        """Stored vectors of documents (KeyError when one is missing)."""

    def activated(self, previous_version: str | None) -> None:
        """After this store's model became the active one: release what older models kept."""
