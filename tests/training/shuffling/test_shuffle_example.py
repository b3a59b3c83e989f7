"""Example-based shuffling (Algorithm 1): neighbour groups, step-by-step agreement, duplicates."""

from __future__ import annotations

from unittest import mock

import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from shuffling_helpers import TableEncoder, assert_permutation, make_blobs, slices

import training.shuffling.example as example_module
from indexes.knn import l2_normalize
from training.shuffling import ExampleOrder
from training.shuffling.base import epoch_rng


def reference_algorithm_1(
    emb: np.ndarray, texts: list[str], shuffled: np.ndarray, s: int, n: int, skip_identical: bool
) -> list[int]:
    """Algorithm 1 written plainly with brute-force numpy neighbours."""
    sims = emb.astype(np.float64) @ emb.T.astype(np.float64)
    result: list[int] = []
    used: set[int] = set()
    for e in shuffled.tolist():
        if e in used:
            continue
        neighbours = [j for j in np.argsort(-sims[e], kind="stable").tolist() if j != e][:n]
        group: list[int] = []
        group_texts = {texts[e]}
        for j in neighbours:
            if len(group) == s - 1:
                break
            if j in used or (skip_identical and texts[j] in group_texts):
                continue
            group.append(j)
            group_texts.add(texts[j])
        result += [*group, e]
        used |= {*group, e}
    return result[::-1]


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 20),
    group_size=st.integers(1, 6),
    n_neighbors=st.integers(1, 25),
    skip_identical=st.booleans(),
    chunk=st.sampled_from([1, 3, 256]),
    seed=st.integers(0, 2**16),
    epoch=st.integers(0, 2),
)
def test_matches_reference_step_by_step(
    n: int, group_size: int, n_neighbors: int, skip_identical: bool, chunk: int, seed: int, epoch: int
) -> None:
    rng = np.random.default_rng(seed)
    texts = [f"t{i}" for i in range(n)]
    vectors = l2_normalize(rng.normal(size=(n, 16)))
    sims = np.sort(vectors.astype(np.float64) @ vectors.T.astype(np.float64), axis=1)
    # Faiss computes in float32: skip draws with near-ties, whose order is a matter of rounding
    assume(n < 2 or np.diff(sims, axis=1).min() > 1e-5)
    encoder = TableEncoder(dict(zip(texts, vectors, strict=True)))
    strategy = ExampleOrder(n_neighbors=n_neighbors, group_size=group_size, skip_identical=skip_identical)
    with mock.patch.object(example_module, "_CHUNK", chunk):
        order = strategy.order(texts, texts, batch_size=4, epoch=epoch, seed=seed, encode=encoder)
    # the shuffle of step 3 is the first draw of the epoch's generator
    shuffled = epoch_rng(seed, epoch).permutation(n)
    expected = reference_algorithm_1(vectors, texts, shuffled, group_size, n_neighbors, skip_identical)
    assert order.tolist() == expected


@settings(max_examples=30, deadline=None)
@given(
    n_blobs=st.integers(1, 4),
    per_blob=st.integers(1, 3),
    group_size=st.integers(2, 5),
    by=st.sampled_from(["first", "second"]),
    seed=st.integers(0, 2**16),
    epoch=st.integers(0, 3),
)
def test_every_batch_is_one_cluster(
    n_blobs: int, per_blob: int, group_size: int, by: str, seed: int, epoch: int
) -> None:
    # blobs hold a whole number of groups, so every group fills up inside its blob and batches
    # (group_size=None: a group is a batch) line up with groups
    data = make_blobs([group_size * per_blob] * n_blobs, seed=seed, by=by)
    strategy = ExampleOrder(group_size=None, by=by)
    order = strategy.order(
        data.firsts, data.seconds, batch_size=group_size, epoch=epoch, seed=seed, encode=data.encoder
    )
    assert_permutation(order, len(data.labels))
    for batch in slices(order, group_size):
        assert len(set(data.labels[batch].tolist())) == 1


def test_groups_smaller_than_batches_are_each_one_cluster() -> None:
    data = make_blobs([8, 16, 8], seed=3)
    order = ExampleOrder(group_size=8).order(
        data.firsts, data.seconds, batch_size=30, epoch=0, seed=0, encode=data.encoder
    )
    for group in slices(order, 8):
        assert len(set(data.labels[group].tolist())) == 1


def test_encodes_distinct_texts_of_the_chosen_side_every_epoch() -> None:
    firsts = ["q1", "q1", "q2", "q1", "q3"]
    seconds = ["a1", "a2", "a3", "a4", "a5"]
    rng = np.random.default_rng(0)
    encoder = TableEncoder({t: rng.normal(size=3) for t in [*firsts, *seconds]})
    strategy = ExampleOrder(group_size=2)
    for epoch in range(2):
        strategy.order(firsts, seconds, batch_size=2, epoch=epoch, seed=0, encode=encoder)
    assert encoder.calls == [["q1", "q2", "q3"], ["q1", "q2", "q3"]]
    ExampleOrder(by="second").order(firsts, seconds, batch_size=2, epoch=0, seed=0, encode=encoder)
    assert encoder.calls[-1] == seconds


def _duplicated_data(seed: int) -> tuple[list[str], TableEncoder]:
    # four distinct questions in one tight cluster, each asked twice (like a question with two answers)
    rng = np.random.default_rng(seed)
    vectors = {f"q{i}": np.array([1.0, 0.0, 0.0]) + rng.normal(scale=0.01, size=3) for i in range(4)}
    firsts = [f"q{i}" for i in range(4)] * 2
    rng.shuffle(firsts)
    return firsts, TableEncoder(vectors)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**16), epoch=st.integers(0, 3))
def test_skip_identical_keeps_one_copy_per_group(seed: int, epoch: int) -> None:
    firsts, encoder = _duplicated_data(seed)
    seconds = [f"a{i}" for i in range(8)]
    skipping = ExampleOrder(group_size=4, skip_identical=True).order(
        firsts, seconds, batch_size=4, epoch=epoch, seed=seed, encode=encoder
    )
    for group in slices(skipping, 4):
        assert sorted(firsts[i] for i in group) == ["q0", "q1", "q2", "q3"]
    # without skipping, the seed of the first group takes its identical twin (similarity 1) first
    keeping = ExampleOrder(group_size=4).order(
        firsts, seconds, batch_size=4, epoch=epoch, seed=seed, encode=encoder
    )
    assert any(len({firsts[i] for i in group}) < 4 for group in slices(keeping, 4))


def test_all_identical_texts_with_skipping_are_singletons_in_reversed_shuffle() -> None:
    firsts = ["same"] * 6
    seconds = [f"a{i}" for i in range(6)]
    encoder = TableEncoder({"same": np.ones(4)})
    order = ExampleOrder(group_size=3, skip_identical=True).order(
        firsts, seconds, batch_size=3, epoch=2, seed=9, encode=encoder
    )
    # every example forms its own group, so the order is step 3's shuffle, reversed by step 9
    np.testing.assert_array_equal(order, epoch_rng(9, 2).permutation(6)[::-1])


def test_reuses_nothing_when_neighbours_run_out() -> None:
    # n = 1: each group is e plus its single nearest neighbour if still unused, else e alone
    data = make_blobs([5, 5], seed=1)
    order = ExampleOrder(n_neighbors=1, group_size=4).order(
        data.firsts, data.seconds, batch_size=4, epoch=0, seed=0, encode=data.encoder
    )
    assert_permutation(order, 10)
