"""Search latency, recall and throughput of a mapped IVF snapshot per nprobe (and refine depth), as the
store serves it, with Faiss's serial default measured beside it in the same run when asked.

The store sets `parallel_mode` 1 (`indexes.ann.split_probes`): one query's probed lists are shared out
among the cores. `--serial-baseline` times mode 0 (one query on one core) query by query alternately
with it, so that a noisy machine slows both alike, and checks both return the same hits; and each mode's
time for all the queries in one call (a batch, as an evaluation searches: mode 1 splits each query's lists
in turn where mode 0 shares the queries out).
"""

from __future__ import annotations

import itertools
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import faiss
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench_common import percentile  # noqa: E402

from indexes.ivf_parts import PROBES_IN_PARALLEL, StackedIVF  # noqa: E402
from indexes.spec import IndexSpec  # noqa: E402
from indexes.vector_index import Base, VectorIndex  # noqa: E402

K = 10
SERIAL = 0  # Faiss's default parallel_mode


def _set_mode(base: Base, mode: int) -> None:
    assert base.ann is not None, "the snapshot has no ANN structure"
    parts = (base.ann.base, base.ann.tail) if isinstance(base.ann, StackedIVF) else (base.ann,)
    for part in parts:
        ivf = None if part is None else faiss.try_extract_index_ivf(part)
        assert part is None or ivf is not None, "the snapshot's structure is not IVF"
        if ivf is not None:
            ivf.parallel_mode = mode


def _throughput(search: Callable[[np.ndarray], Any], queries: np.ndarray) -> float:
    """Queries per second of 8 clients, one query each at a time, over the queries twice."""
    begun = time.perf_counter()
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(search, np.tile(queries, (2, 1))))
    return round(2 * len(queries) / (time.perf_counter() - begun), 1)


def _batch_seconds(index: VectorIndex, queries: np.ndarray) -> float:
    """Seconds for every query in one search call (as an evaluation sends them), the best of 3."""
    best = float("inf")
    for _ in range(3):
        begun = time.perf_counter()
        index.search(queries, K)
        best = min(best, time.perf_counter() - begun)
    return round(best, 3)


def measure_probes(
    base: Base,
    spec: IndexSpec,
    work: Path,
    nprobes: list[int],
    refines: list[int] | None = None,
    serial_baseline: bool = False,
) -> dict[str, Any]:
    """Search p50/p99, recall@10 against exact float32 and 8-client throughput per nprobe (and refine
    depth, when given), at the served parallel mode; with `serial_baseline`, mode 0 beside it."""
    queries, truth = np.load(work / "queries.npy"), np.load(work / "truth.npy")
    modes = [PROBES_IN_PARALLEL, SERIAL] if serial_baseline else [PROBES_IN_PARALLEL]
    out: dict[str, Any] = {}
    for nprobe, refine in itertools.product(nprobes, refines or [spec.refine]):
        name = f"nprobe={nprobe}" + (f",refine={refine}" if refines else "")
        changed = {**spec.to_dict(), "nprobe": nprobe, "refine": refine}
        index = VectorIndex(base.vectors.shape[1], IndexSpec.from_dict(changed), base)

        def search(query: np.ndarray, index: VectorIndex = index) -> list[tuple[int, float]]:
            return index.search(query[None], K)[0]

        _set_mode(base, PROBES_IN_PARALLEL)
        for query in queries[:50]:  # warm-up: the lists and rows these probes touch
            search(query)
        times: dict[int, list[float]] = {mode: [] for mode in modes}
        hits, same = 0, True
        for number, (query, expected) in enumerate(zip(queries, truth, strict=True)):
            found: dict[int, list[tuple[int, float]]] = {}
            for mode in modes if number % 2 == 0 else modes[::-1]:  # alternate which mode goes first
                _set_mode(base, mode)
                begun = time.perf_counter()
                found[mode] = search(query)
                times[mode].append((time.perf_counter() - begun) * 1000)
            hits += len({d for d, _ in found[PROBES_IN_PARALLEL]} & set(expected.tolist()))
            same &= all([d for d, _ in found[m]] == [d for d, _ in found[PROBES_IN_PARALLEL]] for m in modes)
        rates, batches = {}, {}
        for mode in modes:
            _set_mode(base, mode)
            rates[mode] = _throughput(search, queries)
            batches[mode] = _batch_seconds(index, queries)
        _set_mode(base, PROBES_IN_PARALLEL)
        row: dict[str, Any] = {
            "p50_ms": round(percentile(times[PROBES_IN_PARALLEL], 0.5), 2),
            "p99_ms": round(percentile(times[PROBES_IN_PARALLEL], 0.99), 2),
            "recall_at_10": round(hits / truth.size, 4),
            "queries_per_second_8_clients": rates[PROBES_IN_PARALLEL],
            "batch_seconds": batches[PROBES_IN_PARALLEL],
        }
        if serial_baseline:
            serial = {
                "p50_ms": round(percentile(times[SERIAL], 0.5), 2),
                "p99_ms": round(percentile(times[SERIAL], 0.99), 2),
                "queries_per_second_8_clients": rates[SERIAL],
                "batch_seconds": batches[SERIAL],
            }
            row["serial"] = serial
            row["p50_ratio_serial_to_served"] = round(serial["p50_ms"] / row["p50_ms"], 2)
            row["same_hits"] = same
        out[name] = row
        print(name, row, file=sys.stderr)
    return out
