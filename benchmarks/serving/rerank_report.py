"""benchmarks/rerank_latency.md from its JSON: the tables and ratios between markers (the prose around
them is kept when the file exists)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

BEGIN, END = "<!-- BEGIN RERANK LATENCY -->", "<!-- END RERANK LATENCY -->"
PASSES = ("micro-batched (passes of 20, the default)", "micro-batched, passes of 64", "one pass per call")


def _table(modes: dict[str, dict[str, Any]], rate: str) -> list[str]:
    lines = [
        f"| mode | n | p50 ms | p95 ms | p99 ms | {rate.replace('_', ' ')} |",
        "|---|---|---|---|---|---|",
    ]
    for label, row in modes.items():
        count = row.get("queries", row.get("requests"))
        lines.append(
            f"| {label} | {count} | {row['p50_ms']} | {row['p95_ms']} | {row['p99_ms']} | {row[rate]} |"
        )
    return lines


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b else "n/a"


def ratios(result: dict[str, Any]) -> list[str]:
    """The comparisons the run is for, as ratios of the side-by-side measurements."""
    modes = result["in_process"]["modes"]
    lines = ["| comparison | p50 | p95 | throughput |", "|---|---|---|---|"]

    def row(name: str, slow: dict[str, Any], fast: dict[str, Any], rate: str) -> None:
        p50, p95 = _ratio(slow["p50_ms"], fast["p50_ms"]), _ratio(slow["p95_ms"], fast["p95_ms"])
        lines.append(f"| {name} | {p50} | {p95} | {_ratio(fast[rate], slow[rate])} |")

    row(
        "torch fp32 / int8, 1 client",
        modes["torch fp32 / 1 client"],
        modes["int8 / 1 client"],
        "queries_per_s",
    )
    default, big, off = PASSES
    for variant, clients in (("torch fp32", 4), ("int8", 4), ("int8", 8)):
        mode = f"{variant} / {clients} clients / "
        rate = "queries_per_s"
        row(
            f"{variant}, {clients} clients: {off} / {default}", modes[mode + off], modes[mode + default], rate
        )
        row(
            f"{variant}, {clients} clients: passes of 64 / {default}",
            modes[mode + big],
            modes[mode + default],
            rate,
        )
    http = result.get("http", {}).get("modes", {})
    for server in ("micro-batched", "without micro-batching"):
        for clients in ("1 client", "8 clients"):
            stage = http.get(f"{server} / re-ranked (k=20) / {clients}")
            first = http.get(f"{server} / first stage only / {clients}")
            if stage and first:
                row(f"HTTP {server}, {clients}: re-ranked / first stage only", stage, first, "requests_per_s")
    for clients in ("1 client", "8 clients"):
        without = http.get(f"without micro-batching / re-ranked (k=20) / {clients}")
        batched = http.get(f"micro-batched / re-ranked (k=20) / {clients}")
        if without and batched:
            row(
                f"HTTP re-ranked, {clients}: without / with micro-batching",
                without,
                batched,
                "requests_per_s",
            )
    lines.append("")
    lines.append("Latency columns: the first named ÷ the second (above 1: the first is slower); throughput: "
                 "the second ÷ the first (above 1: the second serves more per second).")  # fmt: skip
    return lines


def tables(result: dict[str, Any]) -> str:
    """The generated part of the report."""
    machine = result["machine"]
    lines = [
        f"Machine: {machine['cpu_model']}, {machine['nproc']} cores, {machine['memory_gib']} GiB; torch "
        f"{machine['torch']}, {machine['torch_threads']} torch threads; {machine['date']}. "
        f"Data: {result['data']}; each query re-ranks {result['depth']} documents. "
        f"Whole run: {result['seconds']} s.",
        "",
        f"    {result['command']}",
        "",
    ]
    for name, variant in result["in_process"]["variants"].items():
        quality = (variant["quality"] or {}).get("summary", "torch fp32 is the reference")
        lines.append(f"- `{name}` ran as `{variant['variant']}`: {quality}")
    lines += ["", "### In process (`Reranker.score`: tokenizing, micro-batcher, forward pass)", ""]
    lines += _table(result["in_process"]["modes"], "queries_per_s")
    if "http" in result:
        lines += ["", "### Over HTTP (`POST /v1/corpora/claims/rank`, k=10, the corpus's stage k=20)", ""]
        for name, server in result["http"]["servers"].items():
            ready = server["ready"]
            lines.append(f"- {name}: bi-encoder {ready.get('backend')} {ready.get('precision')}, "
                         f"ranking {json.dumps(server['ranking'])}")  # fmt: skip
        lines += [""] + _table(result["http"]["modes"], "requests_per_s")
    lines += ["", "### Ratios (side by side, same run)", ""] + ratios(result)
    return "\n".join(lines)


def write_report(result: dict[str, Any], path: Path) -> None:
    """Write (or update between the markers) the markdown report."""
    generated = f"{BEGIN}\n{tables(result)}\n{END}"
    if path.is_file() and BEGIN in path.read_text():
        text = path.read_text()
        head, _, rest = text.partition(BEGIN)
        _, _, tail = rest.partition(END)
        path.write_text(head + generated + tail)
        return
    path.write_text(f"# Re-ranking latency: a cross-encoder over the top 20\n\n{generated}\n")


if __name__ == "__main__":
    source = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).with_name("rerank_latency.json"))
    write_report(json.loads(source.read_text()), source.with_suffix(".md"))
