"""What keys and rate limits cost per request, over real HTTP, side by side in one run.

Three `pairank serve` processes in turn (default model and backend, SQLite, the 10,369-document corpus
of benchmarks/serving/serving.py), each driven with 12-word queries at 1 and 32 keep-alive clients:
  - open: PAIRANK_AUTH=disabled, no rate limit (what benchmarks/serving/serving.py measures);
  - keys: PAIRANK_AUTH=required, every request with a key (a SHA-256, the key's row remembered for
    PAIRANK_KEY_CACHE_SECONDS: before that cache, a primary-key lookup per request cost 0.87x);
  - keys + rate limit: the same, with the per-key token bucket on (set high enough never to refuse).
Writes benchmarks/auth_overhead.md and .json.

    nice -n 10 .venv/bin/python benchmarks/serving/auth_overhead.py [--seconds 20] [--data ../shared/data]
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench_common import command_line, machine  # noqa: E402
from serving import DEFAULT_DATA, corpus_and_queries, load_corpus, query_sets, start  # noqa: E402
from serving_load import drive  # noqa: E402

from app.usecases.api_keys import new_key_text  # noqa: E402

HERE = Path(__file__).resolve().parents[1]
KEY = new_key_text()
CONFIGS: dict[str, dict[str, str]] = {
    "open (auth disabled, no rate limit)": {},
    "keys (auth required)": {"PAIRANK_AUTH": "required", "PAIRANK_BOOTSTRAP_ADMIN_KEY": KEY},
    "keys + rate limit": {
        "PAIRANK_AUTH": "required",
        "PAIRANK_BOOTSTRAP_ADMIN_KEY": KEY,
        "PAIRANK_RATE_LIMIT": "1000000",
        "PAIRANK_RATE_BURST": "1000000",
    },
}


def run(name: str, extra: dict[str, str], args: argparse.Namespace, documents: list[dict[str, str]],
        queries: list[str], port: int) -> dict[str, Any]:  # fmt: skip
    """One configuration: load the corpus, then 1 and 32 clients."""
    folder = args.workdir / f"auth-{port}"
    shutil.rmtree(folder, ignore_errors=True)
    process = start(extra, folder, port)
    headers = {"Authorization": f"Bearer {KEY}"} if extra else {}
    try:
        load_corpus(port, documents, headers)
        result = {}
        for clients in (1, 32):
            print(f"auth_overhead: {name}: {clients} clients", file=sys.stderr)
            result[f"{clients} clients"] = drive(port, queries, clients, args.seconds, headers=headers)
        return result
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(60)


def report(results: dict[str, Any], meta: dict[str, Any]) -> str:
    """The markdown table: p50 and requests/s per configuration, ratios against `open`."""
    base = results[next(iter(CONFIGS))]
    lines = [
        "# What keys and rate limits cost per request",
        "",
        f"Command: `{meta['command']}`  ",
        f"Machine: {meta['machine']['nproc']} CPUs ({meta['machine']['cpu_model']}), "
        f"{meta['machine']['memory_gib']} GiB; {meta['date']}  ",
        f"Corpus: {meta['corpus']}, SQLite, 1 worker; 12-word queries, k=10, {meta['seconds']} s per level.",
        "",
        "| configuration | 1 client p50 ms | 1 client req/s | 32 clients req/s | 32 clients p99 ms "
        "| 32 clients vs open |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for name, result in results.items():
        one, many = result["1 clients"], result["32 clients"]
        ratio = many["requests_per_s"] / base["32 clients"]["requests_per_s"]
        lines.append(
            f"| {name} | {one['p50_ms']} | {one['requests_per_s']} | {many['requests_per_s']} | "
            f"{many['p99_ms']} | {ratio:.2f}x |"
        )
    errors = sum(r[level]["errors"] for r in results.values() for level in r)
    lines += ["", f"Errors (non-200) over every run: {errors}."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Run the three configurations one after another and write the report."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "pairank-auth-bench")
    args = parser.parse_args(argv)
    documents, queries, corpus = corpus_and_queries(args.data)
    short = query_sets(queries)["12-word queries"]
    results = {name: run(name, extra, args, documents, short, 18300 + i)
               for i, (name, extra) in enumerate(CONFIGS.items())}  # fmt: skip
    meta = {"command": command_line("serving/auth_overhead.py", argv), "machine": machine(), "corpus": corpus}
    meta["seconds"] = args.seconds
    meta["date"] = meta["machine"]["date"]
    (HERE / "auth_overhead.json").write_text(json.dumps({"meta": meta, "results": results}, indent=2) + "\n")
    (HERE / "auth_overhead.md").write_text(report(results, meta))
    print(report(results, meta))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
