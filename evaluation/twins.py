"""Twins: the same document stored twice in a corpus (a fact-check republished with a reworded title,
other quote marks, a trailing space), grouped so that any of them is a right match and a claim leaves
the corpus, in the open-world protocol, only together with its twins.

Two documents are twins when their texts are equal once normalised (case, quote marks, punctuation,
spacing), or when their vectors are nearly parallel (cosine >= `min_cosine`) and they share nearly all
their words (Jaccard >= `min_overlap`): a paraphrase of another claim shares the topic, not the words.
Candidate pairs come from each document's nearest neighbours (the caller's index); groups are the
connected components (union-find), so a chain of twins is one group.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence

from evaluation.decision_features import words

__all__ = ["MIN_COSINE", "MIN_OVERLAP", "normalized", "twin_groups"]

MIN_COSINE = 0.95
MIN_OVERLAP = 0.8
_QUOTES = str.maketrans(
    {c: "'" for c in "\u2018\u2019\u201a\u201b\u2032`\u00b4"}
    | {c: '"' for c in "\u201c\u201d\u201e\u201f\u2033"}
)
_NOT_WORD = re.compile(r"[\W_]+")


def normalized(text: str) -> str:
    """The text without case, quote marks, punctuation or runs of spaces (NFKC first)."""
    folded = unicodedata.normalize("NFKC", text).translate(_QUOTES).casefold()
    return _NOT_WORD.sub(" ", folded).strip()


def _jaccard(left: set[str], right: set[str]) -> float:
    return len(left & right) / len(left | right) if left or right else 1.0


def twin_groups(
    ids: Sequence[str],
    texts: Sequence[str],
    neighbours: Iterable[tuple[int, int, float]],
    min_cosine: float = MIN_COSINE,
    min_overlap: float = MIN_OVERLAP,
) -> list[list[str]]:
    """Groups of two or more twins (ids sorted, groups by their first id), from candidate pairs
    (row, row, cosine) and every pair of equal normalised texts."""
    parent = list(range(len(ids)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def join(i: int, j: int) -> None:
        a, b = root(i), root(j)
        if a != b:
            parent[max(a, b)] = min(a, b)

    keys = [normalized(t) for t in texts]
    first_of: dict[str, int] = {}
    for row, key in enumerate(keys):
        if key in first_of:
            join(first_of[key], row)
        else:
            first_of[key] = row
    vocab = [set(words(t)) for t in texts]
    for i, j, cosine in neighbours:
        if i != j and cosine >= min_cosine and _jaccard(vocab[i], vocab[j]) >= min_overlap:
            join(i, j)
    groups: dict[int, list[str]] = {}
    for row in range(len(ids)):
        groups.setdefault(root(row), []).append(ids[row])
    return sorted((sorted(group) for group in groups.values() if len(group) > 1), key=lambda g: g[0])
