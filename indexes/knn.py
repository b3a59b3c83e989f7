"""Exact nearest-neighbour search and k-means on dense vectors with Faiss (on the GPU when it pays).

A shared leaf: the service's index bundles and the training batch orderers both use it, so it
imports neither torch nor anything from `training` or `app`.
"""

from __future__ import annotations

import faiss
import numpy as np

from indexes.gpu import gpu_resources, run_on_gpu, use_gpu

__all__ = ["InnerProductIndex", "as_float32_matrix", "kmeans_assign", "knn_search", "l2_normalize"]


def as_float32_matrix(x: np.ndarray, *, name: str = "array") -> np.ndarray:
    """Return `x` as a C-contiguous float32 (n, d) matrix, rejecting other shapes and non-finite values."""
    arr = np.ascontiguousarray(x, dtype=np.float32)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-D (n, d) array, got shape {arr.shape}")
    # Faiss silently turns NaN scores into -1 ids; rejecting them here keeps results honest.
    if arr.size and not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or infinite values")
    return arr


def l2_normalize(x: np.ndarray, *, eps: float = 1e-12) -> np.ndarray:
    """Scale each row (or a single 1-D vector) to unit L2 norm; all-zero rows stay zero."""
    arr = np.asarray(x, dtype=np.float32)
    norms = np.linalg.norm(arr, axis=-1, keepdims=True)
    # eps instead of a zero norm keeps zero rows at zero rather than NaN.
    return np.ascontiguousarray(arr / np.maximum(norms, eps), dtype=np.float32)


# Faiss' GPU k-selection handles k up to 2048; larger k stays on the CPU.
_GPU_MAX_K = 2048


class InnerProductIndex:
    """Exact (flat) inner-product index over fixed vectors, built once and searched many times.

    `expected_queries` (how many queries the caller will search in all) moves the index to the GPU
    when that total work pays for it (indexes/gpu.py); results are the same either way.
    """

    def __init__(self, vectors: np.ndarray, *, expected_queries: int = 0) -> None:
        self._base = as_float32_matrix(vectors, name="vectors")
        self._index = faiss.IndexFlatIP(self._base.shape[1])
        if len(self._base):
            self._index.add(self._base)
        self._gpu_index: faiss.Index | None = None
        if use_gpu(float(expected_queries) * self._base.size):
            self._gpu_index = run_on_gpu(
                "index", lambda: faiss.index_cpu_to_gpu(gpu_resources(), 0, self._index), lambda: None
            )

    def __len__(self) -> int:
        return int(self._base.shape[0])

    @property
    def dim(self) -> int:
        """Dimension of the indexed vectors."""
        return int(self._base.shape[1])

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-k of each query: (scores float32, ids int64), best first, k clipped to len(self)."""
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        q = as_float32_matrix(queries, name="queries")
        if len(self) and q.shape[0] and q.shape[1] != self.dim:
            raise ValueError(f"dimension mismatch: vectors have d={self.dim}, queries d={q.shape[1]}")
        k_eff = min(k, len(self))
        if k_eff == 0 or q.shape[0] == 0:
            shape = (q.shape[0], k_eff)
            return np.zeros(shape, dtype=np.float32), np.zeros(shape, dtype=np.int64)
        scores, ids = self._search(q, k_eff)
        # With an exact flat index, finite inputs and k <= ntotal, Faiss fills every slot; a -1 here
        # would be a Faiss bug, and handing it on would silently index the last row.
        if (ids < 0).any():
            raise RuntimeError("Faiss returned padding ids (-1) for an exact search")
        return scores.astype(np.float32, copy=False), ids.astype(np.int64, copy=False)

    def _search(self, q: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The GPU copy's answer when there is one and k fits its k-selection, else the CPU index's."""
        gpu_index = self._gpu_index
        if gpu_index is None or k > _GPU_MAX_K:
            return self._index.search(q, k)
        return run_on_gpu("search", lambda: gpu_index.search(q, k), lambda: self._index.search(q, k))


def knn_search(vectors: np.ndarray, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Exact inner-product top-k of each query among `vectors`: (scores float32, ids int64), best first.

    `k` is clipped to the number of vectors, so every returned id is a real row of `vectors`. Large
    searches run on the GPU (brute force with `faiss.knn_gpu`, no index kept) when one is usable.
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    x = as_float32_matrix(vectors, name="vectors")
    q = as_float32_matrix(queries, name="queries")
    k_eff = min(k, len(x))
    if (
        0 < k_eff <= _GPU_MAX_K
        and q.shape[0]
        and q.shape[1] == x.shape[1]
        and use_gpu(float(q.shape[0]) * x.size)
    ):

        def gpu() -> tuple[np.ndarray, np.ndarray]:
            scores, ids = faiss.knn_gpu(gpu_resources(), q, x, k_eff, metric=faiss.METRIC_INNER_PRODUCT)
            return scores.astype(np.float32, copy=False), ids.astype(np.int64, copy=False)

        return run_on_gpu("knn", gpu, lambda: InnerProductIndex(x).search(q, k))
    return InnerProductIndex(x).search(q, k)


def kmeans_assign(
    vectors: np.ndarray, n_clusters: int, *, seed: int, niter: int = 20, nredo: int = 1
) -> np.ndarray:
    """Cluster `vectors` with Faiss k-means and return the cluster id (int64) of each row.

    When there are no more distinct rows than `n_clusters`, each distinct row is its own cluster
    (the exact optimum), so asking for more clusters than points is not an error. Faiss starts from
    random points, so separated blobs can still end in a local minimum; `nredo` > 1 runs k-means
    that many times and keeps the lowest-inertia result.
    """
    if n_clusters < 1:
        raise ValueError(f"n_clusters must be >= 1, got {n_clusters}")
    if niter < 1 or nredo < 1:
        raise ValueError(f"niter and nredo must be >= 1, got niter={niter}, nredo={nredo}")
    x = as_float32_matrix(vectors, name="vectors")
    if x.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    distinct, inverse = np.unique(x, axis=0, return_inverse=True)
    if distinct.shape[0] <= n_clusters:
        return inverse.reshape(-1).astype(np.int64)

    # min_points_per_centroid=1: small training sets are legitimate here (a few hundred pairs),
    # so Faiss' "please provide at least 39*k points" warning would only be noise.
    # Faiss stores the seed in a C int, so fold any Python int into its range.
    def cluster(gpu: bool) -> np.ndarray:
        km = faiss.Kmeans(
            x.shape[1],
            n_clusters,
            niter=niter,
            seed=int(seed) % 2**31,
            min_points_per_centroid=1,
            nredo=nredo,
            gpu=gpu,
        )
        km.train(x)
        _, ids = km.index.search(x, 1)
        return ids.reshape(-1).astype(np.int64)

    if use_gpu(float(x.size) * n_clusters * niter * nredo):
        return run_on_gpu("kmeans", lambda: cluster(True), lambda: cluster(False))
    return cluster(False)
