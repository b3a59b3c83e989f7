"""Faiss on the GPU where it pays: exact kNN and k-means for batch work (training orders, evaluations).

A GPU build of Faiss (the `gpu` extra) exposes `StandardGpuResources`; the CPU build does not. Work is
sent to the GPU only when it is large enough to beat the CPU after the transfers (`GPU_MIN_WORK`,
measured in benchmarks/gpu.md) and `PAIRANK_FAISS_GPU` is not `off`. Any GPU failure falls back to the
CPU with one log line, so a broken driver slows a job down instead of failing it. Serving stays on
the CPU (see benchmarks/gpu.md for the corpus size where a GPU index would start to win).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

import faiss

__all__ = ["GPU_MIN_WORK", "faiss_gpu_count", "gpu_resources", "run_on_gpu", "use_gpu"]

log = logging.getLogger(__name__)

# Multiply-adds (queries x vectors x dim) under which the GPU is not worth its set-up: measured on an
# H100 against 16 CPU cores (benchmarks/gpu.md), self-kNN of 500 x 384 vectors (1e8) already ran 3.6x
# faster on the GPU (1.1 ms vs 4.0 ms), and smaller jobs take a millisecond either way.
GPU_MIN_WORK = 1e8
_T = TypeVar("_T")
_lock = threading.Lock()
_reported: set[str] = set()


def _log_once(key: str, level: int, message: str, *args: object) -> None:
    """Log `message` the first time `key` is seen in this process."""
    with _lock:
        if key in _reported:
            return
        _reported.add(key)
    log.log(level, message, *args)


@lru_cache(maxsize=1)
def faiss_gpu_count() -> int:
    """GPUs this Faiss build can use: 0 for the CPU build, when disabled, or when no driver answers."""
    if os.environ.get("PAIRANK_FAISS_GPU", "auto").lower() in {"off", "0", "false", "no"}:
        return 0
    if not hasattr(faiss, "StandardGpuResources"):
        # A GPU is present but this is the CPU build of Faiss: say so once, it is a set-up choice.
        if Path("/dev/nvidiactl").exists():
            _log_once(
                "cpu-build",
                logging.INFO,
                "faiss: CPU build on a GPU machine; kNN runs on the CPU (gpu extra)",
            )
        return 0
    try:
        return int(faiss.get_num_gpus())
    except RuntimeError as error:  # the GPU build without a usable driver
        _log_once(
            "no-driver", logging.WARNING, "faiss: GPU build but no usable GPU (%s); using the CPU", error
        )
        return 0


@lru_cache(maxsize=1)
def gpu_resources() -> Any:
    """One StandardGpuResources per process: it owns cuBLAS handles, streams and scratch memory."""
    return faiss.StandardGpuResources()


def use_gpu(work: float) -> bool:
    """Whether `work` multiply-adds should go to the GPU: a GPU Faiss build, a GPU, and enough work."""
    return work >= GPU_MIN_WORK and faiss_gpu_count() > 0


def run_on_gpu(what: str, gpu: Callable[[], _T], cpu: Callable[[], _T]) -> _T:
    """`gpu()`, or `cpu()` with one log line per kind of failure if the GPU call raises."""
    try:
        return gpu()
    except (RuntimeError, MemoryError) as error:
        _log_once(
            f"{what}:{type(error).__name__}", logging.WARNING, "faiss GPU %s failed (%s); CPU", what, error
        )
        return cpu()
