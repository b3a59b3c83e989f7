"""Fast shuffling (Algorithm 2): the grouping core, shingles, and the three variants end to end."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from shuffling_helpers import TableEncoder, assert_permutation, make_blobs, slices

from training.shuffling import FastClustersOrder, FastNeighboursOrder, FastWordsOrder
from training.shuffling.fast import NO_SHINGLE, fast_shuffle, fast_shuffle_groups, random_shingles
from training.shuffling.stopwords import ENGLISH_STOP_WORDS, content_words

shingles_st = st.lists(st.one_of(st.none(), st.integers(0, 5).map(lambda i: (f"w{i}",))), max_size=40)


@settings(max_examples=80, deadline=None)
@given(shingles=shingles_st, group_size=st.integers(1, 5), seed=st.integers(0, 2**32))
def test_groups_are_contiguous_single_shingle_and_split_at_k(
    shingles: list[tuple[str] | None], group_size: int, seed: int
) -> None:
    order, gids = fast_shuffle_groups(shingles, group_size, np.random.default_rng(seed))
    assert_permutation(order, len(shingles))
    # contiguous: a group id never reappears after another one started
    starts = [i for i in range(len(gids)) if i == 0 or gids[i] != gids[i - 1]]
    assert len(starts) == len(set(gids.tolist()))
    bounds = [*starts, len(gids)]
    groups = [order[a:b].tolist() for a, b in zip(bounds, bounds[1:], strict=False)]
    sizes_by_shingle: dict[tuple[str], list[int]] = {}
    for group in groups:
        assert len(group) <= group_size
        members = {shingles[i] for i in group}
        assert len(members) == 1
        (shingle,) = members
        if shingle is NO_SHINGLE:
            assert len(group) == 1  # no shingle: shares nothing, so it is alone
        else:
            sizes_by_shingle.setdefault(shingle, []).append(len(group))
    # a shingle with c examples is split into c // k full groups and one remainder, nothing else
    for shingle, sizes in sizes_by_shingle.items():
        count = shingles.count(shingle)
        expected = [group_size] * (count // group_size) + ([count % group_size] if count % group_size else [])
        assert sorted(sizes, reverse=True) == expected
    again = fast_shuffle(shingles, group_size, np.random.default_rng(seed))
    np.testing.assert_array_equal(order, again)


def test_group_size_counter_restarts_at_each_new_shingle() -> None:
    # Judgement call on Algorithm 2: s is reset when the shingle changes. The literal pseudo-code
    # would carry s = 3 over and cut the b's into 1 + 2.
    shingles = [("a",)] * 3 + [("b",)] * 3
    _, gids = fast_shuffle_groups(shingles, 4, np.random.default_rng(0))
    assert sorted(Counter(gids.tolist()).values()) == [3, 3]


def test_group_order_and_cuts_vary_with_the_generator() -> None:
    shingles = [(f"w{i % 4}",) for i in range(40)]
    orders = {tuple(fast_shuffle(shingles, 3, np.random.default_rng(s)).tolist()) for s in range(5)}
    assert len(orders) == 5


@settings(max_examples=50, deadline=None)
@given(
    sentences=st.lists(st.lists(st.sampled_from("abcdefg"), max_size=6), max_size=10),
    t=st.integers(1, 4),
    seed=st.integers(0, 2**32),
)
def test_random_shingles_are_sorted_subsets(sentences: list[list[str]], t: int, seed: int) -> None:
    shingles = random_shingles(sentences, t, np.random.default_rng(seed))
    assert shingles == random_shingles(sentences, t, np.random.default_rng(seed))
    for words, shingle in zip(sentences, shingles, strict=True):
        if not words:
            assert shingle is NO_SHINGLE
            continue
        assert shingle is not None
        drawn = [str(w) for w in shingle]
        assert drawn == sorted(set(drawn)) and set(drawn) <= set(words)
        assert len(shingle) == min(t, len(set(words)))


def test_random_shingles_pick_every_word_sometimes() -> None:
    picks = {random_shingles([["x", "y", "z"]], 1, np.random.default_rng(s))[0] for s in range(40)}
    assert picks == {("x",), ("y",), ("z",)}


def test_content_words_drop_stop_words_and_case() -> None:
    assert content_words("Don't STOP the Music, it's 5G!") == ["stop", "music", "5g"]
    assert content_words("It is what it is") == []
    assert {"the", "and", "of", "is"} <= ENGLISH_STOP_WORDS


def _one_word_texts(n_words: int, per_word: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    fillers = ["the", "a", "of the", "is it", "and"]
    texts = [
        f"{fillers[(w + i) % 5]} Topic{w} {fillers[i % 5]}" for w in range(n_words) for i in range(per_word)
    ]
    rng.shuffle(texts)
    return texts


@settings(max_examples=30, deadline=None)
@given(
    n_words=st.integers(1, 5),
    k=st.integers(1, 4),
    per_group=st.integers(1, 3),
    by=st.sampled_from(["first", "second"]),
    seed=st.integers(0, 2**32),
    epoch=st.integers(0, 3),
)
def test_words_every_group_shares_its_word(
    n_words: int, k: int, per_group: int, by: str, seed: int, epoch: int
) -> None:
    # one content word per text, k * per_group texts per word: every group is k texts of one word
    texts = _one_word_texts(n_words, k * per_group, seed)
    others = [f"answer number {i}" for i in range(len(texts))]
    firsts, seconds = (texts, others) if by == "first" else (others, texts)
    order = FastWordsOrder(group_size=k, by=by).order(firsts, seconds, batch_size=k, epoch=epoch, seed=seed)
    assert_permutation(order, len(texts))
    for group in slices(order, k):
        assert len({content_words(texts[i])[0] for i in group}) == 1


def test_words_shingles_of_size_two_and_stop_word_only_texts() -> None:
    texts = ["moon landing fake", "the moon", "is it", "Landing FAKE moon"]
    shingles = FastWordsOrder(shingle_size=2).shingles(texts, np.random.default_rng(0))
    assert shingles[1] == ("moon",) and shingles[2] is NO_SHINGLE
    assert (
        shingles[0] is not None and len(shingles[0]) == 2 and set(shingles[0]) <= {"moon", "landing", "fake"}
    )
    custom = FastWordsOrder(stop_words=["moon"]).shingles(["the moon"], np.random.default_rng(0))
    assert custom == [("the",)]


@settings(max_examples=10, deadline=None)
@given(n_blobs=st.integers(2, 4), k=st.integers(2, 4), seed=st.integers(0, 2**16), epoch=st.integers(0, 2))
def test_clusters_every_group_is_one_blob(n_blobs: int, k: int, seed: int, epoch: int) -> None:
    data = make_blobs([2 * k] * n_blobs, seed=seed)
    # nredo: Faiss k-means starts from random points and may merge two blobs; 10 restarts make that
    # practically impossible on separated blobs
    strategy = FastClustersOrder(n_clusters=n_blobs, group_size=k, nredo=10)
    order = strategy.order(
        data.firsts, data.seconds, batch_size=k, epoch=epoch, seed=seed, encode=data.encoder
    )
    assert_permutation(order, len(data.labels))
    for group in slices(order, k):
        assert len(set(data.labels[group].tolist())) == 1


def test_clusters_with_more_clusters_than_texts_group_duplicates_only() -> None:
    firsts = ["q1", "q2", "q1", "q3", "q1"]
    encoder = TableEncoder({"q1": np.array([1.0, 0]), "q2": np.array([0, 1.0]), "q3": np.array([1.0, 1.0])})
    strategy = FastClustersOrder(n_clusters=300, group_size=3)
    order = strategy.order(firsts, list("abcde"), batch_size=3, epoch=0, seed=0, encode=encoder)
    positions = [i for i, j in enumerate(order.tolist()) if firsts[j] == "q1"]
    assert positions == list(range(positions[0], positions[0] + 3))
    assert encoder.calls == [["q1", "q2", "q3"]]


@settings(max_examples=15, deadline=None)
@given(n_blobs=st.integers(1, 4), k=st.integers(2, 4), seed=st.integers(0, 2**16), epoch=st.integers(0, 2))
def test_neighbours_shingle_of_the_whole_neighbourhood_groups_a_blob(
    n_blobs: int, k: int, seed: int, epoch: int
) -> None:
    # blobs of exactly k texts: each text's top-k neighbours are its blob, and with t = k the
    # shingle is that whole set, so every group is one blob
    data = make_blobs([k] * n_blobs, seed=seed)
    strategy = FastNeighboursOrder(n_neighbors=k, shingle_size=k, group_size=k)
    order = strategy.order(
        data.firsts, data.seconds, batch_size=k, epoch=epoch, seed=seed, encode=data.encoder
    )
    assert_permutation(order, len(data.labels))
    for group in slices(order, k):
        assert len(set(data.labels[group].tolist())) == 1


def test_neighbours_single_word_shingles_stay_inside_the_blob() -> None:
    data = make_blobs([6, 6, 6], seed=2)
    shingles = FastNeighboursOrder(n_neighbors=4).shingles(
        data.firsts, np.random.default_rng(0), data.encoder
    )
    unique = list(dict.fromkeys(data.firsts))  # the shingle words are positions among distinct texts
    label_of = dict(zip(data.firsts, data.labels.tolist(), strict=True))
    for text, shingle in zip(data.firsts, shingles, strict=True):
        assert shingle is not None and len(shingle) == 1
        (word,) = shingle
        assert isinstance(word, int) and label_of[unique[word]] == label_of[text]
    # more neighbours asked for than texts: clipped, still a permutation
    order = FastNeighboursOrder(n_neighbors=50).order(
        data.firsts, data.seconds, batch_size=4, epoch=0, seed=0, encode=data.encoder
    )
    assert_permutation(order, 18)
    assert math.isfinite(float(order.sum()))
