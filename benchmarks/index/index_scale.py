"""Index store at scale: 10k, 100k and 1M documents of 384 dimensions, through the service's own code.

For each size, a SQLite database gets N real document rows; their vectors are injected (clustered
synthetic unit vectors: encoding a million texts would measure the model, not the store) as a snapshot
at the corpus's change mark, written by the store's own checkpoint code. Then, through the service
(`Runtime`, `CorpusService`, a tiny local model for the texts written afterwards):
  - start-up: map the snapshot and replay 1,000 logged changes (time to ready, no re-encoding),
  - one-document upserts (p50/p95 over 200; database commit + change log + index apply),
  - a checkpoint (time), RSS/PSS of 1 and 4 `pairank serve` workers (--workers),
  - search p50 for exact (flat) and ANN settings (HNSW, IVF) and their recall@10 against exact.
Writes benchmarks/index_scale.md and .json.

    nice -n 10 .venv/bin/python benchmarks/index/index_scale.py [--sizes 10000 100000 1000000] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench_common import command_line, machine  # noqa: E402
from index_scale_parts import (  # noqa: E402
    ann_settings,
    measure_search,
    seed_database,
    start_runtime,
    synthetic_vectors,
    upserts_and_checkpoint,
    write_snapshot,
)
from worker_memory import measure_workers  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
DIMENSION = 384


def run_size(size: int, workdir: Path, model_dir: Path, workers: bool) -> dict[str, Any]:
    """Every measurement for one corpus size."""
    folder = workdir / f"n{size}"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    result: dict[str, Any] = {"size": size}
    started = time.perf_counter()
    ids = seed_database(folder, size)
    vectors = synthetic_vectors(size, DIMENSION)
    result["seed_seconds"] = round(time.perf_counter() - started, 1)
    result["snapshot_write_seconds"] = write_snapshot(folder, model_dir, ids, vectors)
    # 1,000 changes after the snapshot (through the log), then a cold start: map + replay.
    runtime, service, startup = start_runtime(folder, model_dir, changes_before_start=1000)
    result["startup_seconds"] = round(startup, 2)
    try:
        result.update(upserts_and_checkpoint(runtime, service))
    finally:
        runtime.close()
    result["search"] = measure_search(vectors, ann_settings(size))
    if workers:
        result["workers"] = measure_workers(folder, model_dir)
    print(json.dumps(result), file=sys.stderr)
    return result


def main(argv: list[str] | None = None) -> int:
    """Run every size and write the report."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--workdir", type=Path, default=REPO / "data" / "bench-index-scale")
    parser.add_argument("--no-workers", action="store_true", help="skip the 1 vs 4 worker memory runs")
    parser.add_argument("--output-dir", type=Path, default=Path(__file__).resolve().parents[1])
    args = parser.parse_args(argv)
    sys.path.insert(0, str(REPO))  # the tiny model builder lives with the tests
    from tests.helpers.tiny_model import build_tiny_model

    model_dir = args.workdir / "tiny-model"
    if not (model_dir / "modules.json").is_file():
        build_tiny_model(model_dir, hidden_size=DIMENSION, num_layers=1, seed=0)
    results = [run_size(size, args.workdir, model_dir, not args.no_workers) for size in args.sizes]
    payload = {
        "command": command_line("index/index_scale.py", argv),
        "machine": machine(),
        "results": results,
    }
    args.output_dir.mkdir(parents=True, exist_ok=True)
    previous = args.output_dir / "index_scale.json"
    if previous.is_file():  # the compact-index comparison (index_compact.py) is measured on its own
        payload["compact"] = json.loads(previous.read_text(encoding="utf-8")).get("compact")
    (args.output_dir / "index_scale.json").write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    from index_scale_report import to_markdown

    (args.output_dir / "index_scale.md").write_text(to_markdown(payload), encoding="utf-8")
    print(to_markdown(payload))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
