"""A BM25 index per corpus that follows the same change log as the vector index.

Scoring is BM25 in its Lucene form, exactly as `bm25s` computes it (`method="lucene"`, k1 = 1.5,
b = 0.75): idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5)), and a document scores
sum over query tokens of idf * tf / (tf + k1 * (1 - b + b * |d| / avgdl)). Tokens are bm25s's too:
lower-cased `\\w\\w+` runs, its English stop words removed, then (by default) the Snowball English
stemmer (PyStemmer). bm25s itself builds a static sparse matrix with the idf baked in, so it cannot take
one changed document without a rebuild; this index keeps postings that a write updates in place
(tests/indexes/test_lexical.py checks its scores against bm25s's on the same corpus).

Like the vector index it carries the change-log sequence number it has applied (`hwm`), is saved at
checkpoints (`save`/`load`, model-independent, one folder per corpus) and replays the log after it.
"""

from __future__ import annotations

import json
import math
import os
import re
import uuid
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from pairank.locks import SharedExclusiveLock

__all__ = ["K1", "B", "LexicalIndex", "Tokenizer"]

K1, B = 1.5, 0.75
FORMAT_VERSION = 1
_TOKEN = re.compile(r"(?u)\b\w\w+\b")
_CURRENT = "CURRENT"


@lru_cache(maxsize=1)
def _english_stop_words() -> frozenset[str]:
    from bm25s.stopwords import STOPWORDS_EN

    return frozenset(STOPWORDS_EN)


@dataclass(frozen=True)
class Tokenizer:
    """bm25s's tokenization: lower-case word runs of 2+ characters, no stop words, optional stemming."""

    stem: bool = True

    def __call__(self, text: str) -> list[str]:
        """The index terms of a text."""
        stop = _english_stop_words()
        words = [w for w in _TOKEN.findall(text.lower()) if w not in stop]
        return _stemmer().stemWords(words) if self.stem and words else words

    def describe(self) -> dict[str, Any]:
        """What a snapshot records, so that a different tokenizer never reads it."""
        return {"pattern": _TOKEN.pattern, "lower": True, "stop_words": "bm25s english", "stemmer": self.stem}


@lru_cache(maxsize=1)
def _stemmer() -> Any:
    import Stemmer  # PyStemmer: the Snowball stemmers in C

    return Stemmer.Stemmer("english")


class LexicalIndex:
    """BM25 over documents addressed by database id, updated in place by upserts and deletes."""

    def __init__(self, tokenizer: Tokenizer | None = None) -> None:
        self.tokenizer = tokenizer or Tokenizer()
        self.hwm = 0
        self._terms: dict[int, Counter[str]] = {}  # doc id -> term frequencies
        self._lengths: dict[int, int] = {}
        self._postings: dict[str, dict[int, int]] = {}  # term -> {doc id: tf}
        self._total_length = 0
        self._lock = SharedExclusiveLock()

    def __len__(self) -> int:
        return len(self._terms)

    def __contains__(self, doc_id: int) -> bool:
        return doc_id in self._terms

    def apply(
        self, upserts: Sequence[tuple[int, str]], deletes: Sequence[int] = (), *, hwm: int | None = None
    ) -> None:
        """Replace or add (id, text) documents and remove ids; `hwm` is the log position now applied."""
        tokenized = [(doc_id, Counter(self.tokenizer(text))) for doc_id, text in upserts]
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

    def _remove(self, doc_id: int) -> None:
        counts = self._terms.pop(doc_id, None)
        if counts is None:
            return
        self._total_length -= self._lengths.pop(doc_id)
        for term in counts:
            posting = self._postings[term]
            del posting[doc_id]
            if not posting:
                del self._postings[term]

    def scores(self, query: str, doc_ids: Iterable[int] | None = None) -> dict[int, float]:
        """BM25 of every document sharing a term with the query (or of just `doc_ids`, 0 for no match)."""
        tokens = self.tokenizer(query)
        with self._lock.shared():
            n = len(self._terms)
            if n == 0:
                return {} if doc_ids is None else dict.fromkeys(doc_ids, 0.0)
            average = self._total_length / n
            wanted = None if doc_ids is None else set(doc_ids)
            totals: dict[int, float] = {} if wanted is None else dict.fromkeys(wanted, 0.0)
            for term in tokens:  # a repeated query token counts each time, as in bm25s
                posting = self._postings.get(term)
                if not posting:
                    continue
                idf = math.log(1 + (n - len(posting) + 0.5) / (len(posting) + 0.5))
                items = (
                    posting.items() if wanted is None else ((d, posting[d]) for d in wanted if d in posting)
                )
                for doc_id, tf in items:
                    norm = K1 * (1 - B + B * self._lengths[doc_id] / average)
                    totals[doc_id] = totals.get(doc_id, 0.0) + idf * tf / (tf + norm)
            return totals

    def search(self, query: str, k: int) -> list[tuple[int, float]]:
        """The k best (id, score), best first (ties by id); documents without a query term never appear."""
        return self.best(self.scores(query), k)

    @staticmethod
    def best(found: dict[int, float], k: int) -> list[tuple[int, float]]:
        """The k best of a `scores` answer, best first (ties by id)."""
        if not found:
            return []
        ids = np.fromiter(found.keys(), dtype=np.int64, count=len(found))
        values = np.fromiter(found.values(), dtype=np.float64, count=len(found))
        order = np.lexsort((ids, -values))[:k]
        return [(int(ids[i]), float(values[i])) for i in order]

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
        tmp.mkdir()
        np.save(tmp / "doc_ids.npy", doc_ids)
        np.save(tmp / "pointers.npy", np.asarray(pointers, dtype=np.int64))
        np.save(tmp / "terms.npy", np.asarray(terms, dtype=np.int32))
        np.save(tmp / "freqs.npy", np.asarray(freqs, dtype=np.int32))
        manifest = {"format_version": FORMAT_VERSION, "hwm": hwm, "tokenizer": self.tokenizer.describe()}
        (tmp / "vocabulary.json").write_text(json.dumps(vocabulary, ensure_ascii=False))
        (tmp / "manifest.json").write_text(json.dumps(manifest))
        os.replace(tmp, folder / name)
        pointer = folder / f".{_CURRENT}.{uuid.uuid4().hex[:8]}"
        pointer.write_text(name)
        os.replace(pointer, folder / _CURRENT)
        for child in folder.iterdir():  # older generations: nobody maps these, they are read once
            if child.is_dir() and child.name != name and not child.name.startswith(".tmp-"):
                _remove_tree(child)
        return folder / name

    @classmethod
    def load(cls, folder: Path, tokenizer: Tokenizer | None = None) -> LexicalIndex | None:
        """The current generation in `folder`, or None when absent, unreadable or from another tokenizer."""
        index = cls(tokenizer)
        try:
            generation = folder / (folder / _CURRENT).read_text().strip()
            manifest = json.loads((generation / "manifest.json").read_text())
            if manifest.get("format_version") != FORMAT_VERSION or manifest.get("tokenizer") != (
                index.tokenizer.describe()
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
