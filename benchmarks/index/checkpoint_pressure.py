"""Searches during a checkpoint when the page cache cannot hold everything: the 10M p99 at a small scale.

At 10M rows the IVF lists and float16 rows that searches read (11 GiB) and a checkpoint's own files pass
through one 24 GB page cache, and searches during a checkpoint waited seconds for disk reads (p99 2-3.5 s,
benchmarks/scale_10m.md). Here a memory cgroup (v1, `memory.limit_in_bytes`, which counts the page cache
a process brings in) gives a `--rows` index (IVF-sq8 + float16 refine, 384-d) the same squeeze: the limit
holds the process and its hot lists, not the checkpoint's files as well. Each variant in a fresh process:
the first generation is built outside the cgroup and dropped from the page cache; the process joins the
cgroup, maps it, warms up (every query once), takes 2,000 upserts, then a paced client sends a query every
50 ms from a request thread: `--idle` s with no checkpoint, then during one checkpoint run as the service
runs it (a thread at nice 10; in the `io idle` variant also in the idle I/O class). Variants: BASELINE's
checkpoint (a scratch copy of the rows under the lock, written again, float16 converted) and the working
tree's (written once after the lock, float16 copied), with and without the idle I/O class. Needs root (a
cgroup v1 memory controller at /sys/fs/cgroup/memory) and Linux.

    nice -n 5 .venv/bin/python benchmarks/index/checkpoint_pressure.py [--rows 1000000] [--limit-mib 1280]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[2]
HERE = REPO / "benchmarks" / "index"
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))
from bench_common import baseline_tree, command_line, fresh_call, machine, paced_latencies, paced_summary  # noqa: E402

BASELINE = "eaf245b"  # the last commit whose checkpoint copied the rows to a scratch file under the lock
VARIANTS = {  # name: (BASELINE's indexes/, idle I/O class)
    "before: scratch copy under the lock, written again": (True, False),
    "written once after the lock, float16 copied": (False, False),
    "written once, float16 copied, idle I/O class": (False, True),
}
CGROUP = Path("/sys/fs/cgroup/memory")
DIMENSION = 384
INTERVAL = 0.05


def _rows(count: int, seed: int) -> np.ndarray:
    rows = np.random.default_rng(seed).normal(size=(count, DIMENSION)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def _join_cgroup(name: str, limit_mib: int) -> Path:
    """A fresh memory cgroup limited to `limit_mib`, with this process in it."""
    group = CGROUP / name
    group.mkdir()
    (group / "memory.limit_in_bytes").write_text(str(limit_mib * 2**20))
    (group / "cgroup.procs").write_text(str(os.getpid()))
    return group


def run(
    rows: int, tree: str | None, io_idle: bool, limit_mib: int, idle_s: float, work: str
) -> dict[str, Any]:
    """In this process (from `tree`'s `indexes/` when given): build, squeeze, then search while idle
    and during a checkpoint."""
    if tree is not None:
        sys.path.insert(0, tree)  # before anything imports `indexes`
    from indexes.checkpoint import checkpoint, rebase
    from indexes.page_cache import forget
    from indexes.snapshot import ModelIdentity, load_snapshot
    from indexes.spec import IndexSpec
    from indexes.vector_index import VectorIndex

    model = ModelIdentity("bench", "bench@1", "66" * 32, DIMENSION)
    spec = IndexSpec(type="ivf", nlist=1024, nprobe=32, compression="sq8", refine=100)
    folder = Path(work)
    index = VectorIndex(DIMENSION, spec)
    for start in range(0, rows, 100_000):
        block = _rows(min(100_000, rows - start), seed=start)
        index.apply([(start + i, row, 1) for i, row in enumerate(block)], hwm=1)
    generation = checkpoint(index, folder, "c", model).snapshot.base.source
    assert generation is not None
    del index
    gc.collect()
    for path in generation.iterdir():
        forget(path)
    group = _join_cgroup(f"pairank-bench-{os.getpid()}", limit_mib)
    try:
        loaded = load_snapshot(folder, model)
        assert loaded is not None
        index = rebase(VectorIndex(DIMENSION, spec, loaded.base), loaded)
        queries = _rows(400, seed=10**7)
        for query in queries:  # warm: the lists every query probes
            index.search(query[None], 10)
        late = _rows(2000, seed=10**8)
        index.apply([(10**9 + i, row, 2 + i) for i, row in enumerate(late)], hwm=2001)
        out: dict[str, Any] = {"rows": rows, "limit_mib": limit_mib, "before_checkpoint": _usage(group)}
        running = threading.Event()

        def searches() -> list[float]:
            return paced_latencies(lambda q: index.search(q[None], 10), queries, INTERVAL, running)

        running.set()
        threading.Timer(idle_s, running.clear).start()
        out["no checkpoint"] = paced_summary(searches())
        seconds: dict[str, float] = {}

        def checkpointing() -> None:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)  # as the service's loop
            if io_idle:
                from app.serving.priority import idle_thread_io

                assert idle_thread_io()
            begun = time.perf_counter()
            try:
                seconds["checkpoint"] = 0.0
                checkpoint(index, folder, "c", model)
            finally:
                seconds["checkpoint"] = time.perf_counter() - begun
                running.clear()

        running.set()
        worker = threading.Thread(target=checkpointing)
        worker.start()
        during = searches()
        worker.join()
        stat = dict(line.split() for line in (group / "memory.stat").read_text().splitlines())
        out["during checkpoint"] = paced_summary(during) | {"checkpoint_s": round(seconds["checkpoint"], 1)}
        out["cgroup_peak_mib"] = round(int((group / "memory.max_usage_in_bytes").read_text()) / 2**20)
        out["cgroup_page_faults_major"] = int(stat.get("total_pgmajfault", stat.get("pgmajfault", 0)))
        print(json.dumps(out), flush=True)
        return out
    finally:
        (CGROUP / "cgroup.procs").write_text(str(os.getpid()))  # back to the root, so the group can go
        group.rmdir()


def _usage(group: Path) -> dict[str, int]:
    """The cgroup's anonymous memory and page cache now, in MiB."""
    stat = dict(line.split() for line in (group / "memory.stat").read_text().splitlines())
    return {"anonymous_mib": int(stat["rss"]) // 2**20, "page_cache_mib": int(stat["cache"]) // 2**20}


def markdown(report: dict[str, Any]) -> str:
    """The page: one row per variant, idle and during its checkpoint."""
    box = report["machine"]
    lines = [
        "# Searches during a checkpoint under memory pressure: the 10M p99 at a small scale",
        "",
        "Generated by `benchmarks/index/checkpoint_pressure.py` (its docstring says what it measures).",
        f"Command: `{report['command']}`. Machine: {box['cpu_model']}, {box['nproc']} cores, "
        f"{box['memory_gib']} GiB, {box['date'][:10]}, I/O scheduler `{report['scheduler']}`. "
        f"Baseline: `{report['baseline']}`. {report['rows']:,} rows x {DIMENSION} (IVF-sq8, float16 refine), "
        f"memory cgroup limit {report['limit_mib']:,} MiB, one query every {int(INTERVAL * 1000)} ms.",
        "",
        "| variant | idle p50 / p90 / p99 ms | during checkpoint p50 / p90 / p99 ms | queries during "
        "| checkpoint s | anonymous / page cache before MiB | cgroup peak MiB | major faults |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, row in report["results"].items():
        idle, during, before = row["no checkpoint"], row["during checkpoint"], row["before_checkpoint"]
        lines.append(
            f"| {name} | {idle['p50_ms']} / {idle['p90_ms']} / {idle['p99_ms']} "
            f"| {during['p50_ms']} / {during['p90_ms']} / {during['p99_ms']} | {during['queries']} "
            f"| {during['checkpoint_s']} "
            f"| {before['anonymous_mib']:,} / {before['page_cache_mib']:,} "
            f"| {row['cgroup_peak_mib']:,} | {row['cgroup_page_faults_major']:,} |"
        )
    note = report.get("note")  # what a reader needs about this run (added by hand after it)
    return "\n".join(lines) + "\n" + (f"\n{note}\n" if note else "")


def main(argv: list[str] | None = None) -> None:
    """Every variant in a fresh process, one after the other."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--limit-mib", type=int, default=1280)
    parser.add_argument("--idle", type=float, default=20.0, help="seconds of searches with no checkpoint")
    args = parser.parse_args(argv)
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="ckptbase-") as folder:
        tree = baseline_tree(Path(folder), BASELINE)
        for name, (old, io_idle) in VARIANTS.items():
            work = Path(tempfile.mkdtemp(prefix="ckptpressure-", dir=REPO.parent))
            try:
                results[name] = fresh_call(HERE, "checkpoint_pressure", "run", args.rows,
                                           tree if old else None, io_idle, args.limit_mib, args.idle,
                                           str(work))  # fmt: skip
            finally:
                shutil.rmtree(work, ignore_errors=True)
    scheduler = Path("/sys/block/vda/queue/scheduler")
    report = {"command": command_line("index/checkpoint_pressure.py", argv), "machine": machine(),
              "baseline": BASELINE, "rows": args.rows, "limit_mib": args.limit_mib,
              "scheduler": scheduler.read_text().strip() if scheduler.is_file() else "unknown",
              "results": results}  # fmt: skip
    (REPO / "benchmarks" / "checkpoint_pressure.json").write_text(json.dumps(report, indent=1) + "\n")
    (REPO / "benchmarks" / "checkpoint_pressure.md").write_text(markdown(report))
    print(markdown(report))


if __name__ == "__main__":
    main()
