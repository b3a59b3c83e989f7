"""Merging a first build's segments once (issue 41): generations of disjoint documents, each written from
one spill alone, become one generation in a single pass.

Spilling into one growing base re-merged every posting written so far at each spill, so a build's merge
work grew with the square of the corpus (about 8.5 minutes to start a 10M-document replica); segments
write each posting twice in all: once in its segment, once in the merge. The merged generation is the
one a save of all the documents would write (same rows, vocabulary and postings order), which
tests/indexes/test_lexical_segments.py checks array for array.
"""

from __future__ import annotations

import heapq
from array import array
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np

from indexes.durable import staged_folder
from indexes.lexical_base import LexicalBase
from indexes.lexical_write import term_chunks
from indexes.npy_append import NpyAppender

__all__ = ["merge_segments"]

_CHUNK_TERMS = 1 << 16  # vocabulary entries decoded at a time per segment


def merge_segments(folder: Path, segments: Sequence[LexicalBase]) -> Path:
    """Stage (in `folder`, see `stage_generation`) one generation of every live document of `segments`,
    whose ids must be disjoint; ValueError when they are not."""
    with staged_folder(folder) as out:
        _merge_segments(segments, out)
        return out


def _merge_segments(segments: Sequence[LexicalBase], out: Path) -> None:
    live = [~segment.dead for segment in segments]
    every = np.concatenate([np.asarray(s.ids)[keep] for s, keep in zip(segments, live, strict=True)])
    order = np.argsort(every, kind="stable")
    ids = every[order]
    del every  # what the merge holds is a few bytes a document: at 10M, each array is 40-80 MB
    if len(ids) > 1 and not bool(np.all(ids[1:] > ids[:-1])):
        raise ValueError("segments share documents: only disjoint segments merge")
    lengths = np.concatenate([np.asarray(s.lengths)[keep] for s, keep in zip(segments, live, strict=True)])
    lengths = lengths[order].astype(np.int32)
    rank = np.empty(len(order), np.int32)  # rows are int32 in a generation
    rank[order] = np.arange(len(order), dtype=np.int32)
    del order
    new_rows, at = [], 0  # each segment's row -> row in the merged generation (-1: dead)
    for keep in live:
        row, taken = np.full(len(keep), -1, np.int32), int(keep.sum())
        row[keep] = rank[at : at + taken]
        at += taken
        new_rows.append(row)
    del rank
    vocabulary, offsets, maps = _vocabulary(segments)
    size = len(offsets) - 1
    counts = np.zeros(size, np.int64)  # postings per merged term: an upper bound until dead are dropped
    pointers = [np.asarray(s.pointers, np.int64) for s in segments]
    for mapped, pointer in zip(maps, pointers, strict=True):
        counts[mapped] += np.diff(pointer)  # a segment's terms are distinct: no repeated index
    kept_counts = np.zeros(size, np.int64)
    with (
        NpyAppender(out / "rows.npy", np.int32) as rows_out,
        NpyAppender(out / "tfs.npy", np.int32) as tfs_out,
    ):
        for start, stop in term_chunks(counts):
            terms_, rows_, tfs_ = [], [], []
            for segment, mapped, pointer, new_row in zip(segments, maps, pointers, new_rows, strict=True):
                first, last = np.searchsorted(mapped, [start, stop])
                low, high = int(pointer[first]), int(pointer[last])
                rows = new_row[np.asarray(segment.rows[low:high])]
                keep = rows >= 0
                terms_.append(np.repeat(mapped[first:last], np.diff(pointer[first : last + 1]))[keep])
                rows_.append(rows[keep])
                tfs_.append(np.asarray(segment.tfs[low:high])[keep])
            terms, rows, tfs = (np.concatenate(p) for p in (terms_, rows_, tfs_))
            by = np.argsort(terms * (len(ids) + 1) + rows.astype(np.int64), kind="stable")  # term, then row
            kept_counts[start:stop] = np.bincount(terms - start, minlength=stop - start)
            rows_out.append(rows[by])
            tfs_out.append(tfs[by])
    kept = kept_counts > 0  # a term whose every document is dead leaves the vocabulary
    sizes = np.diff(offsets)
    arrays = {
        "ids": ids,
        "lengths": lengths,
        "vocabulary": vocabulary[np.repeat(kept, sizes)],
        "offsets": np.concatenate([[0], np.cumsum(sizes[kept])]).astype(np.int64),
        "pointers": np.concatenate([[0], np.cumsum(kept_counts[kept])]).astype(np.int64),
    }
    for key, values in arrays.items():
        np.save(out / f"{key}.npy", values)


def _vocabulary(segments: Sequence[LexicalBase]) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """The sorted union of the segments' vocabularies (UTF-8 bytes and offsets) and, per segment, where
    each of its terms is in it (ascending: a segment's vocabulary is sorted too)."""
    maps = [np.empty(segment.terms(), np.int64) for segment in segments]
    merged, ends = bytearray(), array("q", [0])  # compact: no Python object per merged term
    previous, number = None, -1
    streams = [_terms(segment, s) for s, segment in enumerate(segments)]
    for term, s, local in heapq.merge(*streams):  # byte order is the vocabulary's order
        if term != previous:
            number += 1
            previous = term
            merged += term
            ends.append(len(merged))
        maps[s][local] = number
    return np.frombuffer(merged, np.uint8).copy(), np.frombuffer(ends, np.int64).copy(), maps


def _terms(segment: LexicalBase, s: int) -> Iterator[tuple[bytes, int, int]]:
    """(term bytes, segment number, term number) in vocabulary order, decoded a chunk at a time."""
    offsets = np.asarray(segment.offsets, np.int64)
    for first in range(0, segment.terms(), _CHUNK_TERMS):
        last = min(segment.terms(), first + _CHUNK_TERMS)
        raw = bytes(np.asarray(segment.vocabulary[offsets[first] : offsets[last]]))
        ends = (offsets[first : last + 1] - offsets[first]).tolist()
        for i in range(last - first):
            yield raw[ends[i] : ends[i + 1]], s, first + i
