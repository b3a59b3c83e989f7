"""The BM25 index's memory and start-up: the previous in-memory index (format 1: indexes/lexical.py at
BASELINE) beside the mapped one (format 2), at the same documents (issue 41: ten million documents on 24 GB).

Documents are the shared corpora's real texts (/work/shared/data/*/corpus.jsonl, about 34k), replicated
to N with light changes: each copy's words shuffled and about one word in eight replaced by a word drawn
from the corpora's own word frequencies, so postings and vocabulary grow as text does. For each variant,
in fresh processes: build (the service's 2,048-document batches), save; then load, the resident and
private memory after the load and after 200 queries (/proc/self/smaps_rollup), and query p50. Both must
return identical top-10 scores for every query. Writes benchmarks/lexical_memory.json and .md.

    nice -n 15 .venv/bin/python benchmarks/index/lexical_memory.py [--docs 500000] [--workdir /tmp/hlex]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
HERE = REPO / "benchmarks" / "index"
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))
from bench_common import command_line, fresh_call, machine, percentile  # noqa: E402

VARIANTS = ("old", "new")
BATCH = 2048

# The last commit whose LexicalIndex rebuilt every document's terms in memory on load (format 1).
BASELINE = "372c9d1"


def texts(count: int, seed: int = 0) -> list[str]:
    """`count` realistic short texts: the shared corpora's, replicated with shuffled and swapped words."""
    return list(iter_texts(count, seed))


def iter_texts(count: int, seed: int = 0) -> Iterator[str]:
    """The texts of `texts`, one at a time (a build's memory is then the index's, not the list's)."""
    originals: list[str] = []
    for path in sorted(Path("/work/shared/data").glob("*/corpus.jsonl")):
        with path.open() as handle:
            originals.extend(json.loads(line)["text"] for line in handle)
    words = [w for text in originals for w in text.split()]  # drawn by their frequency: Zipf as in text
    rng = random.Random(seed)
    for i in range(count):
        tokens = originals[i % len(originals)].split()[:60]
        if i >= len(originals):
            rng.shuffle(tokens)
            for j in range(0, len(tokens), 8):
                tokens[j] = rng.choice(words)
        yield " ".join(tokens)


def queries(count: int, seed: int = 1) -> list[str]:
    """Queries: three to eight words of a random original text."""
    rng = random.Random(seed)
    source = texts(40_000, seed)
    picked: list[str] = []
    while len(picked) < count:
        tokens = rng.choice(source).split()
        if len(tokens) >= 3:
            start = rng.randrange(max(1, len(tokens) - 3))
            picked.append(" ".join(tokens[start : start + rng.randint(3, 8)]))
    return picked


def index_class(variant: str, workdir: Path) -> Any:
    """BASELINE's LexicalIndex (written out from git) or the working tree's."""
    if variant == "new":
        from indexes.lexical import LexicalIndex

        return LexicalIndex
    source = workdir / "lexical_old.py"
    source.write_text(subprocess.run(["git", "show", f"{BASELINE}:indexes/lexical.py"], cwd=REPO, check=True,
                                     capture_output=True, text=True).stdout)  # fmt: skip
    spec = importlib.util.spec_from_file_location("lexical_old", source)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.LexicalIndex


def memory() -> dict[str, float]:
    """Resident, proportional and private (clean + dirty) memory of this process, in MiB."""
    fields = {}
    for line in Path("/proc/self/smaps_rollup").read_text().splitlines()[1:]:
        name, value = line.split(":", 1)
        fields[name] = int(value.split()[0]) / 1024
    return {"rss_mib": round(fields["Rss"], 1), "pss_mib": round(fields["Pss"], 1),
            "private_mib": round(fields["Private_Clean"] + fields["Private_Dirty"], 1),
            "anonymous_mib": round(fields["Anonymous"], 1)}  # fmt: skip


def build(variant: str, docs: int, workdir: Path) -> dict[str, Any]:
    """In this process: build the index in batches, save it; times and memory after the save."""
    cls = index_class(variant, workdir)
    corpus = texts(docs)
    index = cls()
    started = time.perf_counter()
    for start in range(0, docs, BATCH):
        index.apply(list(enumerate(corpus[start : start + BATCH], start=start)))
    index.hwm = docs
    built = time.perf_counter() - started
    del corpus
    before = memory()
    started = time.perf_counter()
    index.save(workdir / variant)
    saved = time.perf_counter() - started
    size = sum(p.stat().st_size for p in (workdir / variant).rglob("*") if p.is_file())
    return {"build_s": round(built, 2), "memory_built": before, "save_s": round(saved, 2),
            "memory_after_save": memory(), "disk_mib": round(size / 2**20, 1)}  # fmt: skip


def serve(variant: str, workdir: Path, count: int) -> dict[str, Any]:
    """In a fresh process: load, memory, query latency and every query's top 10."""
    cls = index_class(variant, workdir)
    asked = queries(count)
    import_memory = memory()
    started = time.perf_counter()
    index = cls.load(workdir / variant)
    loaded = time.perf_counter() - started
    assert index is not None, f"{variant}: the saved index did not load"
    after_load = memory()
    latencies, tops = [], []
    for query in asked:
        started = time.perf_counter()
        tops.append(index.search(query, 10))
        latencies.append(time.perf_counter() - started)
    return {"documents": len(index), "load_s": round(loaded, 2), "memory_before_load": import_memory,
            "memory_after_load": after_load, "memory_after_queries": memory(),
            "query_p50_ms": round(1000 * percentile(latencies, 0.5), 2),
            "query_p95_ms": round(1000 * percentile(latencies, 0.95), 2), "top10": tops}  # fmt: skip


def run(docs: int, workdir: Path, count: int) -> dict[str, Any]:
    """Both variants at `docs` documents, and whether their top-10 scores agree exactly."""
    results: dict[str, Any] = {}
    for variant in VARIANTS:
        (workdir / variant).mkdir(parents=True, exist_ok=True)
        results[variant] = fresh_call(HERE, "lexical_memory", "build", variant, docs, workdir)
        results[variant].update(fresh_call(HERE, "lexical_memory", "serve", variant, workdir, count))
        print(variant, docs, {k: v for k, v in results[variant].items() if k != "top10"}, flush=True)
    old, new = results["old"].pop("top10"), results["new"].pop("top10")
    results["identical_top10"] = old == new
    results["queries"] = count
    return results


def markdown(report: dict[str, Any]) -> str:
    """The report as a table per size."""
    lines = ["# BM25 index: in-memory (format 1) vs memory-mapped (format 2)", "",
             f"Command: `{report['command']}`  ", f"Machine: {report['machine']['cpu_model']}, "
             f"{report['machine']['nproc']} CPUs, {report['machine']['memory_gib']} GiB "
             "(shared with a training run: times are indicative)", ""]  # fmt: skip
    rows = [("build (s)", "build_s"), ("save (s)", "save_s"), ("disk (MiB)", "disk_mib"),
            ("load, fresh process (s)", "load_s")]  # fmt: skip
    for docs, result in report["results"].items():
        lines += [
            f"## {int(docs):,} documents",
            "",
            f"| | old ({BASELINE}, in memory) | new (mapped) |",
            "|---|---|---|",
        ]
        for label, key in rows:
            lines.append(f"| {label} | {result['old'][key]} | {result['new'][key]} |")
        for when in ("memory_built", "memory_after_save", "memory_after_load", "memory_after_queries"):
            for field in ("rss_mib", "private_mib", "anonymous_mib"):
                label = f"{field.split('_')[0]} MiB, {when.removeprefix('memory_').replace('_', ' ')}"
                lines.append(f"| {label} | {result['old'][when][field]} | {result['new'][when][field]} |")
        for key in ("query_p50_ms", "query_p95_ms"):
            lines.append(
                f"| {key} ({result['queries']} queries) | {result['old'][key]} | {result['new'][key]} |"
            )
        lines += [
            "",
            f"Identical top-10 (ids and scores) for every query: **{result['identical_top10']}**",
            "",
        ]
    first = report["results"][next(iter(report["results"]))]
    lines += ["Memory is the process's (interpreter and numpy included: about "
              f"{first['new']['memory_before_load']['rss_mib']} MiB "
              "before the load). Private counts clean mapped pages that only this process maps; "
              "anonymous is the heap. "
              "`built`/`after save`: the building process; `after load`/`after queries`: a "
              "fresh process that loads the saved index. The mapped index's resident pages after queries are "
              "page cache (shared, clean, reclaimable), not private memory.", ""]  # fmt: skip
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark and write benchmarks/lexical_memory.json and .md."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--docs", type=int, nargs="+", default=[500_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/hlex"))
    args = parser.parse_args(argv)
    report: dict[str, Any] = {"command": command_line("index/lexical_memory.py", argv), "machine": machine(),
                              "results": {}}  # fmt: skip
    for docs in args.docs:
        report["results"][str(docs)] = run(docs, args.workdir / str(docs), args.queries)
    out = REPO / "benchmarks" / "lexical_memory"
    out.with_suffix(".json").write_text(json.dumps(report, indent=2) + "\n")
    out.with_suffix(".md").write_text(markdown(report))
    print(markdown(report))


if __name__ == "__main__":
    main()
