"""A BM25 index per corpus that follows the same change log as the vector index.

Scoring is BM25 in its Lucene form, exactly as `bm25s` computes it (`method="lucene"`, k1 = 1.5,
b = 0.75): idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5)), and a document scores
sum over query tokens of idf * tf / (tf + k1 * (1 - b + b * |d| / avgdl)). Terms come from an
`Analyser` (indexes/analysis.py): for English exactly bm25s's tokens, stop words and Snowball stemmer;
for another language its own stop words and stemmer; for a `multi` index each document's own language.
bm25s itself builds a static sparse matrix with the idf baked in, so it cannot take one changed document
without a rebuild; this index keeps postings that a write updates in place (tests/indexes/test_lexical.py
checks its scores against bm25s's on the same corpus).

Like the vector index it carries the change-log sequence number it has applied (`hwm`), is saved at
checkpoints (`save`/`load`, model-independent, one folder per corpus) and replays the log after it; and
like it, a saved generation is served memory-mapped (indexes/lexical_base.py: postings by term as numpy
arrays, about 10 bytes a posting, in the page cache) with only the documents written since it in Python
structures (the delta). A removed or replaced base document is marked dead and its postings skipped.
Scores do not depend on where a posting lives: each query token adds the base's and the delta's postings
(no document is in both), and contributions are summed in query-token order.
"""

from __future__ import annotations

import json
import math
import threading
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from indexes.analysis import Analyser
from indexes.languages import MULTI
from indexes.lexical_base import CURRENT, LexicalBase
from indexes.lexical_write import Delta, publish_generation, stage_generation
from indexes.memory import release_freed_memory
from pairank.locks import SharedExclusiveLock

__all__ = ["K1", "B", "Analyser", "LexicalIndex", "Matches"]

K1, B = 1.5, 0.75
FORMAT_VERSION = 2  # 2: postings by term, memory-mapped (1: documents' terms, rebuilt on load)


@dataclass(frozen=True)
class Matches:
    """BM25 scores of the documents matching a query: ids ascending, their scores alongside."""

    ids: np.ndarray
    scores: np.ndarray

    @classmethod
    def empty(cls) -> Matches:
        """No document matches."""
        return cls(np.zeros(0, np.int64), np.zeros(0, np.float64))

    def __len__(self) -> int:
        return len(self.ids)

    def best(self, k: int) -> list[tuple[int, float]]:
        """The k best (id, score), best first (ties by id)."""
        ids, values = self.ids, self.scores
        if 0 < k < len(values):  # sort only the k best and those tied with the k-th, not every match
            kth = np.partition(-values, k - 1)[k - 1]
            keep = np.flatnonzero(-values <= kth)
            ids, values = ids[keep], values[keep]
        order = np.lexsort((ids, -values))[:k]
        return [(int(ids[i]), float(values[i])) for i in order]

    def of(self, doc_ids: Iterable[int]) -> dict[int, float]:
        """The score of each given id (0 for one that matches no query term)."""
        wanted = np.fromiter(doc_ids, np.int64)
        places = np.minimum(np.searchsorted(self.ids, wanted), max(len(self.ids) - 1, 0))
        hit = (self.ids[places] == wanted) if len(self.ids) else np.zeros(len(wanted), bool)
        values = np.where(hit, self.scores[places] if len(self.ids) else 0.0, 0.0)
        return dict(zip(wanted.tolist(), values.tolist(), strict=True))


class LexicalIndex:
    """BM25 over documents addressed by database id, updated in place by upserts and deletes."""

    def __init__(self, analyser: Analyser | None = None, base: LexicalBase | None = None) -> None:
        self.analyser = analyser or Analyser()
        self.hwm = 0
        self._base = base  # the saved generation, mapped (None: everything is in the delta)
        # The delta: documents written since the base (or all of them, for an index never saved).
        self._terms: dict[int, Counter[str]] = {}  # doc id -> term frequencies
        self._lengths: dict[int, int] = {}
        self._postings: dict[str, dict[int, int]] = {}  # term -> {doc id: tf}
        self._arrays: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}  # postings as arrays
        self._total_length = 0  # of the delta's documents (the base keeps its own)
        self._touched: set[int] | None = None  # ids written while a save runs, kept beside its generation
        self._writes = 0  # applies that changed something: a save with none since the last is skipped
        self._saved: tuple[tuple[Path, int, int], Path] | None = None  # (folder, hwm, writes), generation
        self._lock = SharedExclusiveLock()
        self._saving = threading.Lock()

    def __len__(self) -> int:
        return len(self._terms) + (len(self._base) if self._base is not None else 0)

    def delta_documents(self) -> int:
        """Documents held in Python (written since the mapped generation): what a save would shrink."""
        return len(self._terms)

    def __contains__(self, doc_id: int) -> bool:
        return doc_id in self._terms or (self._base is not None and self._base.row_of(doc_id) is not None)

    def apply(
        self,
        upserts: Sequence[tuple[int, str]],
        deletes: Sequence[int] = (),
        *,
        hwm: int | None = None,
        languages: Mapping[int, str | None] | None = None,
    ) -> None:
        """Replace or add (id, text) documents and remove ids; `hwm` is the log position now applied.

        `languages`: a `multi` index's documents' own languages (one absent or None is detected); an index
        of one language analyses every document in it."""
        own = languages if languages is not None and self.analyser.language == MULTI else {}
        tokenized = [(doc_id, Counter(self.analyser(text, own.get(doc_id)))) for doc_id, text in upserts]
        with self._lock.exclusive():
            self._writes += 1 if deletes or tokenized else 0
            if self._touched is not None:
                self._touched.update(deletes)
                self._touched.update(doc_id for doc_id, _ in tokenized)
            for doc_id in deletes:
                self._remove(doc_id)
            for doc_id, counts in tokenized:
                self._remove(doc_id)
                self._add(doc_id, counts)
            if hwm is not None:
                self.hwm = max(self.hwm, hwm)

    def _add(self, doc_id: int, counts: Counter[str]) -> None:
        self._terms[doc_id] = counts
        length = sum(counts.values())
        self._lengths[doc_id] = length
        self._total_length += length
        for term, tf in counts.items():
            self._postings.setdefault(term, {})[doc_id] = tf
            self._arrays.pop(term, None)

    def _remove(self, doc_id: int) -> None:
        counts = self._terms.pop(doc_id, None)
        if counts is None:  # a delta document's base copy, if any, is already dead
            if self._base is not None:
                self._base.remove(doc_id)
            return
        self._total_length -= self._lengths.pop(doc_id)
        for term in counts:
            self._arrays.pop(term, None)
            posting = self._postings[term]
            del posting[doc_id]
            if not posting:
                del self._postings[term]

    def match(self, query: str, language: str | None = None) -> Matches:
        """BM25 of every document sharing a term with the query, as sorted arrays (one numpy pass per term);
        the query is analysed in `language` when named, else in the index's (`multi`: detected).

        Each delta term's postings are kept as arrays, rebuilt after a write touches the term, and the
        base's are slices of its mapped arrays: a query costs a few array operations per term instead of a
        Python loop over thousands of postings. Contributions are summed in query-token order, exactly as
        a per-document running sum would (np.bincount adds in input order), so scores do not depend on
        the path.
        """
        tokens = self.analyser(query, language)
        with self._lock.shared():
            n = len(self)
            if n == 0:
                return Matches.empty()
            base_length = self._base.total_length if self._base is not None else 0
            average = (self._total_length + base_length) / n
            parts_ids: list[np.ndarray] = []
            parts_scores: list[np.ndarray] = []
            # A repeated query token counts each time, as in bm25s; its contributions are computed once.
            contributions: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {}
            for term in tokens:
                scored = contributions.get(term)
                if scored is None:
                    scored = contributions[term] = self._contributions(term, n, average)
                for ids, values in scored:  # no document is in both parts: its sum order holds
                    parts_ids.append(ids)
                    parts_scores.append(values)
        if not parts_ids:
            return Matches.empty()
        unique, inverse = np.unique(np.concatenate(parts_ids), return_inverse=True)
        return Matches(unique, np.bincount(inverse, weights=np.concatenate(parts_scores)))

    def _contributions(self, term: str, n: int, average: float) -> list[tuple[np.ndarray, np.ndarray]]:
        """(doc ids, BM25 term scores) of a term's delta and base postings (a shared lock held)."""
        found = [self._term_arrays(term)]
        if self._base is not None:
            found.append(self._base.postings(term))
        parts = [arrays for arrays in found if arrays is not None]
        df = sum(len(ids) for ids, _, _ in parts)
        idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
        scored = []
        for ids, tfs, lengths in parts:
            norm = K1 * (1 - B + B * lengths / average)
            scored.append((ids, idf * tfs / (tfs + norm)))
        return scored

    def _term_arrays(self, term: str) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """(doc ids, term frequencies, document lengths) of a term's postings, cached until a write."""
        cached = self._arrays.get(term)
        if cached is None:
            posting = self._postings.get(term)
            if not posting:
                return None
            ids = np.fromiter(posting.keys(), np.int64, len(posting))
            tfs = np.fromiter(posting.values(), np.float64, len(posting))
            lengths = np.fromiter((self._lengths[d] for d in posting), np.float64, len(posting))
            cached = self._arrays[term] = (ids, tfs, lengths)
        return cached

    def scores(
        self, query: str, doc_ids: Iterable[int] | None = None, language: str | None = None
    ) -> dict[int, float]:
        """BM25 of every document sharing a term with the query (or of just `doc_ids`, 0 for no match)."""
        matches = self.match(query, language)
        if doc_ids is None:
            return dict(zip(matches.ids.tolist(), matches.scores.tolist(), strict=True))
        return matches.of(doc_ids)

    def search(self, query: str, k: int, language: str | None = None) -> list[tuple[int, float]]:
        """The k best (id, score), best first (ties by id); documents without a query term never appear."""
        return self.match(query, language).best(k)

    # --- persistence ---------------------------------------------------------------------------------
    def save(self, folder: Path) -> Path:
        """Write base + delta as a new generation in `folder`, make it current (atomic, like snapshots) and
        serve from it, mapped, with only the writes made during the save left in the delta; nothing is
        written when `folder`'s current generation is this index, unchanged since."""
        with self._saving:  # one save at a time: `_touched` follows one of them
            # Writes wait only while the delta (the dicts they change) is copied; the merge with the base
            # runs after, the writes made meanwhile recorded in `_touched` and re-applied on top of it.
            with self._lock.shared():
                state = (folder.resolve(), self.hwm, self._writes)
                if self._saved is not None and self._saved[0] == state:
                    return self._saved[1]
                delta = Delta.of(self._postings, self._lengths)
                base, hwm = self._base, self.hwm
                dead = base.dead.copy() if base is not None else np.zeros(0, bool)
                self._touched = set()
            try:
                staged = stage_generation(folder, base, dead, delta)
                del delta, dead
                described = self.analyser.describe()
                manifest = {"format_version": FORMAT_VERSION, "hwm": hwm, "analyser": described}
                generation = publish_generation(folder, staged, manifest)
                served = LexicalBase.open(generation)
            except BaseException:
                with self._lock.exclusive():
                    self._touched = None
                raise
            with self._lock.exclusive():
                self._rebase(served)
                self._saved = (state, generation)
        release_freed_memory()  # the delta's Python objects are gone: hand their heap back
        return generation

    def _rebase(self, base: LexicalBase) -> None:
        """Serve `base` (what the delta held when it was saved) plus the writes made since (`_touched`)."""
        touched, terms = self._touched or set(), self._terms
        self._touched = None
        before = (self._base, self._terms, self._lengths, self._postings, self._arrays, self._total_length)
        self._base = base
        self._terms, self._lengths, self._postings, self._arrays = {}, {}, {}, {}
        self._total_length = 0
        try:
            for doc_id in touched:
                self._remove(doc_id)  # its saved state, if any, is stale
                if doc_id in terms:
                    self._add(doc_id, terms[doc_id])
        except BaseException:  # (out of memory) keep serving the old base and the whole delta
            self._base, self._terms, self._lengths, self._postings, self._arrays, self._total_length = before
            raise

    @classmethod
    def load(cls, folder: Path, analyser: Analyser | None = None) -> LexicalIndex | None:
        """The current generation in `folder`, mapped, or None when absent, unreadable, of another format or
        analysed otherwise (another language, another analysis version)."""
        index = cls(analyser)
        for _ in range(2):  # a save elsewhere may remove the generation just read from CURRENT: read again
            try:
                generation = folder / (folder / CURRENT).read_text().strip()
                manifest = json.loads((generation / "manifest.json").read_text())
                if manifest.get("format_version") != FORMAT_VERSION or manifest.get("analyser") != (
                    index.analyser.describe()
                ):
                    return None
                index._base = LexicalBase.open(generation)
                index.hwm = int(manifest["hwm"])
                index._saved = ((folder.resolve(), index.hwm, 0), generation)
                return index
            except (OSError, ValueError, KeyError):
                continue
        return None
