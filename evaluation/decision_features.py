"""What a match decision reads of one query's ranked candidates: a feature row per candidate.

A desk asks of a ranked list "is one of these the claim, or was it never checked?". The first stage's
scores answer it poorly on their own: a cosine's meaning moves with the query and the corpus (the best
of any query looks like a match). The features describe each candidate both absolutely (its cosine, its
BM25, the shares of the query's and of its own content words they share) and against the rest of the
list (its margins over the next candidate, its gap to the best, whether it leads the dense and the
lexical side), plus the two texts' lengths (a short text matches many claims by accident).
`evaluation/decisions.py` learns a probability from them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from indexes.analysis import terms

__all__ = ["FEATURES", "Candidate", "candidate_features", "words"]

FEATURES = (
    "cosine",
    "margin_to_next",
    "gap_to_best",
    "log_bm25",
    "bm25_share_of_best",
    "inverse_rank",
    "leads_dense",
    "leads_lexical",
    "query_words_held",
    "document_words_held",
    "bm25_margin",
    "log_query_words",
    "log_document_words",
)
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Candidate:
    """One ranked candidate as the decision sees it: its id, text, place and first-stage scores."""

    doc_id: str
    text: str
    rank: int  # 1-based, in the served order
    cosine: float
    lexical: float  # BM25 (0 when the ranking computed none, or no word is shared)


def words(text: str) -> list[str]:
    """Lower-cased word runs (any script): the unit of the length features."""
    return _WORD.findall(text.lower())


def _terms(text: str) -> list[str]:
    """Content words as English BM25 sees them (stop words out, stemmed): the unit of the overlap
    features (a decision model is calibrated on its corpus's texts, whatever their language)."""
    return terms(text, "en")


def candidate_features(query: str, ranked: Sequence[Candidate]) -> np.ndarray:
    """One row of FEATURES per candidate, in the given (served) order."""
    if not ranked:
        return np.zeros((0, len(FEATURES)), dtype=np.float64)
    cosines = np.array([c.cosine for c in ranked], dtype=np.float64)
    bm25 = np.array([max(c.lexical, 0.0) for c in ranked], dtype=np.float64)
    following = np.append(cosines[1:], 0.0)  # the last candidate's margin is over nothing
    next_bm25 = np.append(bm25[1:], 0.0)
    best_bm25 = float(bm25.max())
    query_terms = set(_terms(query))
    rows = []
    for i, candidate in enumerate(ranked):
        document_words = words(candidate.text)
        document_terms = set(_terms(candidate.text))
        shared = len(query_terms & document_terms)
        rows.append(
            [
                cosines[i],
                cosines[i] - following[i],
                float(cosines.max()) - cosines[i],
                math.log1p(bm25[i]),
                bm25[i] / best_bm25 if best_bm25 > 0 else 0.0,
                1.0 / candidate.rank,
                float(cosines[i] >= cosines.max()),
                float(best_bm25 > 0 and bm25[i] >= best_bm25),
                shared / len(query_terms) if query_terms else 0.0,
                shared / len(document_terms) if document_terms else 0.0,
                (bm25[i] - next_bm25[i]) / best_bm25 if best_bm25 > 0 else 0.0,
                math.log1p(len(set(words(query)))),
                math.log1p(len(document_words)),
            ]
        )
    return np.asarray(rows, dtype=np.float64)
