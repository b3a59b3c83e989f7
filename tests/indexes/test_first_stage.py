"""The one first stage (indexes/first_stage.py): properties over random corpora, and its rules by example."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given as given_examples
from hypothesis import settings
from hypothesis import strategies as st

from indexes.first_stage import (
    BOTH,
    CANDIDATES,
    MatrixCorpus,
    Pool,
    gather,
    given,
    rank_pool,
    sides_of,
)
from indexes.fusion import RankingSetting

WORDS = ["shark", "moon", "bleach", "tower", "flood", "vaccine", "garlic", "earth", "gold", "water"]
SETTING = st.sampled_from(
    [
        RankingSetting("dense"),
        RankingSetting("lexical"),
        RankingSetting("hybrid", 0.2),
        RankingSetting("hybrid", 0.7),
        RankingSetting("hybrid", 0.0, "rrf"),
    ]
)


@st.composite
def corpora(draw: st.DrawFn) -> tuple[MatrixCorpus, list[str], np.ndarray]:
    """A corpus of 1-160 texts over a small vocabulary with random unit vectors, and 1-3 queries."""
    size = draw(st.integers(1, 160))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    texts = [" ".join(rng.choice(WORDS, size=int(rng.integers(1, 5)))) for _ in range(size)]
    matrix = rng.normal(size=(size, 8)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    queries = [" ".join(rng.choice(WORDS + ["unknown"], size=2)) for _ in range(int(rng.integers(1, 4)))]
    vectors = rng.normal(size=(len(queries), 8)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return MatrixCorpus(matrix, texts), queries, vectors


def ids(hits: list) -> list[int]:
    return [hit.doc_id for hit in hits]


@settings(max_examples=60, deadline=None)
@given_examples(corpora(), SETTING, st.integers(1, 120))
def test_one_pool_for_every_setting_ranks_as_a_pool_of_its_own(data, setting, depth) -> None:
    # Compare, calibration and evaluation grids gather both sides once and rank every setting on that
    # pool; `rank` gathers only the sides its setting reads. The lists must be the same.
    corpus, queries, vectors = data
    shared = gather(corpus, queries, vectors, depth, BOTH)
    own = gather(corpus, queries, vectors, depth, sides_of(setting))
    for both, alone in zip(shared, own, strict=True):
        left, right = rank_pool(both, setting, depth), rank_pool(alone, setting, depth)
        assert ids(left) == ids(right)
        # A cosine from the index's search and one from the stored vectors may differ in the last bit.
        assert [h.score for h in left] == pytest.approx([h.score for h in right], abs=1e-6)


@settings(max_examples=60, deadline=None)
@given_examples(corpora(), SETTING, st.integers(1, 120))
def test_the_ranked_list_follows_the_rules(data, setting, depth) -> None:
    corpus, queries, vectors = data
    size = len(corpus.matrix)
    for query, vector, pool in zip(
        queries, vectors, gather(corpus, queries, vectors, depth, BOTH), strict=True
    ):
        hits = rank_pool(pool, setting, depth)
        assert len(hits) <= depth and len(set(ids(hits))) == len(hits)
        cosines = corpus.matrix @ vector
        bm25 = corpus.lexical.scores(query, range(size))
        if setting.mode == "dense":  # exactly the top `depth` by cosine, ties by id
            expected = sorted(range(size), key=lambda d: (-float(cosines[d]), d))[:depth]
            assert ids(hits) == expected
        elif setting.mode == "lexical":  # only documents sharing a word, best BM25 first
            assert all(bm25[d] > 0 for d in ids(hits))
            assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
            matching = sum(1 for d in range(size) if bm25[d] > 0)
            assert len(hits) == min(depth, matching)
        else:  # the fused order over the whole pool
            assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
            assert len(hits) == min(depth, len(pool.ids))
        for hit in hits:
            assert hit.cosine == pytest.approx(float(cosines[hit.doc_id]), abs=1e-5)


@settings(max_examples=40, deadline=None)
@given_examples(corpora(), SETTING, st.integers(1, 50), st.data())
def test_a_filter_admits_only_its_documents_and_keeps_their_order(data, setting, depth, draw) -> None:
    corpus, queries, vectors = data
    size = len(corpus.matrix)
    allowed = draw.draw(st.sets(st.integers(0, size - 1), min_size=1))
    for pool in gather(corpus, queries, vectors, depth, sides_of(setting), allowed):
        hits = rank_pool(pool, setting, depth)
        assert set(ids(hits)) <= allowed
        if setting.mode == "dense":
            assert len(hits) == min(depth, len(allowed))


def test_given_candidates_are_all_ranked_whatever_they_share() -> None:
    corpus = MatrixCorpus(np.eye(3, dtype=np.float32), ["moon hoax", "shark flood", "garlic cure"])
    vector = np.array([0.1, 0.9, 0.2], dtype=np.float32)
    pool = given(corpus, "shark", vector, [2, 1, 0, 1], lexical=True)
    assert pool.ids == [2, 1, 0]  # a candidate given twice is ranked once
    assert ids(rank_pool(pool, RankingSetting("lexical"), 10)) == [1, 2, 0]  # no shared word: last, by cosine
    assert ids(rank_pool(pool, RankingSetting("dense"), 10)) == [1, 2, 0]


def test_a_searched_lexical_ranking_leaves_out_what_shares_no_word() -> None:
    # A dense-side candidate with BM25 0 belongs to a hybrid list, never to a lexical one.
    corpus = MatrixCorpus(np.eye(3, dtype=np.float32), ["moon hoax", "shark flood", "garlic cure"])
    vector = np.array([1.0, 0.0, 0.0], dtype=np.float32)
    (pool,) = gather(corpus, ["shark"], vector[None], 10, BOTH)
    assert ids(rank_pool(pool, RankingSetting("lexical"), 10)) == [1]
    assert set(ids(rank_pool(pool, RankingSetting("hybrid", 0.5), 10))) == {0, 1, 2}


def test_each_side_contributes_its_top_candidates() -> None:
    size = 3 * CANDIDATES
    rng = np.random.default_rng(0)
    matrix = rng.normal(size=(size, 4)).astype(np.float32)
    texts = [f"word{i % 7} common" for i in range(size)]
    (pool,) = gather(MatrixCorpus(matrix, texts), ["word3"], matrix[:1], 10, BOTH)
    assert len(pool.dense_side) == CANDIDATES and len(pool.lexical_side) == min(CANDIDATES, size // 7 + 1)
    assert set(pool.ids) == pool.dense_side | pool.lexical_side


def test_a_pool_without_bm25_ranks_dense_only() -> None:
    pool = Pool([1, 2], [0.5, 0.9], None, frozenset({1, 2}), frozenset())
    assert ids(rank_pool(pool, RankingSetting("dense"), 5)) == [2, 1]
    with pytest.raises(ValueError, match="BM25"):
        rank_pool(pool, RankingSetting("hybrid", 0.5), 5)
