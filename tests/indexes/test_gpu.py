"""Faiss on the GPU (indexes/gpu.py): the fallback half runs everywhere, the GPU half needs the gpu extra.

CI has no GPU, so the `needs_gpu` tests skip there; they ran on a lent H100 (benchmarks/gpu.md).
"""

from __future__ import annotations

import logging

import faiss
import numpy as np
import pytest

from evaluation.model_eval import _cpu_top_k, _gpu_top_k
from indexes import gpu
from indexes.knn import InnerProductIndex, kmeans_assign, knn_search

needs_gpu = pytest.mark.skipif(
    gpu.faiss_gpu_count() == 0,
    reason="no GPU build of Faiss with a usable GPU here (the `gpu` extra on a GPU)",
)


def unit_rows(rng: np.random.Generator, n: int, d: int = 64) -> np.ndarray:
    """Random unit vectors."""
    x = rng.standard_normal((n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_the_cpu_build_reports_no_gpu() -> None:
    if hasattr(faiss, "StandardGpuResources"):
        pytest.skip("a GPU build of Faiss is installed")
    assert gpu.faiss_gpu_count() == 0
    assert not gpu.use_gpu(1e15)


def test_off_switch_keeps_faiss_on_the_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PAIRANK_FAISS_GPU", "off")
    gpu.faiss_gpu_count.cache_clear()
    try:
        assert gpu.faiss_gpu_count() == 0
        assert not gpu.use_gpu(1e15)
    finally:
        monkeypatch.delenv("PAIRANK_FAISS_GPU")
        gpu.faiss_gpu_count.cache_clear()


def test_a_failing_gpu_call_falls_back_to_the_cpu_with_one_log_line(caplog: pytest.LogCaptureFixture) -> None:
    def broken() -> int:
        raise RuntimeError("CUDA error: out of memory")

    with caplog.at_level(logging.WARNING, logger="indexes.gpu"):
        assert gpu.run_on_gpu("fallback-probe", broken, lambda: 7) == 7
        assert gpu.run_on_gpu("fallback-probe", broken, lambda: 8) == 8
    assert len([r for r in caplog.records if "fallback-probe" in r.getMessage()]) == 1


def test_the_fetch_and_check_top_k_equals_full_scoring_with_ties() -> None:
    """The GPU evaluation path (fetch k + margin, rescore when ties reach past it) equals the CPU path."""
    rng = np.random.default_rng(3)
    corpus = unit_rows(rng, 2_000)
    queries = unit_rows(rng, 40)
    corpus[100:160] = corpus[5]  # 61 identical documents: ties at the 10th hit run past 10 + 32 fetched
    queries[0] = corpus[5]
    corpus[300:305] = corpus[7]  # a short tie that the margin covers
    queries[1] = corpus[7]
    expected = _cpu_top_k(queries, corpus, 10)
    got = _gpu_top_k(queries, corpus, 10, 42)
    assert len(expected[0][0]) == 61 and len(expected[1][0]) == 10
    for (want_ids, want_scores), (ids, scores) in zip(expected, got, strict=True):
        assert dict(zip(ids.tolist(), scores.tolist(), strict=True)) == pytest.approx(
            dict(zip(want_ids.tolist(), want_scores.tolist(), strict=True)), abs=1e-5
        )


@needs_gpu
def test_gpu_knn_equals_the_cpu_index() -> None:
    rng = np.random.default_rng(0)
    x, q = unit_rows(rng, 5_000, 384), unit_rows(rng, 200, 384)
    assert gpu.use_gpu(float(len(q)) * x.size)
    scores, ids = knn_search(x, q, 50)
    cpu_scores, cpu_ids = InnerProductIndex(x).search(q, 50)
    overlap = np.mean([len(set(a) & set(b)) / 50 for a, b in zip(ids, cpu_ids, strict=True)])
    assert overlap > 0.999
    assert np.abs(scores - cpu_scores).max() < 1e-5


@needs_gpu
def test_a_large_self_knn_index_runs_on_the_gpu_and_agrees() -> None:
    rng = np.random.default_rng(1)
    x = unit_rows(rng, 3_000, 384)
    index = InnerProductIndex(x, expected_queries=len(x))
    assert index._gpu_index is not None
    scores, ids = index.search(x[:100], 20)
    cpu_scores, cpu_ids = InnerProductIndex(x).search(x[:100], 20)
    assert (ids[:, 0] == np.arange(100)).all()  # each vector is its own best hit
    assert np.abs(scores - cpu_scores).max() < 1e-5


@needs_gpu
def test_kmeans_on_the_gpu_separates_blobs() -> None:
    rng = np.random.default_rng(2)
    centres = unit_rows(rng, 8, 384) * 10
    x = np.repeat(centres, 2_000, axis=0) + rng.standard_normal((16_000, 384)).astype(np.float32) * 0.01
    assert gpu.use_gpu(float(x.size) * 8 * 20)
    labels = kmeans_assign(x, 8, seed=0)
    assert labels.shape == (len(x),) and set(labels.tolist()) <= set(range(8))

    def inertia(assignment: np.ndarray) -> float:
        return sum(
            float(((x[assignment == c] - x[assignment == c].mean(0)) ** 2).sum()) for c in set(assignment)
        )

    # Random starts may merge two blobs (a local minimum, CPU or GPU alike), never worse than that:
    # even then the clusters explain far more than an arbitrary split of the rows does.
    assert inertia(labels) < 0.5 * inertia(np.arange(len(x)) % 8)
