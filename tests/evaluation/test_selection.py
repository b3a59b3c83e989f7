"""Grouped folds and cross-validated selection (evaluation/selection.py)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.selection import cross_validated_choice, group_folds, query_groups


def test_queries_sharing_a_relevant_document_are_one_group() -> None:
    qrels = {"q1": {"d1": 1}, "q2": {"d1": 1, "d2": 1}, "q3": {"d2": 1}, "q4": {"d3": 1, "d1": 0}}
    assert query_groups(qrels) == [["q1", "q2", "q3"], ["q4"]]  # a not-relevant d1 joins nothing


QRELS = st.dictionaries(
    st.sampled_from([f"q{i}" for i in range(30)]),
    st.dictionaries(st.sampled_from([f"d{i}" for i in range(12)]), st.integers(0, 2), min_size=1, max_size=3),
    min_size=2,
)


@settings(max_examples=80, deadline=None)
@given(QRELS, st.integers(2, 6), st.integers(0, 5))
def test_fold_assignment_never_splits_a_group(qrels: dict, k: int, seed: int) -> None:
    groups = query_groups(qrels)
    folds = group_folds(groups, k, seed)
    assert set(folds) == set(qrels)
    for group in groups:
        assert len({folds[q] for q in group}) == 1
    for query, judged in qrels.items():  # no relevant document is judged in two folds
        for other, other_judged in qrels.items():
            shared = {d for d, g in judged.items() if g > 0} & {d for d, g in other_judged.items() if g > 0}
            if shared:
                assert folds[query] == folds[other]


def test_cross_validation_chooses_on_other_folds_and_scores_the_held_out_one() -> None:
    per_query = {
        "dense": {"a": 1.0, "b": 0.0, "c": 1.0, "d": 0.0},
        "hybrid": {"a": 1.0, "b": 1.0, "c": 0.0, "d": 1.0},
    }
    folds = {"a": 0, "b": 0, "c": 1, "d": 1}
    result = cross_validated_choice(per_query, folds)
    assert result["choice"] == "hybrid" and result["means"] == {"dense": 0.5, "hybrid": 0.75}
    # Fold 0 is chosen on c, d (hybrid 0.5 vs dense 0.5: the first listed wins) -> dense scores 0.5 on a, b;
    # fold 1 is chosen on a, b (hybrid) -> hybrid scores 0.5 on c, d.
    assert result["chosen_per_fold"] == ["dense", "hybrid"]
    assert result["cv_per_fold"] == [0.5, 0.5] and result["cv_mean"] == pytest.approx(0.5)
    with pytest.raises(ValueError, match="2 folds"):
        group_folds([["a"]], 1)
