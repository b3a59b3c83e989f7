"""A corpus's first BM25 build and its save, as `open_lexical` runs them: held in Python or spilled to a
mapped generation every 250k documents (`indexes/lexical_build.py`), each with a save that merges in
memory (BASELINE's `indexes/`, written out from git) or streams its postings to disk (the working
tree's): build and save time, peak memory, and identical scores (issue 41).

A fresh replica, a language change or a lost data dir rebuilds the index from the database; held whole,
the build's Python postings grow about 1.2 GiB per million documents; a save (each spill, and the one
that ends the build) once built the new generation's arrays in memory, so its peak grew with the base.
Each variant runs in a fresh process over the same documents (benchmarks/index/lexical_memory.py's
texts: the shared corpora replicated with changed words, generated one at a time so that the build's
memory is the index's), in the service's 2,048-document batches: wall time of the build and of the save
after it, peak resident memory above the process's before the build (ru_maxrss: build and save), resident
and private memory at the end, the top 10 of 200 queries, which must equal the first variant's exactly,
and then a checkpoint (2,048 documents more, saved while a writer applies one every 5 ms: the save's
seconds and the writes' waits, i.e. how long the save holds the index's lock).
Writes benchmarks/lexical_build.json and .md.

`--compare segments` compares, the same way, spills into one growing generation (SEGMENTS_BASELINE's
`indexes/`, where every spill re-merged all the postings written so far) with spills into segments merged
once at the end (the working tree's); it writes benchmarks/lexical_segments.json and .md. `--compare
linked` compares a first build's save that writes the merged generation again (LINKED_BASELINE) with one
that hard-links its files (the working tree's): benchmarks/lexical_linked.json and .md. Every row also
counts the bytes the build and its save passed to write() (`written MiB`).

    nice -n 10 .venv/bin/python benchmarks/index/lexical_build.py [--docs 1000000 3000000]
    nice -n 10 .venv/bin/python benchmarks/index/lexical_build.py --compare segments --docs 1000000 3000000
    nice -n 10 .venv/bin/python benchmarks/index/lexical_build.py --compare linked --docs 1000000 3000000
"""

from __future__ import annotations

import argparse
import inspect
import itertools
import json
import resource
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
HERE = REPO / "benchmarks" / "index"
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))
sys.path.insert(0, str(REPO / "benchmarks" / "index"))
from bench_common import baseline_tree, command_line, fresh_call, machine, percentile  # noqa: E402
from lexical_memory import BATCH, iter_texts, memory, queries  # noqa: E402

# Two comparisons, each against the commit before its change (`--compare`):
# streamed: a save that builds the new generation's arrays in memory (BASELINE) or streams them;
# segments: a first build that spills into one growing generation (SEGMENTS_BASELINE) or into segments
#   merged once at the end (the working tree: indexes/lexical_segments.py).
# linked: a first build's save that writes the merged generation again (LINKED_BASELINE) or hard-links
#   its files (the working tree: indexes/lexical_write.py).
BASELINE = "2a8df1d"  # the last commit whose save built a generation's arrays in memory
SEGMENTS_BASELINE = "dccb40b"  # the last commit whose spills re-merged the growing generation
LINKED_BASELINE = "b8ab1ce"  # the last commit whose first build's save wrote the merged generation again
Variants = dict[str, tuple[int | None, bool]]  # variant: (spill every, the baseline's indexes/ or ours)
COMPARISONS: dict[str, tuple[str, str, Variants]] = {  # name: (baseline, page, variants)
    "streamed": (BASELINE, "lexical_build", {
        "held, merge in memory (before)": (None, True),
        "spill every 250k, merge in memory (before)": (250_000, True),
        "held, merge streamed": (None, False),
        "spill every 250k, merge streamed (default)": (250_000, False),
    }),
    "linked": (LINKED_BASELINE, "lexical_linked", {
        "spill every 250k, saved by writing it again (before)": (250_000, True),
        "spill every 250k, saved by linking the merged files (default)": (250_000, False),
    }),
    "segments": (SEGMENTS_BASELINE, "lexical_segments", {
        "spill every 250k into one generation (before)": (250_000, True),
        "spill every 250k into segments, merged once (default)": (250_000, False),
    }),
}  # fmt: skip


def build(spill_every: int | None, docs: int, count: int, tree: str | None) -> dict[str, Any]:
    """In this process: build through `build_index` and save (from `tree`'s `indexes/` when given),
    then the memory and the queries' top 10."""
    if tree is not None:
        sys.path.insert(0, tree)  # before anything imports `indexes`
    from indexes.analysis import Analyser
    from indexes.lexical_build import build_index

    generated = iter_texts(docs)
    texts = itertools.chain([next(generated)], generated)  # the corpora are read before the clock starts
    batches = (
        [(start + i, text, None) for i, text in enumerate(itertools.islice(texts, BATCH))]
        for start in range(0, docs, BATCH)
    )
    before = memory()
    start_peak = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, before["rss_mib"])
    with tempfile.TemporaryDirectory(prefix="lexbuild-") as scratch:
        marks: dict[str, float] = {}

        def save(index: Any) -> None:  # as open_lexical does at once: in the build's hook where it has one
            marks["built"] = time.perf_counter()
            index.save(Path(scratch) / "lexical")
            marks["saved"] = time.perf_counter()

        written = _written_bytes()
        started = time.perf_counter()
        hook = {"finish": save} if "finish" in inspect.signature(build_index).parameters else {}
        index = build_index(
            batches, Analyser("en"), scratch=Path(scratch) / "builds" if spill_every else None,
            spill_every=spill_every or 0, **hook,
        )  # fmt: skip
        if not hook:
            save(index)
        built, saved = marks["built"], marks["saved"]
        written = _written_bytes() - written
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        after = memory()
        tops = [index.search(query, 10) for query in queries(count)]
        documents = len(index)
        checkpoint = writes_during_a_checkpoint(index, Path(scratch) / "lexical")
    return {"documents": documents, "build_s": round(built - started, 1), "save_s": round(saved - built, 1),
            "written_mib": round(written / 2**20, 1),
            "memory_before": before, "peak_rss_mib": round(peak, 1),
            "peak_above_start_mib": round(peak - start_peak, 1), "memory_after": after,
            "top10": tops, **checkpoint}  # fmt: skip


def _written_bytes() -> int:
    """Bytes this process has passed to write() so far (Linux /proc/self/io `wchar`)."""
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("wchar:"):
            return int(line.split()[1])
    raise RuntimeError("no wchar in /proc/self/io")


def writes_during_a_checkpoint(index: Any, folder: Path) -> dict[str, float]:
    """A checkpoint's save of the built index plus 2,048 new documents while one writer applies a
    document every 5 ms: the save's seconds and how long the writes waited (the lock the save holds)."""
    index.apply([(10**9 + i, f"a claim written after the build, number {i}") for i in range(2048)])
    waits: list[float] = []
    stop = threading.Event()

    def writer() -> None:
        number = 0
        while not stop.is_set():
            begun = time.perf_counter()
            index.apply([(2 * 10**9 + number % 100, f"a late claim number {number}")])
            waits.append(time.perf_counter() - begun)
            number += 1
            time.sleep(0.005)

    thread = threading.Thread(target=writer)
    thread.start()
    begun = time.perf_counter()
    index.save(folder)
    seconds = time.perf_counter() - begun
    stop.set()
    thread.join()
    writes, waits = len(waits), waits or [0.0]  # a save quicker than the writer's first write: none waited
    return {"checkpoint_s": round(seconds, 2), "checkpoint_writes": writes,
            "write_wait_p50_ms": round(1000 * percentile(waits, 0.5), 2),
            "write_wait_max_ms": round(1000 * max(waits), 1)}  # fmt: skip


TITLES = {
    "streamed": "# The first BM25 build and its save: held or spilled, merged in memory or streamed",
    "segments": "# The first BM25 build: spills into one growing generation or into segments merged once",
    "linked": "# The first BM25 build's save: the merged generation written again or its files linked",
}


def markdown(report: dict[str, Any]) -> str:
    """The page: one row per size and variant, with ratios to the first."""
    box = report["machine"]
    lines = [
        TITLES[report.get("comparison", "streamed")],
        "",
        "Generated by `benchmarks/index/lexical_build.py` (its docstring says what it measures).",
        f"Command: `{report['command']}`. Machine: {box['cpu_model']}, {box['nproc']} cores, "
        f"{box['memory_gib']} GiB, {box['date'][:10]}. Baseline: `{report['baseline']}`.",
        "",
        "| documents | variant | build s | save s | x first (build + save) | written MiB "
        "| peak RSS above start MiB | x first | RSS after MiB | private after MiB | top 10 = first "
        "| checkpoint s | write wait p50 / max ms |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for docs, rows in report["results"].items():
        first = next(iter(rows.values()))
        total = first["build_s"] + first["save_s"]
        for name, row in rows.items():
            lines.append(
                f"| {int(docs):,} | {name} | {row['build_s']} | {row['save_s']} "
                f"| {(row['build_s'] + row['save_s']) / total:.2f} | {row.get('written_mib', '-')} "
                f"| {row['peak_above_start_mib']:,.0f} "
                f"| {row['peak_above_start_mib'] / first['peak_above_start_mib']:.2f} "
                f"| {row['memory_after']['rss_mib']:,.0f} | {row['memory_after']['private_mib']:,.0f} "
                f"| {row['identical_top10']} | {row['checkpoint_s']} "
                f"| {row['write_wait_p50_ms']} / {row['write_wait_max_ms']} |"
            )
    note = report.get("note")  # what a reader needs about this run (added by hand after it)
    return "\n".join(lines) + "\n" + (f"\n{note}\n" if note else "")


def main(argv: list[str] | None = None) -> None:
    """Every variant at every size, fresh processes, side by side."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, nargs="+", default=[1_000_000, 3_000_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--compare", choices=sorted(COMPARISONS), default="streamed")
    args = parser.parse_args(argv)
    baseline, page, variants = COMPARISONS[args.compare]
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="lexbase-") as folder:
        tree = baseline_tree(Path(folder), baseline)
        for docs in args.docs:
            rows = {name: fresh_call(HERE, "lexical_build", "build", spill, docs, args.queries,
                                     tree if old else None)
                    for name, (spill, old) in variants.items()}  # fmt: skip
            first = next(iter(rows.values()))["top10"]
            for name, row in rows.items():
                row["identical_top10"] = row.pop("top10") == first
                print(docs, name, row, flush=True)
            results[str(docs)] = rows
    report = {
        "command": command_line("index/lexical_build.py", argv),
        "machine": machine(),
        "comparison": args.compare,
        "baseline": baseline,
        "results": results,
    }
    (REPO / "benchmarks" / f"{page}.json").write_text(json.dumps(report, indent=1) + "\n")
    (REPO / "benchmarks" / f"{page}.md").write_text(markdown(report))


if __name__ == "__main__":
    main()
