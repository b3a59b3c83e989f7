"""The saved generation of a BM25 index, memory-mapped: postings by term, a vocabulary, ids and lengths.

Layout of a generation folder (every array an .npy file, opened with `np.load(mmap_mode="r")` so that
workers on one host share the page cache and a load reads nothing but headers):
- `ids.npy` (int64, ascending) and `lengths.npy` (int32): each document's id and term count, by row;
- `vocabulary.npy` (uint8) and `offsets.npy` (int64, one more than terms): the terms' UTF-8 bytes in
  sorted order (byte order is code-point order, lone surrogates included with "surrogatepass", so a
  binary search finds a term);
- `pointers.npy` (int64, one more than terms): term t's postings are rows/tfs[pointers[t]:pointers[t+1]];
- `rows.npy` (int32, ascending within a term, so ids too) and `tfs.npy` (int32): the postings.
A document removed after the save is only marked dead here (its length subtracted); its postings are
skipped by the mask until the next save merges it away (`merge`).
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from indexes.npy_append import NpyAppender

__all__ = ["ARRAYS", "CURRENT", "LexicalBase", "publish_generation", "stage_generation"]

CURRENT = "CURRENT"
ARRAYS = ("ids", "lengths", "vocabulary", "offsets", "pointers", "rows", "tfs")
_CHUNK_POSTINGS = 1 << 22  # a save sorts and writes this many postings at a time


class LexicalBase:
    """A mapped generation plus which of its documents were removed or replaced since (in memory)."""

    def __init__(self, arrays: Mapping[str, np.ndarray]) -> None:
        self.ids, self.lengths = arrays["ids"], arrays["lengths"]
        self.vocabulary, self.offsets = arrays["vocabulary"], arrays["offsets"]
        self.pointers, self.rows, self.tfs = arrays["pointers"], arrays["rows"], arrays["tfs"]
        self._bytes = np.asarray(self.vocabulary).data
        self.dead = np.zeros(len(self.ids), bool)  # calloc'd: pages stay unallocated until a removal
        self.dead_count = 0
        self.total_length = int(np.sum(self.lengths, dtype=np.int64))  # of live documents

    @classmethod
    def open(cls, generation: Path) -> LexicalBase:
        """Map a generation's arrays (raises OSError or ValueError when one is missing or unreadable)."""
        return cls({name: np.load(generation / f"{name}.npy", mmap_mode="r") for name in ARRAYS})

    def __len__(self) -> int:
        return len(self.ids) - self.dead_count

    def terms(self) -> int:
        """How many terms the vocabulary holds."""
        return len(self.offsets) - 1

    def row_of(self, doc_id: int) -> int | None:
        """The row of a live document, or None."""
        row = int(np.searchsorted(self.ids, doc_id))
        if row < len(self.ids) and int(self.ids[row]) == doc_id and not self.dead[row]:
            return row
        return None

    def remove(self, doc_id: int) -> bool:
        """Mark a live document dead (its postings are skipped from now on); False when it is not here."""
        row = self.row_of(doc_id)
        if row is None:
            return False
        self.dead[row] = True
        self.dead_count += 1
        self.total_length -= int(self.lengths[row])
        return True

    def _term(self, number: int) -> bytes:
        return bytes(self._bytes[int(self.offsets[number]) : int(self.offsets[number + 1])])

    def position(self, term: str) -> tuple[int, bool]:
        """Where a term is, or would be inserted, in the sorted vocabulary, and whether it is there."""
        key, low, high = term.encode("utf-8", "surrogatepass"), 0, self.terms()
        while low < high:  # a binary search over the mapped bytes: no vocabulary as Python objects
            middle = (low + high) // 2
            if self._term(middle) < key:
                low = middle + 1
            else:
                high = middle
        return low, low < self.terms() and self._term(low) == key

    def postings(self, term: str) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """(doc ids, term frequencies, document lengths) of a term's live postings (float64), or None."""
        number, found = self.position(term)
        if not found:
            return None
        start, stop = int(self.pointers[number]), int(self.pointers[number + 1])
        rows, tfs = self.rows[start:stop], self.tfs[start:stop]
        if self.dead_count:
            live = ~self.dead[rows]
            rows, tfs = rows[live], tfs[live]
        if not len(rows):
            return None
        return self.ids[rows], tfs.astype(np.float64), self.lengths[rows].astype(np.float64)


def stage_generation(
    folder: Path,
    base: LexicalBase | None,
    postings: Mapping[str, Mapping[int, int]],
    lengths: Mapping[int, int],
) -> Path:
    """A new generation's arrays, written to a private folder of `folder` (`publish_generation` makes it
    current): the base's live documents plus the delta's (`postings`: term -> {doc id: tf}, `lengths`:
    doc id -> length). Nothing is left behind when it fails (a full disk)."""
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".tmp-{uuid.uuid4().hex[:12]}"
    try:
        tmp.mkdir()
        _merge(base, postings, lengths, tmp)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return tmp


def _merge(
    base: LexicalBase | None, postings: Mapping[str, Mapping[int, int]], lengths: Mapping[int, int], out: Path
) -> None:
    """Write the merged arrays into `out`, a chunk of terms at a time: the postings go to disk as they
    are made (a save's memory is one chunk's, not the new generation's: issue 41's 10M-document builds)."""
    delta_ids = np.fromiter(lengths.keys(), np.int64, len(lengths))
    delta_lengths = np.fromiter(lengths.values(), np.int64, len(lengths))
    if base is None:
        live, base_ids, base_lengths = np.zeros(0, bool), np.zeros(0, np.int64), np.zeros(0, np.int64)
    else:
        live = ~base.dead
        base_ids, base_lengths = np.asarray(base.ids[live]), np.asarray(base.lengths[live])
    every = np.concatenate([base_ids, delta_ids])
    order = np.argsort(every, kind="stable")
    ids = every[order]
    rank = np.empty(len(order), np.int64)
    rank[order] = np.arange(len(order))
    new_row = np.full(len(live), -1, np.int64)  # base row -> row in the new generation (-1: dead)
    new_row[live] = rank[: len(base_ids)]

    # The merged vocabulary, sorted: the base's terms with the delta's new ones inserted among them.
    delta_terms = sorted(postings)
    base_terms = base.terms() if base is not None else 0
    known: list[int] = []
    inserted: list[int] = []
    fresh: list[str] = []
    for term in delta_terms:
        number, found = base.position(term) if base is not None else (0, False)
        if found:
            known.append(number)
        else:
            inserted.append(number)
            fresh.append(term)
    insert_at = np.asarray(inserted, np.int64)
    merged_base = np.arange(base_terms) + np.searchsorted(insert_at, np.arange(base_terms), side="right")
    merged_fresh = insert_at + np.arange(len(insert_at))
    merged_delta = np.sort(np.concatenate([merged_base[np.asarray(known, np.int64)], merged_fresh]))
    size = base_terms + len(fresh)

    estimate = np.zeros(size, np.int64)
    base_pointers = np.asarray(base.pointers, np.int64) if base is not None else np.zeros(1, np.int64)
    estimate[merged_base] = np.diff(base_pointers)
    sizes = np.fromiter((len(postings[t]) for t in delta_terms), np.int64, len(delta_terms))
    estimate[merged_delta] += sizes
    counts = np.zeros(size, np.int64)
    cumulative = np.cumsum(estimate)
    start = 0
    with (
        NpyAppender(out / "rows.npy", np.int32) as rows_out,
        NpyAppender(out / "tfs.npy", np.int32) as tfs_out,
    ):
        while start < size:
            done = int(cumulative[start - 1]) if start else 0
            stop = max(start + 1, int(np.searchsorted(cumulative, done + _CHUNK_POSTINGS, side="right")))
            stop = min(stop, size)
            terms_: list[np.ndarray] = []
            rows_: list[np.ndarray] = []
            tfs_: list[np.ndarray] = []
            if base is not None:  # the base's terms in [start, stop): one contiguous slice of its postings
                first, last = np.searchsorted(merged_base, [start, stop])
                low, high = int(base_pointers[first]), int(base_pointers[last])
                rows = new_row[base.rows[low:high]]
                keep = rows >= 0
                terms_.append(
                    np.repeat(merged_base[first:last], np.diff(base_pointers[first : last + 1]))[keep]
                )
                rows_.append(rows[keep])
                tfs_.append(np.asarray(base.tfs[low:high])[keep])
            first, last = np.searchsorted(merged_delta, [start, stop])
            chunk = [postings[t] for t in delta_terms[first:last]]
            if chunk:
                count = int(sizes[first:last].sum())
                terms_.append(np.repeat(merged_delta[first:last], sizes[first:last]))
                ids_ = np.fromiter(itertools.chain.from_iterable(p.keys() for p in chunk), np.int64, count)
                rows_.append(np.searchsorted(ids, ids_))
                tfs_.append(
                    np.fromiter(itertools.chain.from_iterable(p.values() for p in chunk), np.int64, count)
                )
            terms, rows, tfs = (
                np.concatenate(p) if p else np.zeros(0, np.int64) for p in (terms_, rows_, tfs_)
            )
            if chunk:  # delta postings go among the base's: by term, then by row (= by id)
                by = np.argsort(terms.astype(np.int64) * (len(ids) + 1) + rows, kind="stable")
                terms, rows, tfs = terms[by], rows[by], tfs[by]
            counts[start:stop] = np.bincount(terms - start, minlength=stop - start)
            rows_out.append(rows)
            tfs_out.append(tfs)
            start = stop
    kept = counts > 0  # a term whose every document is gone leaves the vocabulary
    vocabulary, offsets = _merged_vocabulary(base, fresh, merged_base, merged_fresh, kept)
    arrays = {
        "ids": ids,
        "lengths": np.concatenate([base_lengths, delta_lengths])[order].astype(np.int32),
        "vocabulary": vocabulary,
        "offsets": offsets,
        "pointers": np.concatenate([[0], np.cumsum(counts[kept])]).astype(np.int64),
    }
    for key, array in arrays.items():
        np.save(out / f"{key}.npy", array)


def _merged_vocabulary(
    base: LexicalBase | None,
    fresh: list[str],
    merged_base: np.ndarray,
    merged_fresh: np.ndarray,
    kept: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """The UTF-8 bytes and offsets of the kept terms in merged order, copied as byte arrays."""
    encoded = [term.encode("utf-8", "surrogatepass") for term in fresh]
    fresh_bytes = np.frombuffer(b"".join(encoded), np.uint8)
    fresh_offsets = np.concatenate([[0], np.cumsum([len(e) for e in encoded], dtype=np.int64)])
    if base is not None:
        base_bytes, base_offsets = np.asarray(base.vocabulary), np.asarray(base.offsets, np.int64)
    else:
        base_bytes, base_offsets = np.zeros(0, np.uint8), np.zeros(1, np.int64)
    sizes = np.zeros(len(kept), np.int64)
    sizes[merged_base] = np.diff(base_offsets)
    sizes[merged_fresh] = np.diff(fresh_offsets)
    offsets = np.concatenate([[0], np.cumsum(sizes[kept])]).astype(np.int64)
    starts = np.zeros(len(kept), np.int64)
    starts[kept] = offsets[:-1]
    vocabulary = np.empty(int(offsets[-1]), np.uint8)
    for source, source_offsets, merged in ((base_bytes, base_offsets, merged_base),
                                           (fresh_bytes, fresh_offsets, merged_fresh)):  # fmt: skip
        lengths = np.diff(source_offsets)
        # Each byte moves by its term's shift (new start - old start); bytes of dropped terms stay behind.
        target = np.arange(len(source)) + np.repeat(starts[merged] - source_offsets[:-1], lengths)
        wanted = np.repeat(kept[merged], lengths)
        vocabulary[target[wanted]] = source[wanted]
    return vocabulary, offsets


def publish_generation(folder: Path, tmp: Path, manifest: dict[str, Any]) -> Path:
    """Make a staged generation current (atomic: CURRENT is replaced); older generations are then removed."""
    name = f"gen-{manifest['hwm']}-{uuid.uuid4().hex[:8]}"
    pointer = folder / f".{CURRENT}.{uuid.uuid4().hex[:8]}"
    try:
        (tmp / "manifest.json").write_text(json.dumps(manifest))
        os.replace(tmp, folder / name)
        pointer.write_text(name)
        os.replace(pointer, folder / CURRENT)
    except BaseException:
        # A full disk: nothing half-written stays behind; CURRENT still names the previous generation
        # (the new one, if it was renamed into place, is removed with the next save's stale ones).
        shutil.rmtree(tmp, ignore_errors=True)
        pointer.unlink(missing_ok=True)
        raise
    # Older generations may still be mapped, by this index until its rebase or by another process: on
    # Linux an unlinked file lives on until its last mapping goes, so removing them now is safe.
    for child in folder.iterdir():
        if child.is_dir() and child.name != name and not child.name.startswith(".tmp-"):
            _remove_tree(child)
    return folder / name


def _remove_tree(path: Path) -> None:
    for child in path.iterdir():
        child.unlink(missing_ok=True)
    path.rmdir()
