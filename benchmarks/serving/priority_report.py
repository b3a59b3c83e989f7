"""benchmarks/priority.md from priority.json."""

from __future__ import annotations

from typing import Any


def _row(label: str, s: dict[str, Any]) -> str:
    return (
        f"| {label} | {s['ok']:,} | {s['p50_ms']} | {s['p95_ms']} | {s['p99_ms']} | {s['max_ms']} "
        f"| {s['429']} | {s['errors']} |"
    )


def to_markdown(payload: dict[str, Any]) -> str:
    """The page: machine, command, both phases side by side, the import and its checkpoints."""
    m, imported = payload["machine"], payload["import"]
    alone, during = payload["queries_alone"], payload["with_import"]
    ratio = during["p99_ms"] / alone["p99_ms"] if alone["p99_ms"] else float("nan")
    checkpoints = payload["checkpoints_during_import"]
    lines = [
        "# Queries keep priority over bulk work",
        "",
        f"Machine: {m['nproc']} CPUs ({m['cpu_model']}), {m['memory_gib']} GiB, Python {m['python']}, "
        f"torch {m['torch']}, {m['date']}.",
        f"Command: `{payload['command']}`",
        "",
        f"One `pairank serve` (default model, SQLite, embedded job worker, shipped defaults) holding "
        f"{payload['corpus']['documents']:,} documents ({payload['corpus']['source']}); "
        f"{payload['clients']} keep-alive clients rank (k=10, the claim corpus's default hybrid ranking) "
        f"back to back, first alone, then while a {imported['documents']:,}-document import runs through "
        "the job worker into the same corpus, whose index is checkpointed as it grows. Everything, the "
        "load generator included, shares the same 2 cores.",
        "",
        "| phase | answered | p50 ms | p95 ms | p99 ms | max ms | 429 | errors |",
        "|---|---|---|---|---|---|---|---|",
        _row("queries alone", alone),
        _row("during the import", during),
        "",
        f"p99 during the import / alone: **{ratio:.2f}x**; target p99 < 500 ms with 0 errors: "
        f"**{'met' if during['p99_ms'] < 500 and during['errors'] == 0 else 'not met'}**.",
        "",
        f"Import: {imported['status']}, {imported['documents']:,} documents in {imported['seconds']} s "
        f"({imported['documents_per_s']} documents/s while the 8 clients were served first); "
        f"{len(checkpoints)} checkpoints written during it"
        + (
            f", the last of {checkpoints[-1]['size']:,} vectors in {checkpoints[-1]['seconds']} s"
            if checkpoints
            else ""
        )
        + ".",
        "",
        "![rank latency over time](priority.png)",
        "",
        "How: the micro-batcher takes queued queries before bulk chunks and never puts a bulk chunk in a "
        "pass that carries queries; bulk work is queued in small chunks (PAIRANK_BULK_BATCH_TEXTS), so "
        "a query waits for at most one small bulk pass; an import writes in chunks and pauses between "
        "them while queries are being served (README, Operations).",
        "",
    ]
    return "\n".join(lines)
