"""Forward validation: train on earlier queries, validate on later ones, at several cut points.

Random (even grouped) folds let a model train on next month's queries and validate on last month's, and
on PFCC-S they measured a fine-tuning gain that vanished on the later, withheld queries (issue 29). A
desk that checks claims needs the estimate for *tomorrow's* queries, so the validation block always
lies after everything trained on. Queries come in time order (pair `created_at` in the service, file
order for the shared datasets); the last `1 - min_train` of them are cut into `cuts` consecutive
blocks, and block i is validated by a model trained on every query before it (an expanding window).

`unseen_only` keeps only the validation queries whose relevant documents no training query mentions:
the withheld PFCC-S test split is made of such queries (claims no pair mentions), so both the whole
block and its unseen part are worth reporting.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = ["ForwardSplit", "forward_splits", "recent_holdout", "unseen_queries"]


@dataclass(frozen=True)
class ForwardSplit:
    """One cut point: the queries trained on (all earlier) and the block validated on (later)."""

    cut: int  # index of the first validation query in the time order
    train: tuple[str, ...]
    validate: tuple[str, ...]


def forward_splits(
    ordered_queries: Sequence[str], cuts: int = 3, min_train: float = 0.4
) -> list[ForwardSplit]:
    """`cuts` expanding-window splits: block i of the last `1 - min_train` queries after all before it."""
    if cuts < 1:
        raise ValueError(f"forward validation needs at least 1 cut point, got {cuts}")
    if not 0 < min_train < 1:
        raise ValueError(f"min_train must be in (0, 1), got {min_train}")
    queries = list(dict.fromkeys(ordered_queries))  # a query counts at its first appearance
    first = round(len(queries) * min_train)
    tail = len(queries) - first
    if first < 1 or tail < cuts:
        raise ValueError(f"{len(queries)} queries are too few for {cuts} forward cut points")
    bounds = [first + (tail * i) // cuts for i in range(cuts + 1)]
    return [
        ForwardSplit(cut=start, train=tuple(queries[:start]), validate=tuple(queries[start:end]))
        for start, end in zip(bounds, bounds[1:], strict=False)
    ]


def recent_holdout(ordered_queries: Sequence[str], fraction: float, minimum: int = 1) -> ForwardSplit:
    """The gate's split: the most recent `fraction` of the queries (at least `minimum`) held out, and
    never all of them: the earliest query always trains."""
    queries = list(dict.fromkeys(ordered_queries))
    if len(queries) < 2:
        raise ValueError(f"{len(queries)} queries cannot be split into training and validation")
    held = min(len(queries) - 1, max(minimum, round(len(queries) * fraction)))
    start = len(queries) - held
    return ForwardSplit(cut=start, train=tuple(queries[:start]), validate=tuple(queries[start:]))


def unseen_queries(
    split: ForwardSplit, qrels: Mapping[str, Mapping[str, float]], relevance_level: float = 1
) -> list[str]:
    """The split's validation queries none of whose relevant documents a training query has."""
    seen = {
        doc
        for query in split.train
        for doc, grade in qrels.get(query, {}).items()
        if grade >= relevance_level
    }
    return [
        query
        for query in split.validate
        if not any(grade >= relevance_level and doc in seen for doc, grade in qrels.get(query, {}).items())
    ]
