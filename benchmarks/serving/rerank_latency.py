"""Re-ranking latency: a MiniLM-sized cross-encoder scoring a query's top 20, torch fp32 against the
quality-gated int8 export, one client and several, through the micro-batcher and without it.

The cross-encoder is the one `pairank train --reranker` starts from: the bundled all-MiniLM-L6-v2
weights with a new one-logit head (untrained: latency does not depend on what the head learned),
pairs cut to 256 tokens. Queries are PFCC-S tweets, documents PFCC-S claims (title + text) when
../shared/data is there, else generated ones.

1. In process (`app.serving.reranker.Reranker`: pair tokenization, micro-batcher, backend), variants
   side by side: every block of every variant and mode runs once per round, rounds repeated, so the
   machine's noise falls on all of them alike. Each client re-ranks one query's 20 documents at a time;
   the micro-batcher's passes hold PAIRANK_RERANK_BATCH_PAIRS (20) pairs, or 64, or it is off.
2. Over HTTP: `pairank serve` (SQLite, default bi-encoder, hybrid a=0.2, a corpus of claims) with the
   cross-encoder registered by `pairank models register` and set as the corpus's re-ranking stage
   (k=20); rank calls (k=10) with the stage and with it turned off per request (`rerank.enabled=false`),
   one server with micro-batching and one without, blocks interleaved.

    .venv/bin/python benchmarks/serving/rerank_latency.py [--rounds 3] [--queries 10] [--skip-http]

Writes benchmarks/rerank_latency.json and .md.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench_common import command_line, latency_ms, machine  # noqa: E402
from rerank_http import http_runs  # noqa: E402
from rerank_report import PASSES, write_report  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
DATA = REPO.parent / "shared" / "data" / "pfcc_snopes"
WORK = REPO / "data" / "bench-rerank"
DEPTH = 20


def texts() -> tuple[list[str], list[str], str]:
    """Documents and queries: PFCC-S claims and tweets, or generated ones."""
    if (DATA / "corpus.jsonl").is_file():
        rows = [json.loads(line) for line in (DATA / "corpus.jsonl").read_text(encoding="utf-8").splitlines()]
        documents = [f"{r.get('title', '')} {r['text']}".strip()[:2000] for r in rows]
        queries = [json.loads(line)["text"] for line in (DATA / "queries.jsonl").read_text().splitlines()]
        return documents, queries, "PFCC-S claims (title + text) and tweets"
    rng = random.Random(0)
    words = ["vaccine", "tower", "virus", "moon", "senator", "law", "flood", "shark", "photo", "election"]
    documents = [" ".join(rng.choices(words, k=60)) for _ in range(3000)]
    return documents, [" ".join(rng.choices(words, k=25)) for _ in range(300)], "generated texts"


def cross_encoder_folder() -> Path:
    """The untrained MiniLM cross-encoder (saved once; seeded, so its version and exports are reused)."""
    folder = WORK / "minilm-cross-encoder"
    if not (folder / "config.json").is_file():
        import torch
        from sentence_transformers import CrossEncoder

        from pairank.models import bundled_model_path

        torch.manual_seed(0)
        CrossEncoder(str(bundled_model_path()), num_labels=1, max_length=256, device="cpu").save(str(folder))
    return folder


def rerankers(folder: Path) -> dict[str, Any]:
    """torch fp32 and the int8 variant `auto` picks, each behind the service's micro-batcher (passes of
    PAIRANK_RERANK_BATCH_PAIRS), one with passes of 64 pairs, and one pass per call."""
    from app.config import Settings
    from app.serving.reranker import Reranker
    from encoders.batcher import BatchingConfig
    from encoders.cross_export import CrossEncoderLoader
    from encoders.loader import EncoderOptions
    from pairank.models import resolve_model

    spec = resolve_model(str(folder))
    loaded = {
        "torch fp32": CrossEncoderLoader(spec, EncoderOptions("torch", "fp32", device="cpu")).load(),
        "int8": CrossEncoderLoader(
            spec, EncoderOptions(cache_root=REPO / "data" / "models", device="cpu")
        ).load(),
    }
    batching = {
        PASSES[0]: BatchingConfig(max_batch_texts=Settings().rerank_batch_pairs),
        PASSES[1]: BatchingConfig(max_batch_texts=64),
        PASSES[2]: BatchingConfig(enabled=False),
    }
    built: dict[str, Any] = {"variants": {}}
    for name, variant in loaded.items():
        built["variants"][name] = {"variant": variant.variant.key, "quality": variant.quality}
        for passes, config in batching.items():
            built[(name, passes)] = Reranker(variant, spec, config)
    return built


def block(
    score: Callable[[str, list[str]], Any], work: list[tuple[str, list[str]]], clients: int
) -> list[float]:
    """`clients` threads re-ranking `work` (shared, one query at a time each); latency per query, ms."""
    pending = list(work)
    lock = threading.Lock()
    latencies: list[float] = []

    def client() -> None:
        while True:
            with lock:
                if not pending:
                    return
                query, documents = pending.pop()
            started = time.perf_counter()
            score(query, documents)
            with lock:
                latencies.append((time.perf_counter() - started) * 1000)

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return latencies


def summary(latencies: list[float], seconds: float) -> dict[str, Any]:
    """Percentiles (ms) and queries per second of a mode's blocks."""
    return {
        "queries": len(latencies),
        **latency_ms(latencies),
        "queries_per_s": round(len(latencies) / seconds, 2),
    }


def in_process(args: argparse.Namespace, documents: list[str], queries: list[str]) -> dict[str, Any]:
    """Every (variant, clients, passes) mode, a block each per round (8 clients: int8 only, the default
    on a CPU; fp32 at 8 clients would take most of the run)."""
    built = rerankers(cross_encoder_folder())
    rng = random.Random(0)
    modes = [(v, 1, PASSES[0]) for v in ("torch fp32", "int8")]
    modes += [(v, c, p) for v, c in (("torch fp32", 4), ("int8", 4), ("int8", 8)) for p in PASSES]
    latencies: dict[tuple[str, int, str], list[float]] = {mode: [] for mode in modes}
    seconds: dict[tuple[str, int, str], float] = {mode: 0.0 for mode in modes}
    for name in ("torch fp32", "int8"):  # warm-up: first passes allocate
        built[(name, PASSES[0])].score(queries[0], documents[:DEPTH])
    for round_number in range(args.rounds):
        for mode in modes:
            variant, clients, passes = mode
            count = args.queries if clients == 1 else clients * max(1, args.queries // 4)
            work = [(rng.choice(queries), rng.sample(documents, DEPTH)) for _ in range(count)]
            print(f"rerank_latency: round {round_number + 1}: {variant}, {clients} clients, {passes}",
                  file=sys.stderr)  # fmt: skip
            started = time.perf_counter()
            latencies[mode] += block(built[(variant, passes)].score, work, clients)
            seconds[mode] += time.perf_counter() - started
    result: dict[str, Any] = {"variants": built["variants"], "modes": {}}
    for mode in modes:
        variant, clients, passes = mode
        label = f"{variant} / 1 client" if clients == 1 else f"{variant} / {clients} clients / {passes}"
        result["modes"][label] = summary(latencies[mode], seconds[mode])
    return result


def main(argv: list[str] | None = None) -> int:
    """Run both parts and write the JSON and the markdown report."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (each runs every mode)")
    parser.add_argument("--queries", type=int, default=10, help="queries per single-client block")
    parser.add_argument("--corpus", type=int, default=2000, help="claims in the served corpus (HTTP part)")
    parser.add_argument("--skip-http", action="store_true")
    parser.add_argument("--output", type=Path, default=REPO / "benchmarks" / "rerank_latency.json")
    args = parser.parse_args(argv)
    started = time.monotonic()
    documents, queries, source = texts()
    result: dict[str, Any] = {
        "machine": machine(),
        "command": command_line("serving/rerank_latency.py", argv),
        "data": source,
        "depth": DEPTH,
        "in_process": in_process(args, documents, queries),
    }
    if not args.skip_http:
        with tempfile.TemporaryDirectory(dir=WORK) as scratch:
            result["http"] = http_runs(args, cross_encoder_folder(), documents, queries, Path(scratch))
    result["seconds"] = round(time.monotonic() - started, 1)
    args.output.write_text(json.dumps(result, indent=2) + "\n")
    write_report(result, args.output.with_suffix(".md"))
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
