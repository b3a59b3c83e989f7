"""Fast-scan (pq4) lists in a file of their own, mapped when served, so that workers share them.

Faiss keeps fast-scan codes in `BlockInvertedLists`: blocks of 32 vectors in aligned process memory,
copied on every read whatever the flags (0.53 GiB at 10M rows, in each worker: most of what four workers
did not share). Its `OnDiskInvertedLists` serves any list from a shared mapping of a file, and the
fast-scan search asks a list only for its size, codes and ids, so the same blocks laid out in such a file
give the same hits (tests/indexes/test_ann_lists.py). The file is written here, tight: each list's capacity
is its size rounded up to whole blocks (the search reads whole blocks), starting 64-byte aligned, where
`OnDiskInvertedLists`' own adds round capacities up to powers of two. Adding rows needs block lists, so
a fold reads the file back into them (`read_private`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import faiss
import numpy as np

from indexes.page_cache import prefetch

LISTS_FILE = "ann.lists"
_ALIGN = 64


def _lists(index: faiss.Index) -> Any:
    """The IVF's lists as their own class (Faiss's type stubs know only the base class's attributes)."""
    return faiss.downcast_InvertedLists(faiss.extract_index_ivf(index).invlists)  # type: ignore[arg-type]


def shared_lists(structure_file: Path) -> bool:
    """True when the structure in `structure_file` keeps its lists in the mapped file beside it."""
    return (structure_file.parent / LISTS_FILE).is_file()


def write_shared(index: faiss.Index, structure_file: Path) -> None:
    """The fast-scan `index` into `structure_file`, its lists' blocks into `LISTS_FILE` beside it."""
    ivf = faiss.extract_index_ivf(index)
    blocks = _lists(index)
    per_block, block_bytes = int(blocks.n_per_block), int(blocks.block_size)
    code_size = int(ivf.code_size)
    if block_bytes != per_block * code_size:  # the search reads codes in whole blocks of this size
        raise ValueError(f"blocks of {block_bytes} bytes for {per_block} codes of {code_size}")
    on_disk: Any = faiss.OnDiskInvertedLists(ivf.nlist, code_size, LISTS_FILE)
    on_disk.lists.clear()  # made with nlist empty entries: filled below
    offset = 0
    with (structure_file.parent / LISTS_FILE).open("wb") as handle:
        for list_no in range(ivf.nlist):
            size = int(blocks.list_size(list_no))
            capacity = -(-size // per_block) * per_block
            entry = faiss.OnDiskOneList()
            entry.size, entry.capacity, entry.offset = size, capacity, offset
            on_disk.lists.push_back(entry)
            if not size:
                continue
            ids = np.full(capacity, -1, dtype=np.int64)
            ids[:size] = faiss.rev_swig_ptr(blocks.get_ids(list_no), size)
            handle.write(faiss.rev_swig_ptr(blocks.get_codes(list_no), capacity * code_size).tobytes())
            handle.write(ids.tobytes())
            written = capacity * (code_size + 8)
            padding = -written % _ALIGN
            handle.write(b"\0" * padding)
            offset += written + padding
    on_disk.totsize = max(offset, 1)
    if offset == 0:  # nothing to map would fail the mapping: one byte
        (structure_file.parent / LISTS_FILE).write_bytes(b"\0")
    # Written with the file's lists in place of the blocks, which stay the index's own.
    ivf.own_invlists = False
    ivf.replace_invlists(on_disk, False)
    try:
        faiss.write_index(index, str(structure_file))
    finally:
        ivf.replace_invlists(blocks, True)


def read_mapped(structure_file: Path, warm: bool = True) -> faiss.Index:
    """The structure in `structure_file` with its lists mapped read-only from the file beside it (read
    into the page cache in the background when `warm`)."""
    index = faiss.read_index(str(structure_file), faiss.IO_FLAG_SKIP_IVF_DATA)
    on_disk = _lists(index)
    # The name stored is relative: a generation's files are linked into the next one's folder.
    on_disk.filename = str(structure_file.parent / LISTS_FILE)
    on_disk.read_only = True
    # Its own prefetch starts 32 threads for every search to touch the probed lists' pages; the page
    # cache holds them (read once in the background below).
    on_disk.prefetch_nthread = 0
    on_disk.do_mmap()
    if warm:
        prefetch(structure_file.parent / LISTS_FILE)
    return index


def read_private(structure_file: Path) -> faiss.Index:
    """The structure in `structure_file` with its lists copied into block lists: rows can be added."""
    index = read_mapped(structure_file, warm=False)
    ivf = faiss.extract_index_ivf(index)
    on_disk = _lists(index)
    packer = ivf.get_CodePacker()
    packer.this.disown()  # the lists delete their packer
    blocks = faiss.BlockInvertedLists(ivf.nlist, packer)  # type: ignore[attr-defined]
    for list_no in range(ivf.nlist):
        if size := on_disk.list_size(list_no):  # into empty lists: whole blocks copied as they are
            blocks.add_entries(list_no, size, on_disk.get_ids(list_no), on_disk.get_codes(list_no))
    blocks.this.disown()  # type: ignore[attr-defined]  # owned by the index from here
    ivf.replace_invlists(blocks, True)  # frees (unmaps) the mapped lists
    return index
