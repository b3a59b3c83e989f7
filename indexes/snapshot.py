"""Index snapshots on disk: one folder per corpus (by database id) and model, replaced atomically.

Layout of `<root>/corpus-<id>/<model folder>/`:
    CURRENT                 name of the live generation (replaced with os.replace, so always whole)
    gen-<time>-<rand>/      vectors.f32, ids.npy, alive.npy, sorted_ids.npy, order.npy, [ann.faiss],
                            [ann.lists: a fast-scan (pq4) IVF's lists, mapped (`indexes/ann_lists.py`)],
                            [ann.tail.faiss: an IVF's rows appended since its lists were built],
                            [vectors.f16: the rows in float16, for a refined compressed IVF],
                            manifest.json
The row files are raw rows, of which a generation owns the first `count` (its manifest): an appending
checkpoint links the old generation's and writes its new rows after them (`indexes/row_file.py`), and
links its IVF lists, writing the rows appended since they were built as a tail (`indexes/ann_tail.py`).
A snapshot holds the live vectors of a corpus up to a change-log high-water mark (`hwm`); start-up loads
it memory-mapped and replays the log after the mark. A generation is written under a temporary name,
fsynced and renamed into place before CURRENT moves to it, so a crash at any point leaves the previous
generation live and never a half-written one.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shutil
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import faiss
import numpy as np

from indexes.ann import Structure
from indexes.ann_lists import LISTS_FILE
from indexes.ann_tail import TAIL_FILE, map_structure, write_structure
from indexes.durable import fsync_dir, fsync_file, staged_folder
from indexes.page_cache import forget_mapped, read_randomly
from indexes.row_file import Undo, map_rows, run_undo, write_new
from indexes.sealed import REFINE_FILE, ROWS_FILE, row_chunks
from indexes.vector_index import Base

FORMAT_VERSION = 3  # 3: raw row files shared by appending generations; 2 (.npy rows) is still read
# A generation with an IVF tail: code that predates tails would serve its lists without the tail's rows
# (and number the rows it adds from the lists' count), so it must not read one; 3 stays readable to it.
TAIL_FORMAT_VERSION = 4
# A generation whose fast-scan lists lie in a file of their own (`ann.lists`): code before it would map
# that file by the name stored in the structure file, relative to its working folder.
LISTS_FORMAT_VERSION = 5
_READABLE_FORMATS = (2, FORMAT_VERSION, TAIL_FORMAT_VERSION, LISTS_FORMAT_VERSION)
METRIC = "inner_product"
_CURRENT = "CURRENT"
_STALE_AFTER_SECONDS = 60.0
_V2_FILES = ("vectors.npy", "vectors.f16.npy")  # format 2's rows and float16 rows, as .npy arrays
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ModelIdentity:
    """What a snapshot must match to be reused: the model's id, weights hash and dimension."""

    model_id: str
    model_version: str
    weights_sha256: str | None
    dimension: int
    # The runtime variant that computed the vectors (e.g. openvino-int8): int8 and fp32 vectors of one
    # model differ slightly, so a snapshot is reused only by the variant that wrote it.
    encoder: str = "torch-fp32"


def model_folder_name(model: ModelIdentity) -> str:
    """A file-system-safe, collision-free folder name for a model version."""
    readable = re.sub(r"[^A-Za-z0-9._-]+", "_", model.model_version).strip("._")[:80] or "model"
    digest = hashlib.sha256(f"{model.model_version}\0{model.encoder}".encode()).hexdigest()[:10]
    return f"{readable}-{model.encoder}-{digest}"


def corpus_dir(root: Path, corpus_id: int) -> Path:
    """Every snapshot of one corpus (all models): keyed by the database id, never by the name."""
    return root / f"corpus-{int(corpus_id)}"


def snapshot_dir(root: Path, corpus_id: int, model: ModelIdentity) -> Path:
    """The folder of one corpus's snapshots for one model."""
    return corpus_dir(root, corpus_id) / model_folder_name(model)


@dataclass(frozen=True)
class SnapshotContent:
    """What a checkpoint writes: live vectors and ids up to `hwm`, the ANN over them, and its recall."""

    vectors: np.ndarray
    ids: np.ndarray
    alive: np.ndarray
    hwm: int
    structure: str
    spec: dict[str, Any]
    ann: Structure | None = None
    recall_at_10: float | None = None
    refine: bool = False  # also write the float16 copy of the rows that refined searches re-score from
    recall_rows: int | None = None  # the rows recall_at_10 was measured over, when not these (carried)


def save_snapshot(folder: Path, content: SnapshotContent, corpus: str, model: ModelIdentity) -> Path:
    """Write rows held in memory as a new generation and make it current (checkpoints stream theirs)."""
    with staged_folder(folder) as staged:
        _write_rows(staged / ROWS_FILE, np.float32, content.vectors)
        fsync_file(staged / ROWS_FILE)  # before write_generation may drop its pages
        write_generation(staged, content, corpus, model)
    return publish_snapshot(folder, staged)


def publish_snapshot(folder: Path, staged: Path, undo: Undo | None = None) -> Path:
    """Rename a whole, fsynced staged generation into place and make it current; returns its folder.

    `undo` runs if it fails before CURRENT names the generation (no process can have mapped it)."""
    name = f"gen-{datetime.now(UTC).strftime('%Y%m%dT%H%M%S%f')}-{uuid.uuid4().hex[:8]}"
    generation = folder / name
    try:
        os.replace(staged, generation)
    except BaseException:
        shutil.rmtree(staged, ignore_errors=True)
        run_undo(undo or [])
        raise
    pointer_tmp = folder / f".{_CURRENT}.{uuid.uuid4().hex[:8]}"
    try:
        pointer_tmp.write_text(name)
        fsync_file(pointer_tmp)
        os.replace(pointer_tmp, folder / _CURRENT)
    except BaseException:
        pointer_tmp.unlink(missing_ok=True)
        shutil.rmtree(generation, ignore_errors=True)
        run_undo(undo or [])
        raise
    fsync_dir(folder)
    _remove_stale_generations(folder, keep=name)
    return generation


def write_generation(
    staged: Path,
    content: SnapshotContent,
    corpus: str,
    model: ModelIdentity,
    write_refine: Callable[[Path], None] | None = None,
) -> None:
    """Every file of a generation but its rows, which `indexes.sealed.write_vectors` put in `staged` (the
    folder of `indexes.durable.staged_folder`, which flushes them all when its block ends).

    `write_refine`: writes the float16 rows at the path it is given, when the old generation's can be
    linked or copied instead of converting the float32 rows again (`indexes.sealed.write_refine`)."""
    order = np.argsort(content.ids, kind="stable").astype(np.int64)
    np.save(staged / "ids.npy", content.ids.astype(np.int64))
    np.save(staged / "alive.npy", content.alive.astype(bool))
    np.save(staged / "sorted_ids.npy", content.ids[order].astype(np.int64))
    np.save(staged / "order.npy", order)
    convert = content.refine and write_refine is None  # float16 rows made from the float32 ones
    rows_file = staged / ROWS_FILE
    if content.ann is not None and not convert:
        # Searches read the structure, not these rows (the next checkpoint and look-ups by id do): dropped
        # from the page cache now, they do not push out the lists and float16 rows written next.
        forget_mapped(content.vectors, rows_file)
    if content.refine:
        if write_refine is None:
            _write_rows(staged / REFINE_FILE, np.float16, content.vectors)
        else:
            write_refine(staged / REFINE_FILE)
    if content.ann is not None:
        if convert:
            forget_mapped(content.vectors, rows_file)
        write_structure(staged, content.ann)
    recall_rows = None if content.recall_at_10 is None else content.recall_rows or len(content.ids)
    manifest = {
        "format_version": _format_version(staged),
        "corpus": corpus,
        "model_id": model.model_id,
        "model_version": model.model_version,
        "weights_sha256": model.weights_sha256,
        "encoder": model.encoder,
        "dimension": model.dimension,
        "metric": METRIC,
        "hwm": int(content.hwm),
        "count": len(content.ids),
        "live": int(content.alive.sum()),
        "structure": content.structure,
        "spec": content.spec,
        "recall_at_10": content.recall_at_10,
        "recall_at_10_rows": recall_rows,
        "faiss_version": faiss.__version__,
        "created_at": datetime.now(UTC).isoformat(),
    }
    (staged / "manifest.json").write_text(json.dumps(manifest, indent=2))


def _write_rows(path: Path, dtype: type, rows: np.ndarray) -> None:
    """`rows` as a new row file of `dtype`, a chunk at a time."""
    # Plain writes rather than a writable memmap: on a full disk a write raises ENOSPC (and the
    # generation is dropped), where a store into a mapped page would kill the process with SIGBUS.
    write_new(path, dtype, rows.shape[1], row_chunks(rows))


def previous_refine(base: Base) -> np.ndarray | None:
    """The float16 rows of the generation `base` was mapped from, mapped afresh for reading in order
    (the served mapping reads a row at a time, without read-ahead); None when it has none."""
    path = None if base.source is None else base.source / REFINE_FILE
    if path is None or not path.is_file():
        return None  # none, or format 2's (.npy): the float32 rows are converted once more
    count, dimension = np.shape(base.vectors)
    try:
        return map_rows(path, np.float16, count, dimension)
    except (OSError, ValueError):  # damaged: converted from the float32 rows instead
        return None


def _remove_stale_generations(folder: Path, keep: str) -> None:
    # A worker may have just written a generation it is about to point CURRENT at, and others may still
    # have an older one mapped (harmless: unlinked files live until unmapped): remove only old ones.
    horizon = time.time() - _STALE_AFTER_SECONDS
    for child in folder.iterdir():
        if child.is_dir() and child.name != keep and child.stat().st_mtime < horizon:
            shutil.rmtree(child, ignore_errors=True)


def read_manifest(folder: Path) -> dict[str, Any] | None:
    """The manifest of the current generation, or None when there is none."""
    pointer = folder / _CURRENT
    if not pointer.is_file():
        return None
    manifest_path = folder / pointer.read_text().strip() / "manifest.json"
    if not manifest_path.is_file():
        return None
    data = json.loads(manifest_path.read_text())
    return data if isinstance(data, dict) else None


def _format_version(staged: Path) -> int:
    """The oldest format that reads the generation in `staged`."""
    if (staged / LISTS_FILE).is_file():
        return LISTS_FORMAT_VERSION
    return TAIL_FORMAT_VERSION if (staged / TAIL_FILE).is_file() else FORMAT_VERSION


def manifest_matches(manifest: dict[str, Any], model: ModelIdentity) -> bool:
    """True when a snapshot was built by exactly this model (same id, weights and dimension)."""
    return (
        manifest.get("format_version") in _READABLE_FORMATS
        and manifest.get("model_id") == model.model_id
        and manifest.get("weights_sha256") == model.weights_sha256
        and manifest.get("encoder") == model.encoder
        and manifest.get("dimension") == model.dimension
        and manifest.get("metric") == METRIC
    )


@dataclass(frozen=True)
class LoadedSnapshot:
    """A snapshot mapped into memory: the base of a VectorIndex, its mark and its manifest."""

    base: Base
    hwm: int
    manifest: dict[str, Any]


def load_snapshot(folder: Path, model: ModelIdentity) -> LoadedSnapshot | None:
    """Map the current generation if this model built it; None when absent, stale or unreadable."""
    try:
        manifest = read_manifest(folder)
        if manifest is None or not manifest_matches(manifest, model):
            return None
        generation = folder / (folder / _CURRENT).read_text().strip()
        vectors, refine = _map_rows(generation, manifest, model.dimension)
        ids = np.load(generation / "ids.npy", mmap_mode="r")
        if vectors.shape != (int(manifest["count"]), model.dimension) or len(ids) != len(vectors):
            raise ValueError(f"snapshot arrays have shapes {vectors.shape} and {ids.shape}")
        ann = map_structure(generation, len(vectors))
        if refine is not None:
            # Read a candidate's row at a time, never in sequence: no read-ahead around each one.
            refine = read_randomly(refine)
            if refine.shape != vectors.shape:
                raise ValueError(f"snapshot float16 rows have shape {refine.shape}, not {vectors.shape}")
        base = Base(
            vectors=vectors,
            ids=ids,
            alive=np.array(np.load(generation / "alive.npy"), dtype=bool),  # a private, writable copy
            sorted_ids=np.load(generation / "sorted_ids.npy", mmap_mode="r"),
            order=np.load(generation / "order.npy", mmap_mode="r"),
            ann=ann,
            structure=str(manifest.get("structure", "flat")),
            source=generation,
            refine=refine,
        )
        return LoadedSnapshot(base, int(manifest["hwm"]), manifest)
    except (OSError, ValueError, KeyError, RuntimeError) as error:
        # A damaged snapshot is only a cache of the database: rebuild rather than refuse to start.
        log.warning("ignoring unreadable index snapshot %s: %s", folder, error)
        return None


def _map_rows(
    generation: Path, manifest: dict[str, Any], dimension: int
) -> tuple[np.ndarray, np.ndarray | None]:
    """A generation's float32 rows and float16 rows (None without them), mapped read-only."""
    if manifest["format_version"] == 2:
        rows, refine = (generation / name for name in _V2_FILES)
        return np.load(rows, mmap_mode="r"), np.load(refine, mmap_mode="r") if refine.is_file() else None
    count = int(manifest["count"])
    refine_file = generation / REFINE_FILE
    return (
        map_rows(generation / ROWS_FILE, np.float32, count, dimension),
        map_rows(refine_file, np.float16, count, dimension) if refine_file.is_file() else None,
    )


def delete_corpus_snapshots(root: Path, corpus_id: int) -> None:
    """Remove every snapshot (all models) of a corpus."""
    shutil.rmtree(corpus_dir(root, corpus_id), ignore_errors=True)
