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
import traceback
from dataclasses import dataclass
from pathlib import Path

from indexes.ann import build_ann, recall_at_k
from indexes.ann_tail import ANN_FILE, carried_recall, extend_structure
from indexes.durable import staged_folder
from indexes.memory import release_freed_memory
from indexes.row_file import Undo, run_undo
from indexes.sealed import ROWS_FILE, SealedRows, write_refine, write_vectors
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
    """Write the index's current state as a new snapshot generation and map it (the caller holds the
    folder's checkpoint lock: the generations' row files are shared, `indexes/row_file.py`)."""
    started = time.monotonic()
    live = len(index)
    structure = index.spec.structure(live)
    base = index.base
    incremental = (
        structure != "flat"
        and base.ann is not None
        and base.structure == structure
        and base.source is not None
        # Gone when this worker's generation fell behind another's and was swept: built anew then.
        and (base.source / ANN_FILE).is_file()
        and index.dead_fraction() <= MAX_DEAD_FRACTION
    )
    sealed = index.sealed_rows(compact=not incremental)  # under the index's lock: an instant
    undo: Undo = []  # appends to the old generation's row files, taken back if this one is given up
    try:
        with staged_folder(folder) as staged:
            has_ann = _write_files(staged, index, sealed, structure, incremental, (corpus, model), undo)
    except BaseException as error:
        # The rows about to be cut off are mapped by the new generation's arrays, which the traceback's
        # frames still hold: let them go first, so nothing can touch a page beyond the file's end.
        traceback.clear_frames(error.__traceback__)
        run_undo(undo)
        raise
    generation = publish_snapshot(folder, staged, undo)
    rows, rebuilt = len(sealed.alive), has_ann and not incremental
    del sealed
    # The structure just written was a private copy (3.7 GB of IVF lists at 10M rows) that the index to
    # serve maps from the file instead: hand its pages back to the system, or glibc keeps them resident
    # (measured: up to the copy's size stayed private after the checkpoint).
    release_freed_memory()
    loaded = load_snapshot(folder, model)
    if loaded is None or loaded.base.source != generation:
        raise RuntimeError(f"the snapshot just written to {generation} could not be mapped")
    return CheckpointResult(loaded, time.monotonic() - started, rows, rebuilt)


def _write_files(
    staged: Path,
    index: VectorIndex,
    sealed: SealedRows,
    structure: str,
    incremental: bool,
    owner: tuple[str, ModelIdentity],
    undo: Undo,
) -> bool:
    """Every file of the new generation into `staged`; True when it has an ANN structure."""
    base = index.base
    # Rows appended to the old generation's linked files, or written straight into new ones, once.
    vectors = write_vectors(staged / ROWS_FILE, sealed, base.source, undo)
    ann = recall = recall_rows = None
    refine = index.spec.refined(structure)
    if structure != "flat":
        if incremental:
            assert base.source is not None
            first = len(vectors) - sealed.appended
            ann = extend_structure(base.source, structure, vectors, first)
        else:
            ann = build_ann(index.spec, structure, vectors)
        assert ann is not None
        recall, recall_rows = carried_recall(base.source, ann)
        if recall is None:
            refine_from = vectors if refine else None  # scored as float16, as the file written below
            recall = round(recall_at_k(ann, index.spec, vectors, sealed.alive, refine_from=refine_from), 4)
    content = SnapshotContent(vectors, sealed.ids(), sealed.alive, sealed.hwm, structure,
                              index.spec.to_dict(), ann, recall, refine, recall_rows)  # fmt: skip
    previous = previous_refine(base) if refine else None
    refine_writer = None
    if previous is not None and len(previous) == len(sealed.base_vectors):
        refine_writer = functools.partial(write_refine, rows=sealed, previous=previous, source=base.source,
                                          undo=undo)  # fmt: skip
    write_generation(staged, content, *owner, refine_writer)
    return ann is not None


def rebase(index: VectorIndex, snapshot: LoadedSnapshot) -> VectorIndex:
    """A new index on the snapshot's rows plus the changes `index` holds beyond the snapshot's mark."""
    fresh = VectorIndex(index.dimension, index.spec, snapshot.base)
    fresh.hwm = snapshot.hwm
    upserts, deletes = index.changes_after(snapshot.hwm)
    fresh.apply(upserts, deletes, hwm=index.hwm)
    return fresh
