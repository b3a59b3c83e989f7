"""benchmarks/soak.md from soak.json."""

from __future__ import annotations

from typing import Any

LABELS = {
    "rss_mib": "RSS (MiB)",
    "pss_mib": "PSS (MiB)",
    "open_fds": "open file descriptors",
    "other_fds": "of which neither pooled SQLite files nor a checkpoint's",
    "db_connections": "database connections",
}


def to_markdown(payload: dict[str, Any]) -> str:
    """The page: machine, command, calls by operation, and each measure's growth after warm-up."""
    m, every = payload["machine"], payload["all"]
    lines = [
        "# Soak: mixed traffic on PostgreSQL",
        "",
        f"Machine: {m['nproc']} CPUs ({m['cpu_model']}), {m['memory_gib']} GiB, Python {m['python']}, "
        f"{m['date']}. Command: `{payload['command']}`",
        "",
        f"`pairank serve` (default model, {payload['database']}, {payload['corpus']['documents']:,} "
        f"claims: {payload['corpus']['source']}) under {payload['rate_per_s']} calls/s for "
        f"{payload['seconds']:.0f} s (achieved {payload['achieved_per_s']}/s): 60% rank, 15% upsert "
        "(5 documents), 10% delete, 15% duplicates (2 texts), from 4 clients at a fixed rate. "
        f"**{every['calls']:,} calls, {every['errors']} errors, {every['429']} answered 429.**",
        "",
        "| operation | calls | p50 ms | p95 ms | p99 ms | max ms | errors |",
        "|---|---|---|---|---|---|---|",
    ]
    for op, s in payload["by_operation"].items():
        lines.append(
            f"| {op} | {s['calls']:,} | {s['p50_ms']} | {s['p95_ms']} | {s['p99_ms']} | {s['max_ms']} "
            f"| {s['errors']} |"
        )
    lines += [
        "",
        f"After a {payload['warmup_seconds']:.0f} s warm-up, the first minute's mean against the last "
        "minute's (target: memory within 10%, no growth in descriptors or connections):",
        "",
        "| measure | first minute | last minute | peak | growth |",
        "|---|---|---|---|---|",
    ]
    for key, g in payload["growth"].items():
        if g:
            lines.append(
                f"| {LABELS[key]} | {g['first_minute']} | {g['last_minute']} | {g['peak']} "
                f"| {g['growth_percent']:+.2f}% |"
            )
    lines += ["", "![memory, latency, descriptors and connections over time](soak.png)", ""]
    if payload["failed_calls"]:
        lines += ["Failed calls (first 50):", "", "```", *map(str, payload["failed_calls"]), "```", ""]
    return "\n".join(lines)
