"""Writing a BM25 generation (indexes/lexical_base.py reads one): the base's live documents merged
with the delta's, streamed to a private folder, then made current.

A save takes the delta's postings as arrays (`Delta.of`) under the index's lock, in time proportional to
the writes since the last save; the merge with the mapped base, which is proportional to the corpus,
runs without it, so writes (and the searches queued behind a waiting write) do not wait for it.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from indexes.durable import STAGING, fsync_dir, fsync_file, staged_folder
from indexes.lexical_base import ARRAYS, CURRENT, LexicalBase
from indexes.npy_append import NpyAppender

__all__ = ["Delta", "publish_generation", "stage_generation", "term_chunks"]

_CHUNK_POSTINGS = 1 << 22  # a save sorts and writes this many postings at a time


@dataclass(frozen=True)
class Delta:
    """The delta's postings and lengths as arrays, terms sorted: what a save merges without the lock."""

    terms: list[str]
    sizes: np.ndarray  # postings per term
    ids: np.ndarray  # document ids, term after term
    tfs: np.ndarray
    doc_ids: np.ndarray  # every delta document, with its length alongside
    lengths: np.ndarray

    @classmethod
    def of(cls, postings: Mapping[str, Mapping[int, int]], lengths: Mapping[int, int]) -> Delta:
        """Copy `postings` (term -> {doc id: tf}) and `lengths` (doc id -> length) into arrays."""
        terms = sorted(postings)
        sizes = np.fromiter((len(postings[t]) for t in terms), np.int64, len(terms))
        count = int(sizes.sum())
        ids = np.empty(count, np.int64)
        tfs = np.empty(count, np.int32)
        at = 0
        for term, size in zip(terms, sizes.tolist(), strict=True):
            found = postings[term]
            ids[at : at + size] = np.fromiter(found.keys(), np.int64, size)
            tfs[at : at + size] = np.fromiter(found.values(), np.int32, size)
            at += size
        doc_ids = np.fromiter(lengths.keys(), np.int64, len(lengths))
        return cls(terms, sizes, ids, tfs, doc_ids, np.fromiter(lengths.values(), np.int64, len(lengths)))


def stage_generation(folder: Path, base: LexicalBase | None, dead: np.ndarray, delta: Delta) -> Path:
    """Write a new generation (the base's documents not `dead`, plus the delta's) to a staging folder.

    `publish_generation` makes it current; when this fails (a full disk) nothing is left behind."""
    with staged_folder(folder) as tmp:
        if not _linked(base, dead, delta, tmp):
            _merge(base, dead, delta, tmp)
        return tmp


def _linked(base: LexicalBase | None, dead: np.ndarray, delta: Delta, out: Path) -> bool:
    """Hard-link an unchanged base's files into `out` instead of writing them again; False (and `out`
    left empty) where the base changed or the file system cannot link them (another device).

    A corpus's first build merges its spilled segments into a generation in a scratch folder, then saves
    it where the corpus's index lives: without links that save re-wrote every posting a third time.
    Generations are never written once published, so two names for one file are safe."""
    if base is None or base.source is None or dead.any() or len(delta.doc_ids) or len(delta.terms):
        return False
    try:
        for name in ARRAYS:
            os.link(base.source / f"{name}.npy", out / f"{name}.npy")
    except OSError:
        for child in out.iterdir():
            child.unlink()
        return False
    return True


def _merge(base: LexicalBase | None, dead: np.ndarray, delta: Delta, out: Path) -> None:
    """Write the merged arrays into `out`, a chunk of terms at a time: the postings go to disk as they
    are made (a save's memory is one chunk's, not the new generation's: issue 41's 10M-document builds)."""
    delta_ids, delta_lengths = delta.doc_ids, delta.lengths
    if base is None:
        live, base_ids, base_lengths = np.zeros(0, bool), np.zeros(0, np.int64), np.zeros(0, np.int64)
    else:
        live = ~dead
        base_ids, base_lengths = np.asarray(base.ids[live]), np.asarray(base.lengths[live])
    every = np.concatenate([base_ids, delta_ids])
    order = np.argsort(every, kind="stable")
    ids = every[order]
    rank = np.empty(len(order), np.int64)
    rank[order] = np.arange(len(order))
    new_row = np.full(len(live), -1, np.int64)  # base row -> row in the new generation (-1: dead)
    new_row[live] = rank[: len(base_ids)]

    # The merged vocabulary, sorted: the base's terms with the delta's new ones inserted among them.
    delta_terms = delta.terms
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
    sizes = delta.sizes
    delta_starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    estimate[merged_delta] += sizes
    counts = np.zeros(size, np.int64)
    with (
        NpyAppender(out / "rows.npy", np.int32) as rows_out,
        NpyAppender(out / "tfs.npy", np.int32) as tfs_out,
    ):
        for start, stop in term_chunks(estimate):
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
            chunk = last > first
            if chunk:
                low, high = int(delta_starts[first]), int(delta_starts[last])
                terms_.append(np.repeat(merged_delta[first:last], sizes[first:last]))
                rows_.append(np.searchsorted(ids, delta.ids[low:high]))
                tfs_.append(delta.tfs[low:high])
            terms, rows, tfs = (
                np.concatenate(p) if p else np.zeros(0, np.int64) for p in (terms_, rows_, tfs_)
            )
            if chunk:  # delta postings go among the base's: by term, then by row (= by id)
                by = np.argsort(terms.astype(np.int64) * (len(ids) + 1) + rows, kind="stable")
                terms, rows, tfs = terms[by], rows[by], tfs[by]
            counts[start:stop] = np.bincount(terms - start, minlength=stop - start)
            rows_out.append(rows)
            tfs_out.append(tfs)
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


def term_chunks(postings: np.ndarray) -> Iterator[tuple[int, int]]:
    """Consecutive [start, stop) ranges of terms, given each term's postings, of about a chunk of
    postings each (at least one term): what a merge sorts and writes at a time."""
    cumulative, start = np.cumsum(postings), 0
    while start < len(postings):
        done = int(cumulative[start - 1]) if start else 0
        stop = max(start + 1, int(np.searchsorted(cumulative, done + _CHUNK_POSTINGS, side="right")))
        stop = min(stop, len(postings))
        yield start, stop
        start = stop


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
        fsync_file(tmp / "manifest.json")
        os.replace(tmp, folder / name)
        pointer.write_text(name)
        fsync_file(pointer)
        os.replace(pointer, folder / CURRENT)
        fsync_dir(folder)
    except BaseException:
        # A full disk: nothing half-written stays behind; CURRENT still names the previous generation
        # (the new one, if it was renamed into place, is removed with the next save's stale ones).
        shutil.rmtree(tmp, ignore_errors=True)
        pointer.unlink(missing_ok=True)
        raise
    # Older generations may still be mapped, by this index until its rebase or by another process: on
    # Linux an unlinked file lives on until its last mapping goes, so removing them now is safe.
    for child in folder.iterdir():
        if child.is_dir() and child.name != name and not child.name.startswith(STAGING):
            _remove_tree(child)
    return folder / name


def _remove_tree(path: Path) -> None:
    for child in path.iterdir():
        child.unlink(missing_ok=True)
    path.rmdir()
