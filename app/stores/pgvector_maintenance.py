"""Background upkeep of the pgvector store: HNSW graphs when a space grows, BM25 saves, status, and
dropping retired models' spaces after an activation (a mixin of `PgVectorStore`)."""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Engine
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session, sessionmaker

from app.db.engine import transaction
from app.db.repositories.vectors import VectorRepository, hnsw_index_name
from app.db.vector_schema import build_hnsw, drop_hnsw_index
from app.stores.lexical_store import lexical_status, save_lexical
from app.stores.opened import checkpoint_due
from app.stores.pgvector_corpus import PgCorpus

log = logging.getLogger(__name__)
# Below this many vectors a sequential scan of the space is exact and about as fast as HNSW (a few
# ms); above it the space gets its HNSW graph (benchmarks/vector_stores.md).
HNSW_FROM_ROWS = 10_000


class SpaceMaintenance:
    """What the checkpoint loop, `GET .../index` and activations ask of the pgvector store."""

    root: Path
    sessions: sessionmaker[Session]
    version: str
    dimension: int

    @property
    def engine(self) -> Engine:
        """The database engine (index builds run outside transactions)."""
        bind = self.sessions.kw["bind"]
        assert isinstance(bind, Engine)
        return bind

    def opened(self) -> list[PgCorpus]:
        """The corpora this process has opened (the store's)."""
        raise NotImplementedError

    def _wants_hnsw(self, opened: PgCorpus) -> bool:
        return opened.spec.type != "flat" and not opened.hnsw and opened.size() >= HNSW_FROM_ROWS

    def due(self, max_changes: int, max_seconds: float) -> list[PgCorpus]:
        """Corpora that need their HNSW graph, or whose BM25 index has unsaved changes due."""
        now = datetime.now(UTC)
        return [
            opened
            for opened in self.opened()
            if self._wants_hnsw(opened) or checkpoint_due(opened, max_changes, max_seconds, now)
        ]

    def checkpoint(self, opened: PgCorpus) -> bool:
        """Build the space's HNSW graph when due (never blocking writes) and save the BM25 index."""
        if self._wants_hnsw(opened):
            started = time.monotonic()
            try:
                build_hnsw(
                    self.engine, opened.space, opened.spec.m, opened.spec.ef_construction, opened.storage
                )
            except DBAPIError:
                log.warning("vectors %s: HNSW build raced another process; kept exact search", opened.name)
                return False
            opened.hnsw = True
            log.info("vectors %s: HNSW built (%.1f s)", opened.name, time.monotonic() - started)
        pending = opened.changes_since_checkpoint
        save_lexical(self.root, opened.corpus_id, opened.lexical)
        opened.changes_since_checkpoint = max(0, opened.changes_since_checkpoint - pending)
        opened.last_checkpoint = datetime.now(UTC)
        return True

    def describe(self, opened: PgCorpus, corpus_mark: int) -> dict[str, Any]:
        """What GET /v1/corpora/{name}/index shows."""
        with self.sessions() as session:
            repository = VectorRepository(session)
            space = repository.space(opened.corpus_id, self.version) or opened.space
            size = repository.count(space)
            database_bytes = repository.hnsw_bytes(space)
        return {
            "store": "pgvector",
            "spec": opened.spec.to_dict(),
            "structure": "hnsw" if opened.hnsw else "flat",
            "storage": opened.storage,
            "size": size,
            "dimension": self.dimension,
            "mapped_bytes": 0,
            "memory_bytes": 0,
            "last_checkpoint": opened.last_checkpoint,
            "checkpoint_seconds": None,
            "high_water_mark": space.hwm,
            "corpus_change_seq": corpus_mark,
            "changes_since_checkpoint": opened.changes_since_checkpoint,
            "recall_at_10": None if opened.hnsw else 1.0,
            "lexical": lexical_status(opened.lexical),
            "database_bytes": database_bytes,
        }

    def activated(self, previous_version: str | None) -> None:
        """Drop the spaces of models other than this one and the previous (kept for rollback)."""
        keep = [self.version] + ([previous_version] if previous_version else [])
        with transaction(self.sessions) as session:
            repository = VectorRepository(session)
            retired = repository.spaces_of_other_models(keep)
            for space in retired:
                repository.delete_space(space)
        for space in retired:
            try:
                drop_hnsw_index(self.engine, hnsw_index_name(space))
            except DBAPIError:
                log.warning("could not drop %s; it is unused", hnsw_index_name(space))
        if retired:
            log.info("vectors: %d spaces of retired models dropped (kept %s)", len(retired), keep)
