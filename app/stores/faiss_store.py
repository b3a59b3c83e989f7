"""The Faiss adapter of the vector-store port: this worker's corpus indexes for one model, kept in step
with the database's change log.

The database is the source of truth; an index is a cache of its documents' vectors. Opening a corpus
maps its newest snapshot for the model and replays the change log after the snapshot's high-water mark
(a full build happens only when no valid snapshot exists). Every write, by this worker or another one,
is applied by reading the log after the index's mark: O(change), whatever the corpus size (this worker's
own write, when the index stands where it began, straight from memory: `own_write.py`). Snapshots
are written in the background (`checkpoint`), never on the write path.
"""

from __future__ import annotations

import fcntl
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from sqlalchemy.orm import Session, sessionmaker

from app.db.corpus_lookup import require_corpus
from app.db.corpus_settings import CorpusSettings
from app.db.repositories.corpora import ChangeLog, CorpusMark, CorpusRepository
from app.db.repositories.documents import DocumentRepository
from app.stores.lexical_store import (
    follow_language,
    lexical_operations,
    lexical_status,
    open_lexical,
    own_languages,
    save_lexical,
)
from app.stores.opened import OpenedCorpora, checkpoint_due
from app.stores.own_write import apply_own_write
from app.stores.port import Hits, KnownVectors, OwnWrite
from indexes.checkpoint import checkpoint, rebase
from indexes.durable import sweep_staging
from indexes.lexical import LexicalIndex
from indexes.snapshot import ModelIdentity, delete_corpus_snapshots, load_snapshot, snapshot_dir
from indexes.spec import IndexSpec
from indexes.vector_index import VectorIndex

if TYPE_CHECKING:
    from app.db.models import Corpus

log = logging.getLogger(__name__)
_LOG_PAGE = 5000
Encode = Callable[..., np.ndarray]


@dataclass
class CorpusIndex:
    """One corpus's index in this worker, with the lock that orders its writes and catch-ups."""

    corpus_id: int
    name: str
    index: VectorIndex
    lexical: LexicalIndex = field(default_factory=LexicalIndex)  # BM25 over the same documents
    lock: threading.RLock = field(default_factory=threading.RLock)
    changes_since_checkpoint: int = 0
    last_checkpoint: datetime | None = None
    last_checkpoint_seconds: float | None = None
    recall_at_10: float | None = None
    structure: str = "flat"
    settings: CorpusSettings = field(default_factory=CorpusSettings)

    def search(self, queries: np.ndarray, k: int) -> list[Hits]:
        """Top k (id, cosine) per query row, best first."""
        return self.index.search(queries, k)

    def search_one(self, vector: np.ndarray, k: int) -> Hits:
        """Top k for one query; concurrent single queries share one matrix product."""
        return self.index.search_one(vector, k)

    def size(self) -> int:
        """Number of searchable vectors."""
        return len(self.index)


class FaissStore:
    """The indexes of every corpus for one encoder."""

    def __init__(self, root: Path, encoder: Any, sessions: sessionmaker[Session]) -> None:
        self.root = root
        self.encoder = encoder
        self.sessions = sessions
        self.identity = ModelIdentity(
            model_id=encoder.spec.model_id,
            model_version=encoder.version,
            weights_sha256=encoder.spec.weights_sha256,
            dimension=encoder.dimension,
            encoder=f"{encoder.backend}-{encoder.precision}",
        )
        self._corpora: OpenedCorpora[CorpusIndex] = OpenedCorpora()

    # --- opening ---------------------------------------------------------------------------------
    def open_all(self, on_corpus: Callable[[int, int, str], None] | None = None) -> None:
        """Open (map and replay, or build) every corpus index; `on_corpus(done, total, name)` before each."""
        self._corpora.open_all(self.sessions, self._load_or_build, on_corpus)

    def get(self, name: str) -> CorpusIndex:
        """The corpus's index, opened first if this worker has not opened it yet (never an empty stand-in).

        An opened corpus is found by name without a database query; a corpus another worker deleted is
        forgotten at the next sync, and its documents are gone from the database at once anyway.
        """
        found = self._corpora.named(name)
        if found is not None:
            return found
        with self.sessions() as session:
            corpus_id = require_corpus(session, name).id
        return self._corpora.open(corpus_id, self._load_or_build)

    def opened(self) -> list[CorpusIndex]:
        """The indexes this worker holds now."""
        return self._corpora.all()

    def _load_or_build(self, corpus_id: int) -> CorpusIndex:
        with self.sessions() as session:
            corpus = require_corpus(session, corpus_id)
            name, spec, mark = corpus.name, IndexSpec.from_dict(corpus.index_spec), int(corpus.change_seq)
            settings = CorpusSettings.of(corpus)
        started = time.monotonic()
        snapshot = load_snapshot(snapshot_dir(self.root, corpus_id, self.identity), self.identity)
        if snapshot is not None and snapshot.hwm > mark:
            # Newer than the database (restored from an older backup): it holds changes the database lost.
            log.warning(
                "index %s: snapshot at %d is ahead of the database (%d): rebuilding", name, snapshot.hwm, mark
            )
            snapshot = None
        if snapshot is not None:
            index = VectorIndex(self.identity.dimension, spec, snapshot.base)
            index.hwm = snapshot.hwm
            opened = CorpusIndex(corpus_id, name, index, structure=snapshot.base.structure, settings=settings)
            opened.recall_at_10 = snapshot.manifest.get("recall_at_10")
            opened.last_checkpoint = datetime.fromisoformat(snapshot.manifest["created_at"])
            opened.lexical = open_lexical(self.root, self.sessions, corpus_id, name, mark, settings.language)
            with opened.lock:
                replayed = self._catch_up_locked(opened)
            log.info("index %s: snapshot at %d mapped, %d changes replayed (%.2f s)", name, snapshot.hwm,
                     replayed, time.monotonic() - started)  # fmt: skip
            return opened
        opened = CorpusIndex(corpus_id, name, self._build(corpus_id, name, spec, mark), settings=settings)
        opened.lexical = open_lexical(self.root, self.sessions, corpus_id, name, mark, settings.language)
        with opened.lock:
            self._catch_up_locked(opened)
        self.checkpoint(opened)  # so that the next start maps instead of re-encoding
        log.info(
            "index %s: built from %d documents (%.1f s)", name, len(opened.index), time.monotonic() - started
        )
        return opened

    def _build(self, corpus_id: int, name: str, spec: IndexSpec, mark: int) -> VectorIndex:
        # Everything up to `mark` is in the documents read below (read after it); later changes are
        # replayed from the log afterwards, so a concurrent write is never lost.
        index = VectorIndex(self.identity.dimension, spec)
        with self.sessions() as session:
            corpus = require_corpus(session, corpus_id)
            for batch in DocumentRepository(session, corpus).iter_indexable(batch_size=2048):
                vectors = self.encoder.encode_bulk([body for _, body in batch], label=f"corpus {name}")
                index.apply([(pk, vector, mark) for (pk, _), vector in zip(batch, vectors, strict=True)])
        index.hwm = mark
        return index

    def record_write(self, session: Session, corpus: Corpus, previous_mark: int, known: KnownVectors) -> None:
        """Nothing: this store's vectors follow the committed log (`catch_up`), outside the transaction."""

    def activated(self, previous_version: str | None) -> None:
        """Nothing: other models' snapshots are folders on disk, pruned with their model's files."""

    # --- following the log ---------------------------------------------------------------------------
    def catch_up(self, opened: CorpusIndex, written: OwnWrite | None = None) -> int:
        """Apply every logged change after the index's mark; returns how many were applied. The caller's
        own write, when the index stands where it began, is applied as it is (`apply_own_write`)."""
        with opened.lock:
            if written is not None and apply_own_write(opened, written):
                return len(written.changes)
            return self._catch_up_locked(opened, written.known() if written is not None else None)

    def _catch_up_locked(self, opened: CorpusIndex, known: KnownVectors | None = None) -> int:
        applied = 0
        while True:
            # The lexical index may be behind the vectors (saved earlier, or new): read from the lower mark.
            vector_mark, lexical_mark = opened.index.hwm, opened.lexical.hwm
            with self.sessions() as session:
                corpus = CorpusRepository(session).get_by_id(opened.corpus_id)
                if corpus is None:
                    return applied
                entries = ChangeLog(session, corpus).since(min(vector_mark, lexical_mark), _LOG_PAGE)
                if not entries:
                    return applied
                # The last change per document, for each index past its own mark.
                final = {e.document_id: e for e in entries if e.seq > vector_mark}
                final_lexical = {e.document_id: e for e in entries if e.seq > lexical_mark}
                wanted = {d for d, e in final.items() if e.op == "upsert" and not _known(known, e)}
                wanted.update(d for d, e in final_lexical.items() if e.op == "upsert")
                texts = DocumentRepository(session, corpus).by_ids(sorted(wanted))
            languages = own_languages(self.sessions, opened.corpus_id, opened.lexical, final_lexical)
            upserts, deletes = self._operations(opened.name, final, texts, known or {})
            opened.index.apply(upserts, deletes, hwm=int(entries[-1].seq))
            lexical_upserts, lexical_deletes = lexical_operations(final_lexical, texts)
            opened.lexical.apply(
                lexical_upserts, lexical_deletes, hwm=int(entries[-1].seq), languages=languages
            )
            applied += len(entries)
            opened.changes_since_checkpoint += len(entries)
            if len(entries) < _LOG_PAGE:
                return applied

    def _operations(
        self, name: str, final: dict[int, Any], texts: dict[int, tuple[str, str]], known: KnownVectors
    ) -> tuple[list[tuple[int, np.ndarray, int]], list[tuple[int, int]]]:
        deletes = [(doc_id, int(e.seq)) for doc_id, e in final.items() if e.op == "delete"]
        upserts: list[tuple[int, np.ndarray, int]] = []
        to_encode: list[tuple[int, int, str]] = []
        for doc_id, entry in final.items():
            if entry.op != "upsert":
                continue
            if _known(known, entry):
                upserts.append((doc_id, known[doc_id][1], int(entry.seq)))
            elif doc_id in texts:
                to_encode.append((doc_id, int(entry.seq), texts[doc_id][1]))
            else:
                deletes.append((doc_id, int(entry.seq)))  # deleted again since; its tombstone follows
        if to_encode:
            vectors = self.encoder.encode_bulk([t for _, _, t in to_encode], label=f"changes to {name}")
            upserts += [(d, v, s) for (d, s, _), v in zip(to_encode, vectors, strict=True)]
        return upserts, deletes

    def follow(self, marks: list[CorpusMark] | None = None) -> None:
        """Apply other workers' writes: one query for every corpus's mark (unless given), then the log
        after each mark that moved."""
        if marks is None:
            with self.sessions() as session:
                marks = CorpusRepository(session).marks()
        by_id = {mark.id: mark for mark in marks}
        for opened in self.opened():
            mark = by_id.get(opened.corpus_id)
            if mark is None:
                self.forget(opened.corpus_id)
                continue
            opened.settings = mark.settings
            if mark.change_seq > opened.index.hwm:
                self.catch_up(opened)
            follow_language(self.root, self.sessions, opened, mark.settings.language)

    def forget(self, corpus_id: int) -> None:
        """Drop a deleted corpus's index from memory."""
        self._corpora.forget(corpus_id)

    def drop(self, corpus_id: int) -> None:
        """Forget a deleted corpus's index and delete its snapshots for every model."""
        self.forget(corpus_id)
        delete_corpus_snapshots(self.root, corpus_id)

    # --- checkpoints ---------------------------------------------------------------------------------
    def checkpoint(self, opened: CorpusIndex) -> bool:
        """Seal the corpus's index into a new snapshot and continue from it; False when another worker
        on this host is checkpointing the same corpus right now."""
        folder = snapshot_dir(self.root, opened.corpus_id, self.identity)
        folder.mkdir(parents=True, exist_ok=True)
        with open(folder / ".checkpoint.lock", "w") as lock_file:
            try:
                fcntl.flock(lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return False
            # A generation half-written by a checkpoint that died here (the lock is ours): up to the rows'
            # size (14 GiB at 10M rows), which the new one needs.
            sweep_staging(folder)
            pending = opened.changes_since_checkpoint
            result = checkpoint(opened.index, folder, opened.name, self.identity)
            # Before the pending count drops: if this fails (a full disk), the corpus stays due and retries.
            save_lexical(self.root, opened.corpus_id, opened.lexical)
            with opened.lock:  # writes wait only for this short step: nothing written meanwhile is lost
                opened.index = rebase(opened.index, result.snapshot)
                opened.changes_since_checkpoint = max(0, opened.changes_since_checkpoint - pending)
            opened.last_checkpoint = datetime.now(UTC)
            opened.last_checkpoint_seconds = round(result.seconds, 3)
            opened.recall_at_10 = result.snapshot.manifest.get("recall_at_10")
            opened.structure = result.snapshot.base.structure
        log.info("index %s: checkpoint at %d (%d rows, %.2f s)", opened.name, result.snapshot.hwm,
                 result.rows, result.seconds)  # fmt: skip
        return True

    def due(self, max_changes: int, max_seconds: float) -> list[CorpusIndex]:
        """Indexes with enough changes, or changes old enough, to be checkpointed now."""
        now = datetime.now(UTC)
        return [opened for opened in self.opened() if checkpoint_due(opened, max_changes, max_seconds, now)]

    def describe(self, opened: CorpusIndex, corpus_mark: int) -> dict[str, Any]:
        """What GET /v1/corpora/{name}/index shows."""
        index = opened.index
        base, delta = index.base, index.delta
        return {
            "store": "faiss",
            "spec": index.spec.to_dict(),
            "structure": opened.structure,
            "size": len(index),
            "dimension": index.dimension,
            "mapped_bytes": int(np.asarray(base.vectors).nbytes)
            + (0 if base.refine is None else int(base.refine.nbytes)),
            "memory_bytes": int(delta.vectors.nbytes + base.alive.nbytes),
            "last_checkpoint": opened.last_checkpoint,
            "checkpoint_seconds": opened.last_checkpoint_seconds,
            "high_water_mark": index.hwm,
            "corpus_change_seq": corpus_mark,
            "changes_since_checkpoint": opened.changes_since_checkpoint,
            "recall_at_10": opened.recall_at_10,
            "lexical": lexical_status(opened.lexical),
        }

    def present_vectors(self, opened: CorpusIndex, doc_ids: Sequence[int]) -> tuple[list[int], np.ndarray]:
        """(ids found, their vectors): documents deleted meanwhile are left out, not an error."""
        present, vectors = opened.index.present(doc_ids)
        if len(present) < len(doc_ids):
            self.catch_up(opened)  # written by another worker and not applied here yet?
            present, vectors = opened.index.present(doc_ids)
        return present, vectors

    def vectors_of(self, opened: CorpusIndex, doc_ids: Sequence[int]) -> np.ndarray:
        """Stored vectors of documents; catches up once if this worker has not seen one of them yet."""
        try:
            return opened.index.vectors(doc_ids)
        except KeyError:
            self.catch_up(opened)
            return opened.index.vectors(doc_ids)


def _known(known: KnownVectors | None, entry: Any) -> bool:
    """True when the writer's own vector is the one this log entry needs (same document, same text)."""
    if not known or entry.document_id not in known:
        return False
    return bool(known[entry.document_id][0] == entry.text_sha256)
