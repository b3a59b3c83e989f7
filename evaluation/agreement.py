"""Chance-corrected agreement of several judges: Cohen's kappa per pair of judges (scikit-learn) and
Krippendorff's alpha over all of them (the `krippendorff` package), with null where undefined."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Literal

import krippendorff
import numpy as np

MIN_OVERLAP = 2


@dataclass(frozen=True)
class PairKappa:
    """Two judges, how many items both graded, and their kappa (None: too few or undefined)."""

    judges: tuple[str, str]
    overlap: int
    kappa: float | None


@dataclass(frozen=True)
class AgreementReport:
    """Every judge, kappa per pair of judges, alpha over all, and the counts they read."""

    judges: list[str]
    items: int
    shared_items: int
    pairs: list[PairKappa]
    alpha: float | None


def _finite(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def cohen_kappa(first: Sequence[float], second: Sequence[float]) -> float | None:
    """Cohen's kappa of two judges' grades of the same items; None below 2 items or when undefined
    (both judges gave one and the same grade throughout: no chance-corrected figure exists)."""
    if len(first) < MIN_OVERLAP:
        return None
    if len(set(first) | set(second)) < 2:
        return None
    # Imported here: scikit-learn (with SciPy) takes about a second to import, and every server and
    # worker process would pay it at start-up for a figure computed only when agreement is asked for.
    from sklearn.metrics import cohen_kappa_score

    return _finite(cohen_kappa_score(list(first), list(second)))


def krippendorff_alpha(matrix: np.ndarray, ordinal: bool) -> float | None:
    """Krippendorff's alpha of a judges x items matrix (NaN: not graded); None when no item has two
    grades or only one grade value occurs."""
    if matrix.size == 0 or not np.any(np.sum(~np.isnan(matrix), axis=0) >= 2):
        return None
    values = np.unique(matrix[~np.isnan(matrix)])
    if len(values) < 2:
        return None
    level: Literal["ordinal", "nominal"] = "ordinal" if ordinal else "nominal"
    return _finite(krippendorff.alpha(reliability_data=matrix, level_of_measurement=level))


def agreement(grades: Sequence[tuple[int, str, float]], ordinal: bool = False) -> AgreementReport:
    """Agreement of (item, judge, grade) triples: kappa for every two judges over the items both graded,
    alpha over every judge and item."""
    by_judge: dict[str, dict[int, float]] = defaultdict(dict)
    for item, judge, grade in grades:
        by_judge[judge][item] = grade
    judges = sorted(by_judge)
    items = sorted({item for item, _, _ in grades})
    kappas = []
    for first, second in combinations(judges, 2):
        shared = sorted(set(by_judge[first]) & set(by_judge[second]))
        a = [by_judge[first][i] for i in shared]
        b = [by_judge[second][i] for i in shared]
        kappas.append(PairKappa((first, second), len(shared), cohen_kappa(a, b)))
    column = {item: index for index, item in enumerate(items)}
    matrix = np.full((len(judges), len(items)), np.nan)
    for row, judge in enumerate(judges):
        for item, grade in by_judge[judge].items():
            matrix[row, column[item]] = grade
    shared_items = int(np.sum(np.sum(~np.isnan(matrix), axis=0) >= 2)) if items else 0
    alpha = krippendorff_alpha(matrix, ordinal) if len(judges) >= 2 else None
    return AgreementReport(judges, len(items), shared_items, kappas, alpha)
