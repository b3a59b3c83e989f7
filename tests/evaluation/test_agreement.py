"""Judges' agreement: Cohen's kappa per pair of judges (checked by hand), Krippendorff's alpha over all,
and null where a figure is undefined."""

from __future__ import annotations

import pytest

from evaluation.agreement import agreement


def test_kappa_by_hand_and_alpha() -> None:
    # a: 1 1 0 0, b: 1 0 0 0 -> observed 3/4, chance (1/2)(1/4) + (1/2)(3/4) = 1/2, kappa = 1/2.
    grades = [(1, "a", 1.0), (2, "a", 1.0), (3, "a", 0.0), (4, "a", 0.0)]
    grades += [(1, "b", 1.0), (2, "b", 0.0), (3, "b", 0.0), (4, "b", 0.0)]
    report = agreement(grades)
    (pair,) = report.pairs
    assert pair.judges == ("a", "b") and pair.overlap == 4 and pair.kappa == pytest.approx(0.5)
    # Nominal alpha by hand: 8 pairable values, 3 ones and 5 zeros; unit 2 alone disagrees, so the
    # coincidences o_01 = o_10 = 1 and D_o = 2/8 = 0.25; D_e = 2 * 3 * 5 / (8 * 7) = 30/56;
    # alpha = 1 - D_o / D_e = 1 - 0.25 * 56 / 30 = 0.5333...
    assert report.alpha == pytest.approx(1 - 0.25 * 56 / 30)
    assert report.items == 4 and report.shared_items == 4


def test_undefined_figures_are_null() -> None:
    alone = agreement([(1, "a", 1.0), (2, "a", 0.0)])
    assert alone.pairs == [] and alone.alpha is None
    apart = agreement([(1, "a", 1.0), (2, "b", 0.0)])  # no pair graded by both
    assert apart.pairs[0].overlap == 0 and apart.pairs[0].kappa is None and apart.alpha is None
    same = agreement([(1, "a", 1.0), (2, "a", 1.0), (1, "b", 1.0), (2, "b", 1.0)])  # one grade throughout
    assert same.pairs[0].kappa is None and same.alpha is None
    graded = agreement([(1, "a", 3.0), (2, "a", 0.0), (1, "b", 3.0), (2, "b", 0.0)], ordinal=True)
    assert graded.pairs[0].kappa == pytest.approx(1.0) and graded.alpha == pytest.approx(1.0)
