"""Invariants shared by every batch order, the registry, and the overhead timer."""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from shuffling_helpers import TableEncoder, assert_permutation, make_blobs, random_encoder

from training.shuffling import (
    BATCH_ORDERS,
    BatchOrder,
    FileOrder,
    RandomOrder,
    batch_order_params,
    build_batch_order,
    measure_order_seconds,
)

ALL = ["random", "none", "example", "fast_words", "fast_clusters", "fast_neighbours"]
RANDOMIZED = [name for name in ALL if name != "none"]
# small parameters so that every strategy has real groups on a few dozen pairs
SMALL = {
    "example": {"group_size": 4, "n_neighbors": 10},
    "fast_words": {"group_size": 3},
    "fast_clusters": {"group_size": 3, "n_clusters": 4},
    "fast_neighbours": {"group_size": 3, "n_neighbors": 3},
}

WORDS = ["cat", "dog", "the", "a", "vaccine", "moon", "of", "fake", "5g"]
texts_st = st.lists(st.lists(st.sampled_from(WORDS), max_size=4).map(" ".join), max_size=30)


def _order(strategy: BatchOrder, firsts: Sequence[str], seconds: Sequence[str], **kw: int) -> np.ndarray:
    encode = random_encoder([*firsts, *seconds], seed=1) if strategy.needs_encoder else None
    return strategy.order(firsts, seconds, encode=encode, **kw)


def test_registry_names_and_encoder_flags() -> None:
    assert list(BATCH_ORDERS) == ALL
    needs = {name: build_batch_order(name).needs_encoder for name in ALL}
    assert needs == {
        "random": False,
        "none": False,
        "example": True,
        "fast_words": False,
        "fast_clusters": True,
        "fast_neighbours": True,
    }
    assert isinstance(build_batch_order("random"), RandomOrder)
    assert batch_order_params("example") == {
        "n_neighbors": 500,
        "group_size": 8,
        "by": "first",
        "skip_identical": False,
    }


def test_build_rejects_unknown_names_and_params() -> None:
    with pytest.raises(ValueError, match="valid names: random, none, example, fast_words"):
        build_batch_order("kmeans")
    with pytest.raises(ValueError, match="n_neighbors, group_size, by, skip_identical"):
        build_batch_order("example", group=4)
    with pytest.raises(ValueError, match="valid: none"):
        build_batch_order("none", seed=3)


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("example", {"n_neighbors": 0}),
        ("example", {"group_size": 0}),
        ("example", {"by": "third"}),
        ("fast_words", {"shingle_size": 0}),
        ("fast_clusters", {"n_clusters": 0}),
        ("fast_clusters", {"nredo": 0}),
        ("fast_neighbours", {"n_neighbors": 0}),
        ("fast_neighbours", {"group_size": True}),
    ],
)
def test_build_rejects_bad_values(name: str, params: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        build_batch_order(name, **params)


@pytest.mark.parametrize("name", ALL)
def test_bad_calls_are_rejected(name: str) -> None:
    strategy = build_batch_order(name)
    with pytest.raises(ValueError, match="differ in length"):
        _order(strategy, ["a", "b"], ["a"], batch_size=2, epoch=0, seed=0)
    with pytest.raises(ValueError, match="batch_size"):
        _order(strategy, ["a"], ["b"], batch_size=0, epoch=0, seed=0)
    with pytest.raises(ValueError, match="seed and epoch"):
        _order(strategy, ["a"], ["b"], batch_size=2, epoch=-1, seed=0)
    if strategy.needs_encoder:
        with pytest.raises(ValueError, match="needs an encoder"):
            strategy.order(["a", "b"], ["c", "d"], batch_size=2, epoch=0, seed=0)
        short = TableEncoder({"a": np.ones(2)})
        with pytest.raises(ValueError, match="vectors for"):
            strategy.order(
                ["a", "b"], ["c", "d"], batch_size=2, epoch=0, seed=0, encode=lambda t: short(["a"])
            )


@pytest.mark.parametrize("name", ALL)
@settings(max_examples=20, deadline=None)
@given(
    firsts=texts_st,
    data=st.data(),
    batch_size=st.integers(1, 6),
    epoch=st.integers(0, 3),
    seed=st.integers(0, 2**32),
)
def test_order_is_a_deterministic_permutation(
    name: str, firsts: list[str], data: st.DataObject, batch_size: int, epoch: int, seed: int
) -> None:
    seconds = data.draw(st.lists(st.sampled_from(WORDS), min_size=len(firsts), max_size=len(firsts)))
    for by in ("first", "second") if name not in ("random", "none") else ("first",):
        params = {**SMALL.get(name, {}), **({"by": by} if name not in ("random", "none") else {})}
        strategy = build_batch_order(name, **params)
        kw = {"batch_size": batch_size, "epoch": epoch, "seed": seed}
        order = _order(strategy, firsts, seconds, **kw)
        assert_permutation(order, len(firsts))
        np.testing.assert_array_equal(order, _order(build_batch_order(name, **params), firsts, seconds, **kw))


@pytest.mark.parametrize("name", RANDOMIZED)
def test_order_changes_with_epoch_and_seed(name: str) -> None:
    data = make_blobs([12, 12, 12], seed=5)
    # every text gets a different content word as well, so word shingles have choices to make
    firsts = [f"{t} word{i % 7} topic{i % 5}" for i, t in enumerate(data.firsts)]
    table = {f"{t} word{i % 7} topic{i % 5}": data.encoder.table[t] for i, t in enumerate(data.firsts)}
    encode = TableEncoder(table) if build_batch_order(name).needs_encoder else None
    strategy = build_batch_order(name, **SMALL.get(name, {}))

    def run(epoch: int, seed: int) -> list[int]:
        order = strategy.order(firsts, data.seconds, batch_size=6, epoch=epoch, seed=seed, encode=encode)
        return order.tolist()

    assert run(0, 0) == run(0, 0)
    assert run(0, 0) != run(1, 0)
    assert run(0, 0) != run(0, 1)


def test_file_order_is_identity_every_epoch() -> None:
    order = FileOrder().order(list("abcde"), list("vwxyz"), batch_size=2, epoch=7, seed=3)
    np.testing.assert_array_equal(order, np.arange(5))


@pytest.mark.parametrize("name", ALL)
def test_empty_input(name: str) -> None:
    order = build_batch_order(name).order([], [], batch_size=4, epoch=0, seed=0, encode=TableEncoder({}))
    assert order.shape == (0,) and order.dtype == np.int64


def test_measure_order_seconds_includes_encoding() -> None:
    data = make_blobs([4, 4])

    def slow_encode(texts: Sequence[str]) -> np.ndarray:
        time.sleep(0.05)
        return data.encoder(texts)

    strategy = build_batch_order("example", group_size=4)
    seconds = measure_order_seconds(strategy, data.firsts, data.seconds, 4, slow_encode)
    assert 0.05 <= seconds < 5.0
    # strategies without an encoder never call it
    calls: list[Sequence[str]] = []

    def counting_encode(texts: Sequence[str]) -> np.ndarray:
        calls.append(texts)
        return data.encoder(texts)

    measure_order_seconds(RandomOrder(), data.firsts, data.seconds, 4, counting_encode)
    assert calls == []
