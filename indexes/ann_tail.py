"""An IVF structure kept in two files: the lists built over a generation's first rows, and a tail of the
rows appended since, searched as one index.

At 10M rows the IVF lists are 3.66 GiB (`ann.faiss`). A checkpoint that had only appended rows used to
read them into memory, add its new rows and write them whole again. Now it hard-links the old
generation's `ann.faiss` (no generation's file is ever written again: workers map them) and puts the
rows appended since the lists were built in `ann.tail.faiss`: an IVF with the same trained parts (coarse
centroids, codec) holding only those rows, their row numbers as ids. A search assigns each query to its
`nprobe` lists once and scans those lists in both parts (`search_preassigned`), then keeps the best k:
the candidates and scores of one IVF holding every row (tests/indexes/test_ann_tail.py). Once the tail
would pass `MAX_TAIL_FRACTION` of the base, the checkpoint folds both into one structure written whole,
so an appending checkpoint writes at most a tenth of the lists, and keeps the lists' measured recall
(`carried_recall`). HNSW graphs are extended whole, as before.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import faiss
import numpy as np

from indexes.ann import Structure, extend_ann, split_probes
from indexes.ann_lists import LISTS_FILE, read_mapped, read_private, shared_lists, write_shared
from indexes.ivf_parts import StackedIVF, is_fast_scan
from indexes.page_cache import prefetch
from indexes.row_file import hard_link

ANN_FILE = "ann.faiss"
TAIL_FILE = "ann.tail.faiss"
# The tail is scanned like the lists (no slower per row), but each appending checkpoint rewrites it:
# folding at a tenth bounds that write to a tenth of the whole structure's.
MAX_TAIL_FRACTION = 0.1
# Faiss copies fast-scan (pq4) block lists into aligned memory whatever the read flags; mapping their
# file too would only keep a second, unused copy resident. The file's format code (IndexIVFPQFastScan's)
# tells them apart before the read: a tail's, or lists written before they had a file of their own
# (`indexes/ann_lists.py`).
_COPIED_LISTS = (b"IwPf",)


def extend_structure(source: Path, structure: str, rows: np.ndarray, first_row: int) -> Structure:
    """The structure of the generation in `source`, which covers `rows` up to `first_row`, over all of them.

    An IVF gets a tail beside its lists (linked, not rewritten) while the tail stays within
    `MAX_TAIL_FRACTION` of them; past it, or for HNSW, one structure is read, extended and returned."""
    appended = rows[first_row:]
    tail: faiss.Index | None = None
    if structure == "ivf":
        mapped = _read_served(source / ANN_FILE, warm=False)
        tail_file = source / TAIL_FILE
        # A private copy (small): Faiss aborts the process on adding to lists mapped from a file.
        tail = faiss.read_index(str(tail_file)) if tail_file.is_file() else None
        held = mapped.ntotal + (tail.ntotal if tail is not None else 0)
        if held != first_row:
            raise ValueError(f"the structure in {source} holds {held} rows, not {first_row}")
        if held - mapped.ntotal + len(appended) <= MAX_TAIL_FRACTION * mapped.ntotal:
            if len(appended):
                tail = tail if tail is not None else _empty_copy(source / ANN_FILE)
                new = np.ascontiguousarray(appended, dtype=np.float32)
                tail.add_with_ids(new, np.arange(first_row, first_row + len(new), dtype=np.int64))
            tail = split_probes(tail) if tail is not None else None
            return StackedIVF(split_probes(mapped), tail, source / ANN_FILE)
        del mapped
    whole = _read_private(source / ANN_FILE)
    if structure != "ivf" and whole.ntotal != first_row:
        raise ValueError(f"the structure in {source} holds {whole.ntotal} rows, not {first_row}")
    if tail is not None and not is_fast_scan(whole):
        whole.merge_from(tail, 0)  # the tail's ids are already row numbers
    # Fast-scan (pq4) lists get the tail's rows encoded again instead, the same codes in the same order:
    # Faiss 1.15's `merge_from` corrupts the heap on them. Ids continue after the last row: row numbers.
    extend_ann(whole, rows[whole.ntotal :])
    return whole


def _read_private(path: Path) -> faiss.Index:
    """The structure in `path` read into memory of its own: rows can be added to it."""
    return read_private(path) if shared_lists(path) else faiss.read_index(str(path))


def carried_recall(source: Path | None, ann: Structure) -> tuple[float | None, int | None]:
    """(recall@10, rows it was measured over) of the lists `ann` links, from the generation in `source`;
    (None, None) when `ann` was built or folded anew, so its recall is measured again.

    The exact search behind a recall measure reads every float32 row (14.3 GiB at 10M: most of an
    appending checkpoint's time, and a stream through the page cache that pushed the served lists out).
    A tail changes no list and is searched as one IVF with them, so the lists' recall stands until the
    next fold (at most a tenth more rows) or rebuild measures it again."""
    if not isinstance(ann, StackedIVF) or source is None:
        return None, None
    try:
        manifest = json.loads((source / "manifest.json").read_text())
    except (OSError, ValueError):
        return None, None
    recall = manifest.get("recall_at_10")
    rows = manifest.get("recall_at_10_rows", manifest.get("count"))
    return (float(recall), int(rows)) if recall is not None and rows is not None else (None, None)


def _empty_copy(path: Path) -> faiss.Index:
    """The IVF in `path` with its trained parts and no rows: a tail's start."""
    # The trained parts: lists in a file of their own are not mapped for this (Faiss reads array lists
    # in the structure file in place).
    flags = faiss.IO_FLAG_SKIP_IVF_DATA if shared_lists(path) else faiss.IO_FLAG_MMAP_IFC
    index = faiss.read_index(str(path), flags)
    ivf = faiss.extract_index_ivf(index)
    empty: faiss.InvertedLists
    if is_fast_scan(index):  # blocks laid out by the index's code packer
        packer = ivf.get_CodePacker()
        packer.this.disown()  # the lists delete their packer
        empty = faiss.BlockInvertedLists(ivf.nlist, packer)  # type: ignore[attr-defined]
    else:
        empty = faiss.ArrayInvertedLists(ivf.nlist, ivf.code_size)
    empty.this.disown()  # type: ignore[attr-defined]  # owned by the index from here: Python must not free it too
    ivf.replace_invlists(empty, True)  # frees (unmaps) the mapped lists
    ivf.ntotal = index.ntotal = 0
    return index


def write_structure(staged: Path, ann: Structure) -> None:
    """`ann` into a staged generation: a stacked one as a link to its lists and its tail's new file."""
    if not isinstance(ann, StackedIVF):
        if is_fast_scan(ann):
            write_shared(ann, staged / ANN_FILE)  # workers map its lists instead of copying them
        else:
            faiss.write_index(ann, str(staged / ANN_FILE))
        return
    base_files = [ANN_FILE] + ([LISTS_FILE] if shared_lists(ann.base_file) else [])
    for name in base_files:
        if not hard_link(ann.base_file.parent / name, staged / name):  # no hard links there: copied
            shutil.copyfile(ann.base_file.parent / name, staged / name)
    if ann.tail is not None:
        faiss.write_index(ann.tail, str(staged / TAIL_FILE))


def _read_served(path: Path, warm: bool = True) -> faiss.Index:
    """A structure file read for searching: mapped (prefetched when `warm`) unless Faiss copies its lists."""
    if path.name == ANN_FILE and shared_lists(path):
        return read_mapped(path, warm)
    with path.open("rb") as handle:
        copied = handle.read(4) in _COPIED_LISTS
    if copied:
        return faiss.read_index(str(path))
    # Memory-mapped: the lists are shared between workers through the page cache; every query scans
    # lists, so they are read in the background.
    index = faiss.read_index(str(path), faiss.IO_FLAG_MMAP_IFC)
    if warm:
        prefetch(path)
    return index


def map_structure(generation: Path, rows: int) -> Structure | None:
    """A generation's structure mapped for searching (None without one); it must cover `rows` rows."""
    path = generation / ANN_FILE
    if not path.is_file():
        return None
    base = split_probes(_read_served(path))
    ann: Structure = base
    if (generation / TAIL_FILE).is_file():
        ann = StackedIVF(base, split_probes(_read_served(generation / TAIL_FILE)), path)
    if ann.ntotal != rows:
        raise ValueError(f"the ANN structure of {generation} holds {ann.ntotal} rows, not {rows}")
    return ann
