"""Forward validation splits: a validated query never precedes a trained one, and `unseen` is exact."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evaluation.forward_splits import ForwardSplit, forward_splits, recent_holdout, unseen_queries

ORDERS = st.lists(st.integers(0, 400), min_size=8, max_size=120).map(lambda xs: [f"q{x}" for x in xs])


@given(ORDERS, st.integers(1, 5), st.floats(0.1, 0.9))
def test_no_validated_query_comes_before_a_trained_one(order: list[str], cuts: int, min_train: float) -> None:
    distinct = list(dict.fromkeys(order))
    position = {q: i for i, q in enumerate(distinct)}
    try:
        splits = forward_splits(order, cuts, min_train)
    except ValueError:
        assert round(len(distinct) * min_train) < 1 or len(distinct) - round(len(distinct) * min_train) < cuts
        return
    assert len(splits) == cuts
    for split in splits:
        assert split.train and split.validate and not set(split.train) & set(split.validate)
        assert max(position[q] for q in split.train) < min(position[q] for q in split.validate)
        assert list(split.train) == distinct[: split.cut]  # an expanding window: everything earlier
    blocks = [q for split in splits for q in split.validate]
    assert blocks == distinct[splits[0].cut :]  # the blocks tile the tail, in order, each query once


def test_pfcc_shaped_cut_points() -> None:
    splits = forward_splits([f"q{i}" for i in range(800)], cuts=3, min_train=0.4)
    assert [(s.cut, s.validate[0], s.validate[-1]) for s in splits] == [
        (320, "q320", "q479"),
        (480, "q480", "q639"),
        (640, "q640", "q799"),
    ]


@given(ORDERS, st.floats(0.05, 0.99))
def test_the_gate_holds_out_the_most_recent_queries(order: list[str], fraction: float) -> None:
    distinct = list(dict.fromkeys(order))
    if len(distinct) < 2:
        with pytest.raises(ValueError):
            recent_holdout(order, fraction, minimum=2)
        return
    split = recent_holdout(order, fraction, minimum=2)
    assert list(split.validate) == distinct[len(distinct) - len(split.validate) :]
    assert list(split.train) + list(split.validate) == distinct
    # Never all of them: a large fraction of a few queries still leaves the earliest to train on.
    assert len(split.validate) == min(len(distinct) - 1, max(2, round(len(distinct) * fraction)))


def test_a_single_query_cannot_be_held_out() -> None:
    with pytest.raises(ValueError):
        recent_holdout(["q0", "q0"], 0.5)


def test_unseen_queries_have_no_relevant_document_of_a_training_query() -> None:
    qrels = {"a": {"d1": 1}, "b": {"d2": 1, "d9": 0}, "c": {"d1": 1}, "d": {"d3": 1}, "e": {"d9": 1, "d2": 1}}
    split = ForwardSplit(cut=2, train=("a", "b"), validate=("c", "d", "e"))
    # c shares d1 with a; e shares d2 with b; d9 is only a non-relevant judgement of b: it does not count.
    assert unseen_queries(split, qrels) == ["d"]


@pytest.mark.parametrize(("cuts", "min_train"), [(0, 0.5), (2, 0.0), (2, 1.0)])
def test_bad_arguments_are_refused(cuts: int, min_train: float) -> None:
    with pytest.raises(ValueError):
        forward_splits([f"q{i}" for i in range(10)], cuts, min_train)
