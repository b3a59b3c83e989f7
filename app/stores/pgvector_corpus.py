"""One corpus of the pgvector store: its space for the serving model, and this process's BM25 index."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
from sqlalchemy.orm import Session, sessionmaker

from app.db.corpus_settings import CorpusSettings
from app.db.repositories.corpora import CorpusRepository
from app.db.repositories.vectors import Space, VectorRepository
from app.stores.port import Hits
from indexes.lexical import LexicalIndex
from indexes.spec import IndexSpec

EF_SEARCH_LIMIT = 1000  # pgvector's largest hnsw.ef_search: deeper searches are exact scans


@dataclass
class PgCorpus:
    """A corpus's vectors in PostgreSQL, searched through its own sessions (it needs no store)."""

    corpus_id: int
    name: str
    space: Space
    spec: IndexSpec
    sessions: sessionmaker[Session]
    lexical: LexicalIndex = field(default_factory=LexicalIndex)
    lock: threading.RLock = field(default_factory=threading.RLock)
    hnsw: bool = False
    changes_since_checkpoint: int = 0
    last_checkpoint: datetime | None = None
    settings: CorpusSettings = field(default_factory=CorpusSettings)
    storage: str = "vector"  # what its HNSW graph holds: the spec's, where this pgvector supports it

    def search(self, queries: np.ndarray, k: int) -> list[Hits]:
        """Top k per query: HNSW with ef_search >= k where the space has its graph, else exact."""
        ef = max(self.spec.ef_search, k) if self.hnsw else None
        if ef is not None and ef > EF_SEARCH_LIMIT:
            ef = None
        with self.sessions() as session:
            return VectorRepository(session).search(self.space, queries, k, ef, self.storage)

    def search_one(self, vector: np.ndarray, k: int) -> Hits:
        """Top k for one query."""
        return self.search(np.asarray(vector)[None, :], k)[0]

    def size(self) -> int:
        """Documents of the corpus (the maintained count: every one has a vector once caught up)."""
        with self.sessions() as session:
            corpus = CorpusRepository(session).get_by_id(self.corpus_id)
            return int(corpus.document_count) if corpus is not None else 0
