"""Choosing a setting that holds on unseen queries: grouped folds and cross-validated selection.

Queries that share a relevant document (near-duplicate tweets about one claim) are one group, and a
group never straddles two folds, so a held-out fold asks about documents the other folds never saw
judged: the situation of a new query about an unseen claim. A setting is chosen on the other folds and
scored on the held-out one; the mean of those held-out scores (and their spread) is the honest estimate.
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Mapping
from typing import Any

__all__ = ["cross_validated_choice", "group_folds", "query_groups"]


def query_groups(qrels: Mapping[str, Mapping[str, int]]) -> list[list[str]]:
    """Queries joined (transitively) by a shared relevant document, each group sorted."""
    parent: dict[str, str] = {query_id: query_id for query_id in qrels}

    def root(node: str) -> str:
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    first_query_of: dict[str, str] = {}
    for query_id, judged in qrels.items():
        for doc_id, grade in judged.items():
            if grade <= 0:
                continue
            other = first_query_of.setdefault(doc_id, query_id)
            parent[root(query_id)] = root(other)
    groups: dict[str, list[str]] = {}
    for query_id in qrels:
        groups.setdefault(root(query_id), []).append(query_id)
    return sorted((sorted(g) for g in groups.values()), key=lambda g: g[0])


def group_folds(groups: list[list[str]], k: int, seed: int = 0) -> dict[str, int]:
    """Fold (0..k-1) of each query: whole groups, largest first, each to the currently smallest fold."""
    if k < 2:
        raise ValueError(f"cross-validation needs at least 2 folds, got {k}")
    order = list(groups)
    random.Random(seed).shuffle(order)  # ties in size: a seeded, not an alphabetical, order
    order.sort(key=len, reverse=True)
    sizes = [0] * k
    fold_of: dict[str, int] = {}
    for group in order:
        fold = min(range(k), key=lambda f: (sizes[f], f))
        sizes[fold] += len(group)
        fold_of.update(dict.fromkeys(group, fold))
    return fold_of


def _mean(values: Mapping[str, float], queries: list[str]) -> float:
    return statistics.fmean(values.get(q, 0.0) for q in queries) if queries else float("nan")


def cross_validated_choice(
    per_query: Mapping[str, Mapping[str, float]], fold_of: Mapping[str, int]
) -> dict[str, Any]:
    """Pick the setting with the best mean over all queries, and estimate it honestly by cross-validation.

    `per_query` maps setting -> query -> metric value (higher is better; ties keep the given order).
    """
    settings = list(per_query)
    queries = list(fold_of)
    means = {s: _mean(per_query[s], queries) for s in settings}
    held_out, chosen_per_fold = [], []
    for fold in sorted(set(fold_of.values())):
        train = [q for q in queries if fold_of[q] != fold]
        test = [q for q in queries if fold_of[q] == fold]
        best = max(settings, key=lambda s: _mean(per_query[s], train))
        chosen_per_fold.append(best)
        held_out.append(_mean(per_query[best], test))
    return {
        "choice": max(settings, key=lambda s: means[s]),
        "means": means,
        "cv_mean": statistics.fmean(held_out),
        "cv_std": statistics.stdev(held_out) if len(held_out) > 1 else 0.0,
        "cv_per_fold": held_out,
        "chosen_per_fold": chosen_per_fold,
    }
