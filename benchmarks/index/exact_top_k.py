"""Exact top-k over stored rows, side by side in one run: `faiss.knn` per chunk (what `indexes.ann.
exact_top_k` did before) against the matrix product and partial sort it does now. The checkpoint measures
recall with it (200 queries over every live row) and the 10M benchmark computes its ground truth with it.

    nice -n 10 .venv/bin/python benchmarks/index/exact_top_k.py [--rows 1000000] [--queries 200]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import faiss
import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO), str(REPO / "benchmarks")]
from bench_common import command_line, machine  # noqa: E402

from indexes.ann import exact_top_k  # noqa: E402


def knn_top_k(queries: np.ndarray, vectors: np.ndarray, k: int, chunk: int = 262_144) -> np.ndarray:
    """The former implementation: `faiss.knn` per chunk, merged."""
    best_scores = np.full((len(queries), k), -np.inf, np.float32)
    best_rows = np.full((len(queries), k), -1, np.int64)
    for start in range(0, len(vectors), chunk):
        block = np.ascontiguousarray(vectors[start : start + chunk], dtype=np.float32)
        scores, found = faiss.knn(queries, block, k, faiss.METRIC_INNER_PRODUCT)
        merged_scores = np.concatenate([best_scores, scores], axis=1)
        merged_rows = np.concatenate([best_rows, found + start], axis=1)
        order = np.argsort(-merged_scores, axis=1, kind="stable")[:, :k]
        best_scores = np.take_along_axis(merged_scores, order, 1)
        best_rows = np.take_along_axis(merged_rows, order, 1)
    return best_rows


def main(argv: list[str] | None = None) -> int:
    """Time both on the same rows and queries; the ratio and whether they found the same rows."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--output", type=Path, default=REPO / "benchmarks" / "exact_top_k")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(args.rows, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    picks = rng.choice(args.rows, args.queries, replace=False)
    queries = vectors[picks] + rng.normal(0, 0.05, (args.queries, 384)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    seconds, found = {}, {}
    for name, search in (("faiss.knn per chunk (before)", knn_top_k), ("matrix product (now)", exact_top_k)):
        started = time.perf_counter()
        found[name] = search(queries, vectors, 10)
        seconds[name] = round(time.perf_counter() - started, 2)
    before, now = found.values()
    same = float(np.mean([len(set(a) & set(b)) / 10 for a, b in zip(before, now, strict=True)]))
    ratio = round(seconds["faiss.knn per chunk (before)"] / seconds["matrix product (now)"], 1)
    result = {"command": command_line("index/exact_top_k.py", argv), "machine": machine(), "rows": args.rows,
              "queries": args.queries, "seconds": seconds, "speed-up": ratio, "same_rows": same,
              "faiss": faiss.__version__,
              "blas_threshold": faiss.cvar.distance_compute_blas_threshold}  # fmt: skip
    args.output.with_suffix(".json").write_text(json.dumps(result, indent=1) + "\n")
    lines = [
        "# Exact top-k: `faiss.knn` per chunk vs a matrix product",
        "",
        f"Command: `{result['command']}`. Machine: {result['machine']['cpu_model']}, "
        f"{result['machine']['nproc']} cores, {result['machine']['date'][:10]}; Faiss {faiss.__version__} "
        f"(`distance_compute_blas_threshold` {result['blas_threshold']}). {args.rows:,} rows x 384, "
        f"{args.queries} queries, k 10, chunks of 262,144 rows.",
        "",
        "| implementation | seconds |",
        "|---|---:|",
        *[f"| {name} | {value} |" for name, value in seconds.items()],
        "",
        f"Speed-up {result['speed-up']}x; the same top 10 for {same:.4f} of the rows found.",
        "",
    ]
    args.output.with_suffix(".md").write_text("\n".join(lines))
    print(json.dumps({k: result[k] for k in ("seconds", "speed-up", "same_rows")}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
