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
checkpoints (`save`/`load`, model-independent, one folder per corpus) and replays the log after it.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import uuid
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from indexes.analysis import Analyser
from indexes.languages import MULTI
from pairank.locks import SharedExclusiveLock

__all__ = ["K1", "B", "Analyser", "LexicalIndex", "Matches"]

K1, B = 1.5, 0.75
FORMAT_VERSION = 1
_CURRENT = "CURRENT"


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
        return _best(self.ids, self.scores, k)

    def of(self, doc_ids: Iterable[int]) -> dict[int, float]:
        """The score of each given id (0 for one that matches no query term)."""
        wanted = np.fromiter(doc_ids, np.int64)
        places = np.minimum(np.searchsorted(self.ids, wanted), max(len(self.ids) - 1, 0))
        hit = (self.ids[places] == wanted) if len(self.ids) else np.zeros(len(wanted), bool)
        values = np.where(hit, self.scores[places] if len(self.ids) else 0.0, 0.0)
        return dict(zip(wanted.tolist(), values.tolist(), strict=True))


def _best(ids: np.ndarray, values: np.ndarray, k: int) -> list[tuple[int, float]]:
    if not len(ids):
        return []
    if 0 < k < len(values):  # sort only the k best and those tied with the k-th, not every match
        kth = np.partition(-values, k - 1)[k - 1]
        keep = np.flatnonzero(-values <= kth)
        ids, values = ids[keep], values[keep]
    order = np.lexsort((ids, -values))[:k]
    return [(int(ids[i]), float(values[i])) for i in order]


class LexicalIndex:
    """BM25 over documents addressed by database id, updated in place by upserts and deletes."""

    def __init__(self, analyser: Analyser | None = None) -> None:
        self.analyser = analyser or Analyser()
        self.hwm = 0
        self._terms: dict[int, Counter[str]] = {}  # doc id -> term frequencies
        self._lengths: dict[int, int] = {}
        self._postings: dict[str, dict[int, int]] = {}  # term -> {doc id: tf}
        self._arrays: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}  # postings as arrays
        self._total_length = 0
        self._lock = SharedExclusiveLock()

    def __len__(self) -> int:
        return len(self._terms)

    def __contains__(self, doc_id: int) -> bool:
        return doc_id in self._terms

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
        if counts is None:
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

        Each term's postings are kept as arrays, rebuilt after a write touches the term: a query over a
        10,000-document corpus then costs a few array operations per term instead of a Python loop over
        thousands of postings. Contributions are summed in query-token order, exactly as a per-document
        running sum would (np.bincount adds in input order), so scores do not depend on the path.
        """
        tokens = self.analyser(query, language)
        with self._lock.shared():
            n = len(self._terms)
            if n == 0:
                return Matches.empty()
            average = self._total_length / n
            parts_ids: list[np.ndarray] = []
            parts_scores: list[np.ndarray] = []
            for term in tokens:  # a repeated query token counts each time, as in bm25s
                arrays = self._term_arrays(term)
                if arrays is None:
                    continue
                ids, tfs, lengths = arrays
                idf = math.log(1 + (n - len(ids) + 0.5) / (len(ids) + 0.5))
                norm = K1 * (1 - B + B * lengths / average)
                parts_ids.append(ids)
                parts_scores.append(idf * tfs / (tfs + norm))
        if not parts_ids:
            return Matches.empty()
        unique, inverse = np.unique(np.concatenate(parts_ids), return_inverse=True)
        return Matches(unique, np.bincount(inverse, weights=np.concatenate(parts_scores)))

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

    @staticmethod
    def best(found: dict[int, float], k: int) -> list[tuple[int, float]]:
        """The k best of a `scores` answer, best first (ties by id)."""
        ids = np.fromiter(found.keys(), dtype=np.int64, count=len(found))
        values = np.fromiter(found.values(), dtype=np.float64, count=len(found))
        return _best(ids, values, k)

    # --- persistence ---------------------------------------------------------------------------------
    def save(self, folder: Path) -> Path:
        """Write the index as a new generation in `folder` and make it current (atomic, like snapshots)."""
        with self._lock.shared():
            doc_ids = np.fromiter(self._terms.keys(), dtype=np.int64, count=len(self._terms))
            vocabulary = sorted(self._postings)
            term_number = {term: number for number, term in enumerate(vocabulary)}
            pointers: list[int] = [0]
            terms: list[int] = []
            freqs: list[int] = []
            for counts in self._terms.values():
                terms.extend(term_number[t] for t in counts)
                freqs.extend(counts.values())
                pointers.append(len(terms))
            hwm = self.hwm
        folder.mkdir(parents=True, exist_ok=True)
        name = f"gen-{hwm}-{uuid.uuid4().hex[:8]}"
        tmp = folder / f".tmp-{name}"
        pointer = folder / f".{_CURRENT}.{uuid.uuid4().hex[:8]}"
        try:
            tmp.mkdir()
            np.save(tmp / "doc_ids.npy", doc_ids)
            np.save(tmp / "pointers.npy", np.asarray(pointers, dtype=np.int64))
            np.save(tmp / "terms.npy", np.asarray(terms, dtype=np.int32))
            np.save(tmp / "freqs.npy", np.asarray(freqs, dtype=np.int32))
            manifest = {"format_version": FORMAT_VERSION, "hwm": hwm, "analyser": self.analyser.describe()}
            (tmp / "vocabulary.json").write_text(json.dumps(vocabulary, ensure_ascii=False))
            (tmp / "manifest.json").write_text(json.dumps(manifest))
            os.replace(tmp, folder / name)
            pointer.write_text(name)
            os.replace(pointer, folder / _CURRENT)
        except BaseException:
            # A full disk: nothing half-written stays behind; CURRENT still names the previous generation
            # (the new one, if it was renamed into place, is removed with the next save's stale ones).
            shutil.rmtree(tmp, ignore_errors=True)
            pointer.unlink(missing_ok=True)
            raise
        for child in folder.iterdir():  # older generations: nobody maps these, they are read once
            if child.is_dir() and child.name != name and not child.name.startswith(".tmp-"):
                _remove_tree(child)
        return folder / name

    @classmethod
    def load(cls, folder: Path, analyser: Analyser | None = None) -> LexicalIndex | None:
        """The current generation in `folder`, or None when absent, unreadable or analysed otherwise (another
        language, another analysis version)."""
        index = cls(analyser)
        try:
            generation = folder / (folder / _CURRENT).read_text().strip()
            manifest = json.loads((generation / "manifest.json").read_text())
            if manifest.get("format_version") != FORMAT_VERSION or manifest.get("analyser") != (
                index.analyser.describe()
            ):
                return None
            vocabulary = json.loads((generation / "vocabulary.json").read_text())
            doc_ids = np.load(generation / "doc_ids.npy")
            pointers = np.load(generation / "pointers.npy")
            terms = np.load(generation / "terms.npy")
            freqs = np.load(generation / "freqs.npy")
        except (OSError, ValueError, KeyError):
            return None
        for row, doc_id in enumerate(doc_ids.tolist()):
            start, stop = int(pointers[row]), int(pointers[row + 1])
            counts = Counter(
                dict(zip((vocabulary[t] for t in terms[start:stop]), freqs[start:stop].tolist(), strict=True))
            )
            index._add(doc_id, counts)
        index.hwm = int(manifest["hwm"])
        return index


def _remove_tree(path: Path) -> None:
    for child in path.iterdir():
        child.unlink()
    path.rmdir()
