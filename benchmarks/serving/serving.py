"""Serving speed over real HTTP: today's behaviour against the new default, side by side in one run.

Starts a real `pairank serve` (default model, SQLite, a 10,369-document corpus: the PFCC-S claims when
../shared is present, else generated claims) once per configuration:
  - baseline: PAIRANK_ENCODER_BACKEND=torch PAIRANK_ENCODER_PRECISION=fp32 PAIRANK_MICRO_BATCHING=false
  - default: the shipped defaults (quality-gated int8 export, micro-batching)
then drives `POST /v1/corpora/{name}/rank` (k=10, no mode: the claim corpus's default ranking, hybrid
a=0.2) with 1, 8 and 32 concurrent keep-alive clients for a
bounded time each: p50/p95/p99 latency, requests/s, errors (429s counted apart), server RSS. A last run
floods the default server (256 clients, a small queue limit) and counts 200s, 429s, 5xx and timeouts.
The load generator runs in this process on the same 2 cores as the server (both configurations pay it).
Writes benchmarks/serving.md and .json.

    nice -n 10 .venv/bin/python benchmarks/serving/serving.py [--seconds 20] [--data ../shared/data]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench_common import command_line, machine  # noqa: E402
from serving_load import drive, rss_gib  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
DEFAULT_DATA = REPO.parent / "shared" / "data"
CONFIGS = {
    "baseline (torch fp32, no micro-batching)": {
        "PAIRANK_ENCODER_BACKEND": "torch",
        "PAIRANK_ENCODER_PRECISION": "fp32",
        "PAIRANK_MICRO_BATCHING": "false",
    },
    "default (auto backend, micro-batching)": {},
}
CORPUS_SIZE = 10_369


def corpus_and_queries(data: Path) -> tuple[list[dict[str, str]], list[str], str]:
    """The PFCC-S claims and tweets when present, else generated ones; and which it was."""
    folder = data / "pfcc_snopes"
    if (folder / "corpus.jsonl").is_file():
        documents = []
        for line in (folder / "corpus.jsonl").read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            text = f"{row.get('title', '')} {row['text']}".strip()
            documents.append({"id": row["_id"], "text": text[:2000]})
        queries = [json.loads(line)["text"] for line in (folder / "queries.jsonl").read_text().splitlines()]
        return documents[:CORPUS_SIZE], queries, "PFCC-S claims (title + text) and tweets"
    rng = random.Random(0)
    words = ["vaccine", "tower", "virus", "moon", "senator", "law", "flood", "shark", "photo", "election"]
    documents = [{"id": f"c{i}", "text": " ".join(rng.choices(words, k=20))} for i in range(CORPUS_SIZE)]
    queries = [" ".join(rng.choices(words, k=12)) for _ in range(500)]
    return documents, queries, "generated claims (no ../shared/data)"


def query_sets(queries: list[str]) -> dict[str, list[str]]:
    """The queries as they are, and cut to their first 12 words (a search box's length).

    Encoding dominates a ranking call, and it grows with the query: PFCC-S tweets average 67 tokens,
    a typed question or claim about 15-20.
    """
    return {"full queries": queries, "12-word queries": [" ".join(q.split()[:12]) for q in queries]}


def start(env_extra: dict[str, str], folder: Path, port: int) -> subprocess.Popen[bytes]:
    """A `pairank serve` process on its own SQLite data dir; returns once /ready answers 200."""
    inherited = {key: value for key, value in os.environ.items() if key != "PAIRANK_DATABASE_URL"}
    env = {
        **inherited,  # SQLite in the data dir unless `env_extra` names a database
        "PAIRANK_DATA_DIR": str(folder),
        # Measures the serving path, not the per-key limiter: no keys, no rate limit.
        "PAIRANK_AUTH": "disabled",
        "PAIRANK_RATE_LIMIT": "0",
        "PAIRANK_MODEL_CACHE_DIR": str(REPO / "data" / "models"),
        **env_extra,
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "pairank.cli", "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/ready", timeout=5).status_code == 200:
                return process
        except httpx.TransportError:
            pass
        time.sleep(0.5)
    process.kill()
    raise RuntimeError("the server did not become ready")


def load_corpus(port: int, documents: list[dict[str, str]], headers: dict[str, str] | None = None) -> float:
    """Create the corpus and upsert every document; returns documents per second."""
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=600, headers=headers) as http:
        http.post("/v1/corpora", json={"name": "claims", "kind": "claim"})
        started = time.perf_counter()
        for offset in range(0, len(documents), 500):
            response = http.post(
                "/v1/corpora/claims/documents", json={"documents": documents[offset : offset + 500]}
            )
            response.raise_for_status()
        return len(documents) / (time.perf_counter() - started)


def run_config(
    name: str,
    extra: dict[str, str],
    args: argparse.Namespace,
    documents: list[dict[str, str]],
    queries: list[str],
    port: int,
) -> dict[str, Any]:
    """Load the corpus, then every concurrency level; the flood only for the default."""
    folder = args.workdir / f"config-{port}"
    shutil.rmtree(folder, ignore_errors=True)
    process = start(extra, folder, port)
    try:
        ready = httpx.get(f"http://127.0.0.1:{port}/ready").json()
        result: dict[str, Any] = {"backend": ready["backend"], "precision": ready["precision"]}
        result["upsert_docs_per_s"] = round(load_corpus(port, documents), 1)
        # The requests name no mode: the corpus's default ranking (a claim corpus: hybrid) answers them.
        probe = httpx.post(f"http://127.0.0.1:{port}/v1/corpora/claims/rank", json={"query": queries[0]})
        result["ranking"] = probe.json()["ranking"]
        for label, texts in query_sets(queries).items():
            for clients in (1, 8, 32):
                print(f"serving: {name}: {label}: {clients} clients", file=sys.stderr)
                result.setdefault(label, {})[f"{clients} clients"] = drive(port, texts, clients, args.seconds)
        result["rss_gib"] = rss_gib(process.pid)
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(60)
    return result


def flood(args: argparse.Namespace, documents: list[dict[str, str]], queries: list[str]) -> dict[str, Any]:
    """256 clients against the default server with a 16-text queue: 429s, never 5xx or timeouts.

    The request thread pool (40 threads) bounds how many queries can wait for the encoder at once, so
    the queue limit must sit below that for the flood to reach it; the default (1,024 texts) guards
    against large interactive calls (duplicates of 100 texts, similarity of 1,000 pairs).
    """
    port = 18200
    folder = args.workdir / "flood"
    shutil.rmtree(folder, ignore_errors=True)
    process = start({"PAIRANK_MAX_QUEUED_TEXTS": "16"}, folder, port)
    try:
        load_corpus(port, documents[:2000])
        return {"clients": 256, "max_queued_texts": 16, **drive(port, queries, 256, args.seconds, timeout=30)}
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(60)


def encoder_ceiling(queries: list[str], seconds: float) -> dict[str, Any]:
    """The default encoder alone on the queries (batches of 32, length-sorted, all cores): texts/s.

    No request can be served faster than its query is encoded, so this bounds what any number of
    clients gets from the server on this machine (which also searches, answers and runs the clients).
    """
    from encoders.loader import EncoderOptions, load_encoder_backend
    from pairank.models import resolve_model

    loaded = load_encoder_backend(resolve_model(None), EncoderOptions(cache_root=REPO / "data" / "models"))
    backend = loaded.backend
    tokens = backend.tokenize(queries)
    backend.forward(tokens[:32])
    texts, started = 0, time.perf_counter()
    while time.perf_counter() - started < seconds:
        for offset in range(0, len(tokens), 32):
            backend.forward(sorted(tokens[offset : offset + 32], key=len))
            texts += len(tokens[offset : offset + 32])
    rate = texts / (time.perf_counter() - started)
    return {"variant": f"{backend.name}-{backend.precision}", "texts_per_s": round(rate, 1)}


def main(argv: list[str] | None = None) -> int:
    """Run both configurations and the flood; write serving.md and serving.json."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--seconds", type=float, default=20.0, help="load duration per concurrency level")
    parser.add_argument("--workdir", type=Path, default=REPO / "data" / "bench-serving")
    parser.add_argument("--output-dir", type=Path, default=Path(__file__).resolve().parents[1])
    args = parser.parse_args(argv)
    documents, queries, source = corpus_and_queries(args.data)
    results = {
        name: run_config(name, extra, args, documents, queries, 18100 + i)
        for i, (name, extra) in enumerate(CONFIGS.items())
    }
    payload = {
        "command": command_line("serving/serving.py", argv),
        "machine": machine(),
        "corpus": {"documents": len(documents), "source": source, "queries": len(queries)},
        "results": results,
        "flood": flood(args, documents, queries),
        "encoder_ceiling": encoder_ceiling(queries, args.seconds),
    }
    args.output_dir.mkdir(parents=True, exist_ok=True)
    (args.output_dir / "serving.json").write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    from serving_report import to_markdown

    (args.output_dir / "serving.md").write_text(to_markdown(payload), encoding="utf-8")
    print(to_markdown(payload))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
