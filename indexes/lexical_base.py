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
skipped by the mask until the next save merges it away (indexes/lexical_write.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np

__all__ = ["ARRAYS", "CURRENT", "LexicalBase"]

CURRENT = "CURRENT"
ARRAYS = ("ids", "lengths", "vocabulary", "offsets", "pointers", "rows", "tfs")


class LexicalBase:
    """A mapped generation plus which of its documents were removed or replaced since (in memory)."""

    def __init__(self, arrays: Mapping[str, np.ndarray], source: Path | None = None) -> None:
        self.source = source  # the generation folder the arrays are mapped from, if any
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
        arrays = {name: np.load(generation / f"{name}.npy", mmap_mode="r") for name in ARRAYS}
        return cls(arrays, source=generation)

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
