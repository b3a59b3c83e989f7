"""Soak: mixed traffic at a fixed rate against `pairank serve` on PostgreSQL for 10 minutes; memory
(RSS, PSS), open file descriptors and database connections must stay flat, and no call may fail.

Starts a real `pairank serve` (default model, the machine's PostgreSQL in a fresh schema, embedded job
worker, shipped defaults; checkpoints every 60 s or 1,000 changes), loads 5,000 PFCC-S claims (or
generated ones), then 4 clients call at a fixed rate, together --rate calls/s: 60% rank (a tweet,
k=10), 15% upsert (5 documents, new texts for ids of a rolling pool, so updates and re-inserts), 10%
delete (one document), 15% duplicates (2 texts). Every 5 s it samples the server's RSS and PSS, its open
file descriptors and its database connections (pg_stat_activity, by the server's application_name).
After --warmup seconds, memory must stay within 10% of its first post-warm-up minute. Writes
benchmarks/soak.md, .json and soak.png (memory, latency, descriptors and connections over time).

    .venv/bin/python benchmarks/serving/soak.py [--seconds 600] [--rate 20] [--database-url URL]

`drive_soak` is also the suite's short variant (tests/processes/test_soak.py: a tiny model, 45 s).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench_common import command_line, machine  # noqa: E402
from traffic import Call, Load, Request, answered, process_memory, summary, windows  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
POOL = 2000  # document ids the writes cycle through
CLIENTS = 4
APPLICATION = "pairank-soak"


def mixed_calls(corpus: str, queries: list[str]) -> Callable[[Any], Request]:
    """The traffic mix (see the module docstring)."""
    base = f"/v1/corpora/{corpus}"

    def next_call(rng: Any) -> Request:
        roll = rng.random()
        if roll < 0.60:
            return "rank", "POST", f"{base}/rank", {"query": rng.choice(queries), "k": 10}
        if roll < 0.75:
            docs = [
                {
                    "id": f"soak-{rng.randrange(POOL)}",
                    "text": f"{rng.choice(queries)} ({uuid.uuid4().hex[:6]})",
                }
                for _ in range(5)
            ]
            return "upsert", "POST", f"{base}/documents", {"documents": docs}
        if roll < 0.85:
            return "delete", "DELETE", f"{base}/documents/soak-{rng.randrange(POOL)}", None
        return "duplicates", "POST", f"{base}/duplicates", {"texts": rng.sample(queries, 2)}

    return next_call


def growth(samples: list[dict[str, Any]], key: str, warmup: float, window: float = 60.0) -> dict[str, Any]:
    """The first post-warm-up `window`'s mean against the last one's, and the peak, for one measure."""
    after = [s for s in samples if s["t"] >= warmup]
    if len(after) < 2:
        return {}
    end = after[-1]["t"]
    first = [s[key] for s in after if s["t"] < after[0]["t"] + window]
    last = [s[key] for s in after if s["t"] > end - window]
    start, final = sum(first) / len(first), sum(last) / len(last)
    return {
        "first_minute": round(start, 1),
        "last_minute": round(final, 1),
        "peak": max(s[key] for s in after),
        "growth_percent": round(100 * (final - start) / start, 2) if start else 0.0,
    }


def drive_soak(
    port: int, pid: int, corpus: str, queries: list[str], seconds: float, rate: float, warmup: float,
    connections: Callable[[], int] | None = None, sample_every: float = 5.0, window: float = 60.0,
) -> dict[str, Any]:  # fmt: skip
    """Run the mix for `seconds`, sampling the server; calls by operation, samples, growth."""
    load = Load(port, mixed_calls(corpus, queries), CLIENTS, rate_per_client=rate / CLIENTS, timeout=30)
    samples: list[dict[str, Any]] = []
    deadline = load.origin + seconds
    while True:
        sample = {"t": round(time.monotonic() - load.origin, 1), **process_memory(pid)}
        if connections is not None:
            sample["db_connections"] = connections()
        samples.append(sample)
        if time.monotonic() + sample_every > deadline:
            break
        time.sleep(sample_every)
    calls = load.stop()
    by_op = {op: summary([c for c in calls if c.op == op]) for op in sorted({c.op for c in calls})}
    measures = ["rss_mib", "pss_mib", "open_fds", "other_fds"] + (["db_connections"] if connections else [])
    return {
        "seconds": seconds,
        "rate_per_s": rate,
        "achieved_per_s": round(len(calls) / seconds, 1),
        "all": summary(calls),
        "by_operation": by_op,
        "growth": {key: growth(samples, key, warmup, window) for key in measures},
        "samples": samples,
        "windows": windows(calls, 10.0),
        "calls": calls,
    }


def plot(result: dict[str, Any], warmup: float, path: Path) -> None:
    """Memory, latency, descriptors and connections over the run."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    samples, rows = result["samples"], [w for w in result["windows"] if w["p99_ms"] is not None]
    figure, (memory, latency, counts) = plt.subplots(3, 1, figsize=(9, 9), sharex=True)
    for key, label in (("rss_mib", "RSS"), ("pss_mib", "PSS")):
        memory.plot([s["t"] for s in samples], [s[key] for s in samples], label=label)
    memory.set_ylabel("MiB")
    memory.set_ylim(bottom=0)
    latency.plot([w["t"] for w in rows], [w["p50_ms"] for w in rows], label="p50")
    latency.plot([w["t"] for w in rows], [w["p99_ms"] for w in rows], label="p99")
    latency.set_ylabel("ms, 10 s windows")
    counts.plot([s["t"] for s in samples], [s["open_fds"] for s in samples], label="open file descriptors")
    if "db_connections" in samples[0]:
        counts.plot(
            [s["t"] for s in samples], [s["db_connections"] for s in samples], label="database connections"
        )
    counts.set_ylim(bottom=0)
    counts.set_xlabel("seconds")
    for axis in (memory, latency, counts):
        axis.axvline(warmup, color="grey", linestyle=":", linewidth=1)
        axis.legend(loc="lower right")
    memory.set_title(
        f"Soak: {result['rate_per_s']} mixed calls/s on PostgreSQL (warm-up until the dotted line)"
    )
    figure.tight_layout()
    figure.savefig(path, dpi=100)


def connection_counter(database_url: str) -> tuple[Callable[[], int], Callable[[], None]]:
    """A function counting the server's connections (by application_name), and one to close it."""
    from sqlalchemy import create_engine, text

    engine = create_engine(database_url.split("?")[0], pool_size=1)
    query = text("SELECT count(*) FROM pg_stat_activity WHERE application_name = :name")

    def count() -> int:
        with engine.connect() as connection:
            return int(connection.execute(query, {"name": APPLICATION}).scalar_one())

    return count, engine.dispose


def main(argv: list[str] | None = None) -> int:
    """Start the server on a fresh schema, soak it, write soak.md/.json/.png."""
    from serving import DEFAULT_DATA, corpus_and_queries, load_corpus, start
    from sqlalchemy import create_engine, make_url, text

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--seconds", type=float, default=600.0)
    parser.add_argument("--warmup", type=float, default=120.0)
    parser.add_argument("--rate", type=float, default=20.0, help="calls per second, all clients together")
    parser.add_argument("--database-url", default="postgresql+psycopg://postgres@127.0.0.1:5432/test")
    parser.add_argument("--workdir", type=Path, default=REPO / "data" / "bench-soak")
    parser.add_argument("--output-dir", type=Path, default=Path(__file__).resolve().parents[1])
    args = parser.parse_args(argv)
    documents, queries, source = corpus_and_queries(args.data)
    schema = f"soak_{uuid.uuid4().hex[:8]}"
    admin = create_engine(args.database_url)
    with admin.begin() as connection:
        connection.execute(text(f'CREATE SCHEMA "{schema}"'))
    url = make_url(args.database_url)
    query = {**url.query, "options": f"-csearch_path={schema}", "application_name": APPLICATION}
    server_url = url.set(query=query).render_as_string(hide_password=False)
    count, close_counter = connection_counter(args.database_url)
    port = 18400
    process = start({"PAIRANK_DATABASE_URL": server_url}, args.workdir, port)
    try:
        load_corpus(port, documents[:5000])
        print(f"soak: {args.rate} calls/s for {args.seconds} s", file=sys.stderr)
        result = drive_soak(port, process.pid, "claims", queries, args.seconds, args.rate, args.warmup, count)
        result["final_index"] = httpx.get(f"http://127.0.0.1:{port}/v1/corpora/claims/index").json()
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(120)
        close_counter()
        with admin.begin() as connection:
            connection.execute(text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        admin.dispose()
    calls: list[Call] = result.pop("calls")
    plot(result, args.warmup, args.output_dir / "soak.png")
    payload = {
        "command": command_line("serving/soak.py", argv),
        "machine": machine(),
        "corpus": {"documents": min(5000, len(documents)), "source": source},
        "database": "PostgreSQL (the machine's, a fresh schema)",
        "warmup_seconds": args.warmup,
        **result,
        "failed_calls": [c.__dict__ for c in calls if not answered(c)][:50],
    }
    (args.output_dir / "soak.json").write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    from soak_report import to_markdown

    (args.output_dir / "soak.md").write_text(to_markdown(payload), encoding="utf-8")
    print(to_markdown(payload))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
