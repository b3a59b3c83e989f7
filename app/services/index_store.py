"""Per-corpus Faiss indexes for one model: loaded from bundles, reconciled with the database, persisted.

The database is the source of truth; an index bundle is a cache of its documents' vectors. At start-up
each corpus's bundle is loaded when its manifest names the active model, then reconciled by text hash,
so only documents that changed while the service was down (or a crash interrupted) are re-encoded.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

import numpy as np
from sqlalchemy.orm import Session, sessionmaker

from app.db.repository import CorpusRepository, DocumentRepository
from app.services.encoder import Encoder
from indexes.bundle import ModelIdentity, bundle_dir, delete_corpus_bundles, load_bundle, save_bundle
from indexes.vector_index import VectorIndex

log = logging.getLogger(__name__)


class IndexStore:
    """The indexes of every corpus for one encoder, with a write lock per corpus."""

    def __init__(self, root: Path, encoder: Encoder, factory: str) -> None:
        self.root = root
        self.encoder = encoder
        self.factory = factory
        self.identity = ModelIdentity(
            model_id=encoder.spec.model_id,
            model_version=encoder.version,
            weights_sha256=encoder.spec.weights_sha256,
            dimension=encoder.dimension,
        )
        self._indexes: dict[str, VectorIndex] = {}
        self._write_locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()
        self._seen_stamps: dict[str, datetime] = {}

    def write_lock(self, corpus: str) -> threading.Lock:
        """The lock that serializes writes (database commit + index update) to one corpus."""
        with self._guard:
            return self._write_locks.setdefault(corpus, threading.Lock())

    def get(self, corpus: str) -> VectorIndex:
        """The corpus's index, empty if it has none yet."""
        with self._guard:
            index = self._indexes.get(corpus)
            if index is None:
                index = self._indexes[corpus] = VectorIndex(self.identity.dimension, self.factory)
            return index

    def open_all(self, sessions: sessionmaker[Session]) -> None:
        """Load or build the index of every corpus in the database."""
        with sessions() as session:
            names = [corpus.name for corpus, _ in CorpusRepository(session).list_with_counts()]
        for name in names:
            self.open_corpus(name, sessions)

    def open_corpus(self, corpus: str, sessions: sessionmaker[Session]) -> VectorIndex:
        """Load the corpus's bundle if it matches the model, then reconcile it with the database."""
        folder = bundle_dir(self.root, corpus, self.identity)
        loaded = load_bundle(folder, self.identity)
        index = loaded or VectorIndex(self.identity.dimension, self.factory)
        with self._guard:
            self._indexes[corpus] = index
        with self.write_lock(corpus):
            changed = self._reconcile(corpus, index, sessions)
            if changed or loaded is None:
                self.persist(corpus)
        log.info(
            "index %s: %d documents (%s, %d re-encoded)",
            corpus,
            len(index),
            "loaded" if loaded is not None else "built",
            changed,
        )
        return index

    def refresh_all(self, sessions: sessionmaker[Session]) -> None:
        """Bring every index in step with the database: reconcile open ones, open new ones, drop deleted."""
        with sessions() as session:
            names = {corpus.name for corpus, _ in CorpusRepository(session).list_with_counts()}
        with self._guard:
            opened = set(self._indexes)
        for name in opened - names:
            self.drop(name)
        for name in names - opened:
            self.open_corpus(name, sessions)
        for name in names & opened:
            with self.write_lock(name):
                if self._reconcile(name, self.get(name), sessions):
                    self.persist(name)

    def follow_database(self, sessions: sessionmaker[Session]) -> None:
        """Apply writes made by other workers: reconcile every corpus whose change stamp moved.

        Each worker keeps its own in-memory indexes; with several workers this makes their writes visible
        to one another within one sync interval (the writing worker itself sees them at once).
        """
        with sessions() as session:
            stamps = CorpusRepository(session).change_stamps()
        with self._guard:
            gone = [name for name in self._indexes if name not in stamps]
            for name in gone:
                self._indexes.pop(name, None)
        for name, stamp in stamps.items():
            if self._seen_stamps.get(name) == stamp:
                continue
            with self.write_lock(name):
                self._reconcile(name, self.get(name), sessions)
            self._seen_stamps[name] = stamp

    def _reconcile(self, corpus: str, index: VectorIndex, sessions: sessionmaker[Session]) -> int:
        with sessions() as session:
            corpus_row = CorpusRepository(session).get(corpus)
            if corpus_row is None:
                return 0
            documents = DocumentRepository(session, corpus_row)
            stored = documents.hashes()
            indexed = index.hashes()
            stale = [doc_id for doc_id in indexed if doc_id not in stored]
            missing = [doc_id for doc_id, digest in stored.items() if indexed.get(doc_id) != digest]
            index.remove(stale)
            for start in range(0, len(missing), 2048):
                chunk = missing[start : start + 2048]
                texts = documents.texts(chunk)
                vectors = self.encoder.encode_bulk([texts[d] for d in chunk], label=f"corpus {corpus}")
                index.upsert(chunk, [stored[d] for d in chunk], vectors)
                log.info("indexing %s: %d/%d documents", corpus, start + len(chunk), len(missing))
        return len(stale) + len(missing)

    def apply_upsert(
        self, corpus: str, doc_ids: Sequence[str], hashes: Sequence[str], vectors: np.ndarray
    ) -> None:
        """Add or replace vectors after the database commit, then persist the bundle."""
        self.get(corpus).upsert(doc_ids, hashes, vectors)
        self.persist(corpus)

    def apply_remove(self, corpus: str, doc_ids: Sequence[str]) -> None:
        """Remove vectors after the database commit, then persist the bundle."""
        self.get(corpus).remove(doc_ids)
        self.persist(corpus)

    def persist(self, corpus: str) -> None:
        """Write the corpus's index as a new bundle generation."""
        save_bundle(self.get(corpus), bundle_dir(self.root, corpus, self.identity), corpus, self.identity)

    def drop(self, corpus: str) -> None:
        """Forget a deleted corpus's index and delete its bundles for every model."""
        with self._guard:
            self._indexes.pop(corpus, None)
        delete_corpus_bundles(self.root, corpus)
