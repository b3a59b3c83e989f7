"""Searches while a checkpoint runs in the service process, the checkpoint thread at the requests'
priority or lowered (`PAIRANK_CHECKPOINT_NICE`), side by side in one run (issue 41: p50 in the service).

A paced client sends one query every `interval` seconds (a desk's traffic, not a closed loop that would
keep both cores busy by itself) from a request thread, after a warm-up pass over the queries, first with
no checkpoint running (the baseline),
then during each checkpoint: single-query latencies over the whole checkpoint, its seconds and the number
of queries it overlapped. The checkpoints run as the service's loop runs them (`store.checkpoint` in a
thread of their own, after `lower_thread_priority`).
"""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path[:0] = [str(Path(__file__).resolve().parents[1]), str(Path(__file__).resolve().parent)]
from bench_common import paced_latencies, paced_summary  # noqa: E402
from index_scale_parts import start_runtime  # noqa: E402

from app.serving.priority import lower_thread_priority  # noqa: E402
from app.serving.runtime import Runtime  # noqa: E402
from indexes.spec import IndexSpec  # noqa: E402
from indexes.vector_index import VectorIndex  # noqa: E402

K = 10


def searches_during_checkpoints(
    runtime: Runtime, work: Path, nprobe: int, nices: list[int], interval: float = 0.1, idle: float = 60.0
) -> dict[str, Any]:
    """The paced client's latencies with no checkpoint (`idle` s), then during one checkpoint per nice."""
    store = runtime.serving.state().store
    opened = store.get("bench")
    queries = np.load(work / "queries.npy")
    out: dict[str, Any] = {"nprobe": nprobe, "interval_s": interval}

    spec = IndexSpec.from_dict(opened.index.spec.to_dict() | {"nprobe": nprobe})
    views: dict[int, VectorIndex] = {}

    def search(query: np.ndarray) -> None:
        # The served snapshot at this nprobe (as probe_search.py measures), followed across checkpoints:
        # a view kept on a replaced generation would keep its 25 GiB of unlinked files on the disk.
        base = opened.index.base
        if id(base) not in views:
            views.clear()
            views[id(base)] = VectorIndex(opened.index.dimension, spec, base)
        views[id(base)].search(query[None], K)

    # Warm-up: every query once, so that the idle baseline measures warm lists, not a cold restart's
    # disk reads (a first run, without it, measured 209 ms p50 idle: worse than during a checkpoint).
    _run_in_thread(lambda: [search(query) for query in queries])
    running = threading.Event()
    running.set()
    timer = threading.Timer(idle, running.clear)
    timer.start()
    paced = lambda: paced_latencies(search, queries, interval, running)  # noqa: E731
    out["no checkpoint"] = paced_summary(_run_in_thread(paced))
    for nice in nices:
        running.set()
        seconds: dict[str, float] = {}

        def checkpoint(nice: int = nice, seconds: dict[str, float] = seconds) -> None:
            lower_thread_priority(nice)
            begun = time.perf_counter()
            try:
                store.checkpoint(opened)
            finally:  # a failed checkpoint (a full disk) ends the measure too
                seconds["checkpoint"] = time.perf_counter() - begun
                running.clear()

        writer = threading.Thread(target=checkpoint, name="pairank-checkpoint")
        writer.start()
        latencies = _run_in_thread(paced)
        writer.join()
        out[f"checkpoint at nice {nice}"] = paced_summary(latencies) | {
            "checkpoint_seconds": round(seconds["checkpoint"], 1)
        }
        print(nice, out[f"checkpoint at nice {nice}"], file=sys.stderr, flush=True)
    return out


def _run_in_thread(function: Any) -> Any:
    """`function()` in a new thread, as a request thread runs searches; its result."""
    result: list[Any] = []
    thread = threading.Thread(target=lambda: result.append(function()))
    thread.start()
    thread.join()
    return result[0]


def measure_during(
    work: Path, model_dir: Path, nprobe: int, nices: list[int], changes: int = 0
) -> dict[str, Any]:
    """The service restarted on the benchmark's snapshot, `changes` new documents replayed (so that the
    first checkpoint appends them, as a live service's do), then `searches_during_checkpoints`."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")  # as configure_process sets the service's
    runtime, _, startup = start_runtime(work, model_dir, changes_before_start=changes)
    try:
        row = searches_during_checkpoints(runtime, work, nprobe, nices)
    finally:
        runtime.close()
    return {"startup_seconds": round(startup, 1), "changes_before": changes, **row}
