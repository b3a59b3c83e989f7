"""Faiss helpers checked against brute-force numpy."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from indexes.ann import exact_top_k
from indexes.knn import kmeans_assign, knn_search, l2_normalize


def _brute_topk(vectors: np.ndarray, queries: np.ndarray, k: int) -> np.ndarray:
    return np.sort(queries @ vectors.T, axis=1)[:, ::-1][:, :k]


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(1, 30),
    nq=st.integers(1, 8),
    d=st.integers(1, 6),
    k=st.integers(1, 40),
    seed=st.integers(0, 2**32 - 1),
)
def test_knn_search_matches_brute_force(n: int, nq: int, d: int, k: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((n, d)).astype(np.float32)
    queries = rng.standard_normal((nq, d)).astype(np.float32)
    scores, ids = knn_search(vectors, queries, k)
    k_eff = min(k, n)
    assert scores.shape == ids.shape == (nq, k_eff)
    assert scores.dtype == np.float32 and ids.dtype == np.int64
    assert ((ids >= 0) & (ids < n)).all()
    # every row lists distinct ids, best first, and the scores are the true inner products
    assert all(len(set(row)) == k_eff for row in ids.tolist())
    assert (np.diff(scores, axis=1) <= 1e-5).all()
    np.testing.assert_allclose(scores, np.einsum("qd,qkd->qk", queries, vectors[ids]), rtol=1e-4, atol=1e-4)
    # ties may be ordered differently, so compare score lists rather than ids
    np.testing.assert_allclose(scores, _brute_topk(vectors, queries, k_eff), rtol=1e-4, atol=1e-4)


def test_knn_search_accepts_float64_and_non_contiguous_input() -> None:
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((6, 8))[:, ::2]  # float64, non-contiguous view
    scores, ids = knn_search(vectors, vectors, 1)
    # the best inner product of a row is not always itself, so check against brute force
    np.testing.assert_array_equal(ids[:, 0], np.argmax(vectors @ vectors.T, axis=1))
    assert scores.dtype == np.float32


def test_knn_search_normalized_self_is_nearest() -> None:
    vectors = l2_normalize(np.random.default_rng(1).standard_normal((20, 5)))
    scores, ids = knn_search(vectors, vectors, 3)
    np.testing.assert_array_equal(ids[:, 0], np.arange(20))
    np.testing.assert_allclose(scores[:, 0], 1.0, atol=1e-5)


def test_knn_search_clips_k_and_handles_empty() -> None:
    vectors = np.eye(3, dtype=np.float32)
    scores, ids = knn_search(vectors, vectors[:1], 10)
    assert ids.shape == (1, 3) and (ids >= 0).all()
    scores, ids = knn_search(np.zeros((0, 3), np.float32), vectors, 4)
    assert ids.shape == (3, 0) and scores.shape == (3, 0)
    scores, ids = knn_search(vectors, np.zeros((0, 3), np.float32), 2)
    assert ids.shape == (0, 2)


@pytest.mark.parametrize(
    ("vectors", "queries", "k"),
    [
        (np.eye(3), np.eye(3), 0),
        (np.eye(3), np.ones((1, 4)), 1),
        (np.ones(3), np.ones((1, 3)), 1),
        (np.array([[np.nan, 0.0]]), np.ones((1, 2)), 1),
    ],
)
def test_knn_search_rejects_bad_input(vectors: np.ndarray, queries: np.ndarray, k: int) -> None:
    with pytest.raises(ValueError):
        knn_search(vectors, queries, k)


def test_l2_normalize_rows_and_zero_rows() -> None:
    x = np.array([[3.0, 4.0], [0.0, 0.0], [-2.0, 0.0]])
    out = l2_normalize(x)
    np.testing.assert_allclose(out, [[0.6, 0.8], [0.0, 0.0], [-1.0, 0.0]], atol=1e-7)
    assert out.dtype == np.float32 and out.flags["C_CONTIGUOUS"]
    np.testing.assert_allclose(l2_normalize(np.array([0.0, 2.0])), [0.0, 1.0])


def _blobs(sizes: list[int], d: int = 4, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    centers = np.eye(d)[: len(sizes)] * 10.0
    labels = np.repeat(np.arange(len(sizes)), sizes)
    x = centers[labels] + rng.normal(scale=0.1, size=(len(labels), d))
    return x.astype(np.float32), labels


def _same_partition(a: np.ndarray, b: np.ndarray) -> bool:
    pairs = set(zip(a.tolist(), b.tolist(), strict=True))
    return len(pairs) == len(set(a.tolist())) == len(set(b.tolist()))


def test_kmeans_assign_recovers_separated_blobs() -> None:
    x, labels = _blobs([7, 5, 9])
    assigned = kmeans_assign(x, 3, seed=0)
    assert assigned.shape == (21,) and assigned.dtype == np.int64
    assert _same_partition(assigned, labels)


def test_kmeans_assign_deterministic_under_seed() -> None:
    x = np.random.default_rng(3).standard_normal((60, 3)).astype(np.float32)
    np.testing.assert_array_equal(kmeans_assign(x, 5, seed=7), kmeans_assign(x, 5, seed=7))
    assert set(kmeans_assign(x, 5, seed=7).tolist()) <= set(range(5))


def test_kmeans_assign_more_clusters_than_points(capfd: pytest.CaptureFixture[str]) -> None:
    x = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]], dtype=np.float32)
    assigned = kmeans_assign(x, 10, seed=0)
    # each distinct vector is its own cluster, duplicates share one
    assert assigned[0] == assigned[2] != assigned[1]
    assert kmeans_assign(np.zeros((0, 2), np.float32), 3, seed=0).shape == (0,)
    # a small but valid request must not print Faiss' "provide at least 39*k points" warning
    kmeans_assign(np.random.default_rng(0).standard_normal((12, 2)), 4, seed=0)
    assert "WARNING" not in capfd.readouterr().err


def test_kmeans_assign_rejects_bad_params() -> None:
    with pytest.raises(ValueError):
        kmeans_assign(np.eye(2), 0, seed=0)
    with pytest.raises(ValueError):
        kmeans_assign(np.eye(2), 1, seed=0, niter=0)


def test_module_is_a_torch_free_leaf() -> None:
    # the service imports this without the training stack, so importing it must not pull in torch
    code = (
        "import sys, indexes.knn; "
        "assert not any(m == 'torch' or m.startswith('training') for m in sys.modules)"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).resolve().parents[2])


@settings(max_examples=60, deadline=None)
@given(
    rows=st.integers(1, 60),
    queries=st.integers(1, 5),
    k=st.integers(1, 12),
    chunk=st.integers(1, 70),
    seed=st.integers(0, 2**16),
)
def test_exact_top_k_is_the_exact_order_over_live_rows_chunk_by_chunk(
    rows: int, queries: int, k: int, chunk: int, seed: int
) -> None:
    """Whatever the chunking and the deleted rows: the live rows in exact inner-product order, -1 after."""
    rng = np.random.default_rng(seed)
    vectors = rng.normal(size=(rows, 8)).astype(np.float32)
    asked = rng.normal(size=(queries, 8)).astype(np.float32)
    alive = rng.random(rows) < 0.7
    found = exact_top_k(asked, vectors, k, alive, chunk=chunk)
    live = np.flatnonzero(alive)
    assert found.shape == (queries, k)
    for query, got in zip(asked, found, strict=True):
        expected = np.sort(vectors[live] @ query)[::-1][:k]
        kept = got[: len(expected)]
        assert set(kept.tolist()) <= set(live.tolist()) and len(set(kept.tolist())) == len(expected)
        # The same scores in the same order (rows whose scores tie within rounding may swap).
        np.testing.assert_allclose(vectors[kept] @ query, expected, rtol=1e-5, atol=1e-5)
        assert (got[len(expected) :] == -1).all()
