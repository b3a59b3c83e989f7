"""A vector checkpoint's rows, a baseline commit's `indexes/` against the working tree's, side by side.

The first comparison (`checkpoint_write.md`): copied under the index's lock into a scratch file, then
written again into the generation, its float16 rows converted from the float32 ones (eaf245b), or
streamed once into the generation's file after the lock, the float16 rows copied from the old generation.
The second (`checkpoint_append.md`, `--baseline f7aa50d --name checkpoint_append`): that, against row
files shared by generations, where a checkpoint that only appends links the old generation's float32 and
float16 rows and writes the new rows after theirs (`indexes/row_file.py`). The third (`checkpoint_tail.md`,
`--baseline e65d209 --name checkpoint_tail`): that, against IVF tails, where the same checkpoint also
links the old generation's IVF lists and writes only the rows appended since as a tail
(`indexes/ann_tail.py`) instead of reading the lists into memory and writing them whole.

Each variant runs in a fresh process on the same rows: a refined compact index (IVF-sq8 + float16 rows,
the 10M configuration) of `--rows` random 384-d rows is built and checkpointed, then each measured
checkpoint follows one kind of change: `appended` (1,000 new rows: the structure is extended, every row
written), `compacted` (30% of the rows deleted and 1,000 new ones: the live rows compacted, the structure
rebuilt). (A checkpoint of unchanged rows, deletions only with nothing appended, links the old file now; a
live service's delta is rarely empty, so it is left to tests/indexes/test_sealed_rows.py.) While it runs,
a writer applies a one-row upsert every 5 ms. Reported per checkpoint: its seconds, the bytes the process
dirtied in the page cache (`write_bytes` of /proc/self/io, which counts stores into a mapped file as well
as write() calls) and passed to write() (`wchar`), how long the writer's upserts waited (the lock the
checkpoint holds), the peak of the process's private memory above where it began (RssAnon, sampled
every 20 ms), the share of the new IVF lists and float32 rows still cached after it, its recall@10,
and whether the index then holds the same rows and vectors as the baseline's (top 10s may differ after a
rebuild: which of the writer's rows were sealed, and trained on, is timing).

    nice -n 5 .venv/bin/python benchmarks/checkpoints/checkpoint_write.py [--rows 1000000]
    nice -n 5 .venv/bin/python benchmarks/checkpoints/checkpoint_write.py --baseline f7aa50d \
        --name checkpoint_append --labels "written once, float16 copied (before);appended to linked files"
    nice -n 5 .venv/bin/python benchmarks/checkpoints/checkpoint_write.py --baseline e65d209 \
        --name checkpoint_tail --labels "lists read, extended, written whole (before);lists linked, a tail"
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[2]
HERE = REPO / "benchmarks" / "checkpoints"
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))
from bench_common import baseline_tree, command_line, fresh_call, machine, percentile  # noqa: E402

BASELINE = "eaf245b"  # the last commit whose checkpoint copied the rows to a scratch file under the lock
LABELS = (
    "scratch copy under the lock, written again, float16 converted (before);"
    "written once after the lock, float16 copied"
)
ROW_FILES = ("vectors.f32", "vectors.npy")  # the float32 rows: raw since format 3, .npy before
DIMENSION = 384
KINDS = ("appended", "compacted")


def _io() -> dict[str, int]:
    fields = dict(line.split(": ") for line in Path("/proc/self/io").read_text().splitlines())
    return {"write_bytes": int(fields["write_bytes"]), "wchar": int(fields["wchar"])}


def _private_bytes() -> int:
    """The process's anonymous resident memory (RssAnon): what a private copy of the lists adds to."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("RssAnon:"):
            return int(line.split()[1]) * 1024
    return 0


def _rows(count: int, seed: int) -> np.ndarray:
    rows = np.random.default_rng(seed).normal(size=(count, DIMENSION)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def run(rows: int, tree: str | None) -> dict[str, Any]:
    """In this process (from `tree`'s `indexes/` when given): the first checkpoint, then one per kind."""
    if tree is not None:
        sys.path.insert(0, tree)  # before anything imports `indexes`
    from indexes.checkpoint import checkpoint, rebase
    from indexes.page_cache import cached_fraction
    from indexes.snapshot import ModelIdentity
    from indexes.spec import IndexSpec
    from indexes.vector_index import VectorIndex

    model = ModelIdentity("bench", "bench@1", "55" * 32, DIMENSION)
    spec = IndexSpec(type="ivf", nlist=1024, nprobe=64, compression="sq8", refine=100)
    out: dict[str, Any] = {"rows": rows}
    with tempfile.TemporaryDirectory(prefix="ckptwrite-", dir=REPO.parent) as scratch:
        folder = Path(scratch)
        index = VectorIndex(DIMENSION, spec)
        for start in range(0, rows, 100_000):
            block = _rows(min(100_000, rows - start), seed=start)
            index.apply([(start + i, row, 1) for i, row in enumerate(block)], hwm=1)
        begun = time.perf_counter()
        index = rebase(index, checkpoint(index, folder, "c", model).snapshot)
        out["first_checkpoint_s"] = round(time.perf_counter() - begun, 1)
        seq = 2
        for kind in KINDS:
            if kind == "compacted":
                dead = range(0, rows, 3)  # a third: beyond the 20% that forces a rebuild
                index.apply(deletes=[(doc, seq) for doc in dead], hwm=seq)
                seq += 1
            extra = _rows(1000, seed=10**6 + seq)
            index.apply([(10**9 + seq + i, row, seq + i) for i, row in enumerate(extra)], hwm=seq + 999)
            seq += 1000
            row, result = _measured(index, folder, model, checkpoint, seq)
            seq += 10**6  # beyond the writer's sequence numbers
            source = result.snapshot.base.source
            files = {
                "ann.faiss": "ann.faiss",
                "float32_rows": next(n for n in ROW_FILES if (source / n).is_file()),
            }
            row["cached_after"] = {
                key: round(cached_fraction(source / name) or 0.0, 3)
                for key, name in files.items()
                if (source / name).is_file()
            }
            row["rebuilt_ann"] = result.rebuilt_ann
            index = rebase(index, result.snapshot)
            row["recall_at_10"] = result.snapshot.manifest.get("recall_at_10")
            # What the index holds after it (snapshot + delta): the same in every variant. (Top 10s may
            # differ after a rebuild: which of the writer's rows were sealed, and trained on, is timing.)
            base, delta = index.base, index.delta
            in_delta = delta.ids[sorted(delta.row_of.values())]
            live = np.sort(np.concatenate([np.asarray(base.ids)[base.alive], in_delta]))
            held = live.tobytes() + index.vectors(live.tolist()).tobytes()
            row["content"] = hashlib.sha256(held).hexdigest()
            out[kind] = row
            print(kind, row, flush=True)
    return out


def _measured(index: Any, folder: Path, model: Any, checkpoint: Any, seq: int) -> tuple[dict[str, Any], Any]:
    """One checkpoint with a writer applying an upsert every 5 ms: its numbers and its result."""
    waits: list[float] = []
    stop = threading.Event()
    late = _rows(100, seed=7)
    private = [_private_bytes()]

    def sampler() -> None:  # the peak of private memory, every 20 ms
        while not stop.wait(0.02):
            private.append(_private_bytes())

    def writer() -> None:
        number = 0
        while not stop.is_set():
            begun = time.perf_counter()
            index.apply([(2 * 10**9 + number % 100, late[number % 100], seq + number)], hwm=seq + number)
            waits.append(time.perf_counter() - begun)
            number += 1
            time.sleep(0.005)

    subprocess.run(["sync"], check=True)  # what earlier steps left dirty is not counted here
    before = _io()
    threads = [threading.Thread(target=writer), threading.Thread(target=sampler)]
    for thread in threads:
        thread.start()
    begun = time.perf_counter()
    result = checkpoint(index, folder, "c", model)
    seconds = time.perf_counter() - begun
    stop.set()
    for thread in threads:
        thread.join()
    after = _io()
    waits = waits or [0.0]
    return {"checkpoint_s": round(seconds, 1),
            "dirtied_mib": round((after["write_bytes"] - before["write_bytes"]) / 2**20, 1),
            "write_calls_mib": round((after["wchar"] - before["wchar"]) / 2**20, 1),
            "upserts": len(waits), "upsert_wait_p50_ms": round(1000 * percentile(waits, 0.5), 2),
            "upsert_wait_max_ms": round(1000 * max(waits), 1),
            "private_peak_mib": round((max(private) - private[0]) / 2**20, 1)}, result  # fmt: skip


def markdown(report: dict[str, Any]) -> str:
    """The page: one row per checkpoint kind and variant, ratios to the baseline's."""
    box = report["machine"]
    lines = [
        f"# A vector checkpoint's rows: {' / '.join(report['results'])}",
        "",
        "Generated by `benchmarks/checkpoints/checkpoint_write.py` (its docstring says what it measures).",
        f"Command: `{report['command']}`. Machine: {box['cpu_model']}, {box['nproc']} cores, "
        f"{box['memory_gib']} GiB, {box['date'][:10]}. Baseline: `{report['baseline']}`. "
        f"Rows: {report['rows']:,} x {DIMENSION} (IVF-sq8, float16 refine).",
        "",
        "| checkpoint after | variant | s | x before | dirtied MiB | x before | write() MiB "
        "| upsert wait p50 / max ms | private memory peak MiB | IVF lists / float32 rows cached after "
        "| recall@10 | rows = before |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for kind in KINDS:
        first = next(iter(report["results"].values()))[kind]
        for name, result in report["results"].items():
            row = result[kind]
            cached = row["cached_after"]
            rows_cached = cached.get("float32_rows", cached.get("vectors.npy", 0))  # (older JSONs' key)
            lines.append(
                f"| {kind} | {name} | {row['checkpoint_s']} "
                f"| {row['checkpoint_s'] / first['checkpoint_s']:.2f} | {row['dirtied_mib']:,} "
                f"| {row['dirtied_mib'] / max(first['dirtied_mib'], 0.1):.2f} | {row['write_calls_mib']:,} "
                f"| {row['upsert_wait_p50_ms']} / {row['upsert_wait_max_ms']} "
                f"| {row.get('private_peak_mib', '-')} "
                f"| {cached.get('ann.faiss', 0):.0%} / {rows_cached:.0%} "
                f"| {row['recall_at_10']} | {row['same_content']} |"
            )
    note = report.get("note")  # what a reader needs about this run (added by hand after it)
    return "\n".join(lines) + "\n" + (f"\n{note}\n" if note else "")


def main(argv: list[str] | None = None) -> None:
    """Both variants in fresh processes, one after the other, on the same rows."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--baseline", default=BASELINE, help="the commit whose indexes/ is measured first")
    parser.add_argument("--name", default="checkpoint_write", help="benchmarks/NAME.json and .md")
    parser.add_argument("--labels", default=LABELS, help="the baseline's and the working tree's names, by ;")
    args = parser.parse_args(argv)
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="ckptbase-") as folder:
        tree = baseline_tree(Path(folder), args.baseline)
        for name, old in zip(args.labels.split(";"), (True, False), strict=True):
            results[name] = fresh_call(HERE, "checkpoint_write", "run", args.rows, tree if old else None)
    reference = {kind: next(iter(results.values()))[kind]["content"] for kind in KINDS}
    for result in results.values():
        for kind in KINDS:
            result[kind]["same_content"] = result[kind]["content"] == reference[kind]
    report = {"command": command_line("checkpoints/checkpoint_write.py", argv), "machine": machine(),
              "baseline": args.baseline, "rows": args.rows, "results": results}  # fmt: skip
    (REPO / "benchmarks" / f"{args.name}.json").write_text(json.dumps(report, indent=1) + "\n")
    (REPO / "benchmarks" / f"{args.name}.md").write_text(markdown(report))
    print(markdown(report))


if __name__ == "__main__":
    main()
