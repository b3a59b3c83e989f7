"""Checkpoints: seal an index's state into a snapshot, then continue from it without losing later writes.

A checkpoint takes the delta's rows and the base's alive marks under the index's lock (an instant),
writes a new snapshot generation (the rows straight into its file, once: `indexes/sealed.py`) while
writes go on, and maps it; one checkpoint per snapshot folder at a time (callers hold its lock). `rebase`
then builds the index to serve from that snapshot plus whatever was written after its high-water mark
(the callers hold the corpus's write lock for that short step). An ANN structure is extended with the
new rows when the old base had one and few rows have died; otherwise the rows are compacted and the
structure is built anew. A refined (compressed) IVF's float16 rows follow the float32 rows: linked and
appended to, or copied.
"""

from __future__ import annotations

import functools
import logging
import time
from dataclasses import dataclass
from pathlib import Path

import faiss

from indexes.ann import build_ann, extend_ann, recall_at_k
from indexes.durable import staged_folder
from indexes.memory import release_freed_memory
from indexes.row_file import Undo
from indexes.sealed import ROWS_FILE, write_refine, write_vectors
from indexes.snapshot import (
    LoadedSnapshot,
    ModelIdentity,
    SnapshotContent,
    load_snapshot,
    previous_refine,
    publish_snapshot,
    write_generation,
)
from indexes.vector_index import VectorIndex

log = logging.getLogger(__name__)
MAX_DEAD_FRACTION = 0.2


@dataclass(frozen=True)
class CheckpointResult:
    """The snapshot written and what it cost."""

    snapshot: LoadedSnapshot
    seconds: float
    rows: int
    rebuilt_ann: bool


def checkpoint(index: VectorIndex, folder: Path, corpus: str, model: ModelIdentity) -> CheckpointResult:
    """Write the index's current state as a new snapshot generation and map it."""
    started = time.monotonic()
    live = len(index)
    structure = index.spec.structure(live)
    base = index.base
    incremental = (
        structure != "flat"
        and base.ann is not None
        and base.structure == structure
        and base.source is not None
        and index.dead_fraction() <= MAX_DEAD_FRACTION
    )
    sealed = index.sealed_rows(compact=not incremental)  # under the index's lock: an instant
    ann = None
    recall = None
    refine = index.spec.refined(structure)
    undo: Undo = []  # appends to the old generation's row files, taken back if this one is given up
    try:
        with staged_folder(folder) as staged:
            # Rows appended to the old generation's linked files, or written straight into new ones, once.
            vectors = write_vectors(staged / ROWS_FILE, sealed, base.source, undo)
            ids = sealed.ids()
            if structure != "flat":
                if incremental:
                    assert base.source is not None
                    # A private, writable copy of the old structure; the new rows are added to it.
                    ann = faiss.read_index(str(base.source / "ann.faiss"))
                    extend_ann(ann, vectors[len(vectors) - sealed.appended :])
                else:
                    ann = build_ann(index.spec, structure, vectors)
                assert ann is not None
                refine_from = vectors if refine else None  # scored as float16, as the file written below
                recall = round(
                    recall_at_k(ann, index.spec, vectors, sealed.alive, refine_from=refine_from), 4
                )
            content = SnapshotContent(vectors, ids, sealed.alive, sealed.hwm, structure, index.spec.to_dict(),
                                      ann, recall, refine)  # fmt: skip
            previous = previous_refine(base) if refine else None
            refine_writer = None
            if previous is not None and len(previous) == len(sealed.base_vectors):
                refine_writer = functools.partial(
                    write_refine, rows=sealed, previous=previous, source=base.source, undo=undo
                )
            write_generation(staged, content, corpus, model, refine_writer)
    except BaseException:
        for step in reversed(undo):
            step()
        raise
    generation = publish_snapshot(folder, staged)
    rows, rebuilt = len(ids), ann is not None and not incremental
    # The structure just written is a private copy (3.7 GB of IVF lists at 10M rows) that the index to
    # serve maps from the file instead: drop it now and hand its pages back to the system, or glibc keeps
    # them resident (measured: up to the copy's size stayed private after the checkpoint).
    del content, ann, vectors, ids, sealed
    release_freed_memory()
    loaded = load_snapshot(folder, model)
    if loaded is None or loaded.base.source != generation:
        raise RuntimeError(f"the snapshot just written to {generation} could not be mapped")
    return CheckpointResult(loaded, time.monotonic() - started, rows, rebuilt)


def rebase(index: VectorIndex, snapshot: LoadedSnapshot) -> VectorIndex:
    """A new index on the snapshot's rows plus the changes `index` holds beyond the snapshot's mark."""
    fresh = VectorIndex(index.dimension, index.spec, snapshot.base)
    fresh.hwm = snapshot.hwm
    upserts, deletes = index.changes_after(snapshot.hwm)
    fresh.apply(upserts, deletes, hwm=index.hwm)
    return fresh
