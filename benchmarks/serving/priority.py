"""Queries keep priority over bulk work: rank latency at 8 clients with and without a 50,000-document
import (and the checkpoints it causes) on the same 2 cores.

Starts a real `pairank serve` (default model, SQLite, the embedded job worker, shipped defaults) with
the PFCC-S claims (10,369, title + text) in a claim corpus, then:
  1. queries alone: 8 keep-alive clients rank full PFCC-S tweets (k=10, the corpus default: hybrid)
     for --seconds;
  2. with the import: a 50,000-document JSON-lines file goes to POST /v1/corpora/claims/imports (the
     same corpus: its index grows and is checkpointed every 1,000 changes meanwhile) and the same 8
     clients rank until the import is done.
Import documents are real texts (ANTIQUE answers and PFCC-S claims, cycled with a suffix so each is new
to the encoder) when ../shared is present, else generated ones. The load generator runs in this process
on the same 2 cores. Writes benchmarks/priority.md, .json and priority.png (latency over time).

    .venv/bin/python benchmarks/serving/priority.py [--seconds 60] [--documents 50000]
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench_common import command_line, machine  # noqa: E402
from serving import DEFAULT_DATA, corpus_and_queries, load_corpus, start  # noqa: E402
from traffic import Call, Load, summary, windows  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
PORT = 18300
CLIENTS = 8


def import_texts(data: Path, count: int) -> list[str]:
    """`count` distinct texts of realistic lengths (see the module docstring)."""
    pool: list[str] = []
    for name in ("antique", "pfcc_snopes"):
        corpus = data / name / "corpus.jsonl"
        if corpus.is_file():
            for line in corpus.read_text(encoding="utf-8").splitlines():
                row = json.loads(line)
                pool.append(f"{row.get('title', '')} {row['text']}".strip()[:2000])
    if not pool:
        words = ["vaccine", "tower", "virus", "moon", "senator", "law", "flood", "shark", "photo", "vote"]
        pool = [" ".join(words[(i * 7 + j) % len(words)] for j in range(40)) for i in range(1000)]
    return [f"{pool[i % len(pool)]} (archive {i // len(pool)})" for i in range(count)]


def write_upload(path: Path, texts: list[str]) -> None:
    """The import file: one document per line."""
    with path.open("w", encoding="utf-8") as handle:
        for i, text in enumerate(texts):
            handle.write(json.dumps({"id": f"archive-{i}", "text": text}) + "\n")


def ranks(queries: list[str]) -> Any:
    """The clients' calls: a random tweet ranked against the claims."""
    return lambda rng: ("rank", "POST", "/v1/corpora/claims/rank", {"query": rng.choice(queries), "k": 10})


def watch_checkpoints(http: httpx.Client, stop: threading.Event, out: list[dict[str, Any]]) -> None:
    """Every checkpoint of the corpus while the import runs (its time and how long it took)."""
    seen = None
    while not stop.wait(0.5):
        index = http.get("/v1/corpora/claims/index").json()
        if index.get("last_checkpoint") != seen:
            seen = index.get("last_checkpoint")
            out.append({"at": seen, "seconds": index.get("checkpoint_seconds"), "size": index.get("size")})


def run_import(http: httpx.Client, upload: Path, limit_s: float) -> dict[str, Any]:
    """Upload the file and wait for its job; the job's final record and the wall time."""
    started = time.monotonic()
    with upload.open("rb") as body:
        response = http.post(
            "/v1/corpora/claims/imports", content=body, headers={"content-type": "application/x-ndjson"}
        )
    response.raise_for_status()
    job_id = response.json()["id"]
    while time.monotonic() - started < limit_s:
        job = http.get(f"/v1/corpora/claims/imports/{job_id}").json()
        if job["status"] in ("succeeded", "failed", "cancelled"):
            return {"job": job, "seconds": round(time.monotonic() - started, 1)}
        time.sleep(1)
    raise RuntimeError(f"the import did not finish in {limit_s} s")


def plot(calls: list[Call], import_window: tuple[float, float], documents: int, path: Path) -> None:
    """Rank latency (p50, p99 per 5 s) over the run, the import's span shaded."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [w for w in windows(calls, 5.0) if w["p99_ms"] is not None]
    figure, axis = plt.subplots(figsize=(9, 4))
    axis.plot([w["t"] for w in rows], [w["p50_ms"] for w in rows], label="p50")
    axis.plot([w["t"] for w in rows], [w["p99_ms"] for w in rows], label="p99")
    axis.axvspan(*import_window, color="orange", alpha=0.15, label=f"{documents:,}-document import")
    axis.axhline(500, color="red", linestyle="--", linewidth=1, label="500 ms")
    axis.set_xlabel("seconds")
    axis.set_ylabel("rank latency (ms), 5 s windows")
    axis.set_title(f"{CLIENTS} clients ranking, with and without a bulk import (2 cores)")
    axis.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=110)


def main(argv: list[str] | None = None) -> int:
    """Queries alone, then with the import; write priority.md/.json/.png."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--seconds", type=float, default=60.0, help="queries-alone phase")
    parser.add_argument("--documents", type=int, default=50_000, help="documents imported")
    parser.add_argument("--import-limit", type=float, default=1800.0, help="give up after this many s")
    parser.add_argument("--workdir", type=Path, default=REPO / "data" / "bench-priority")
    parser.add_argument("--output-dir", type=Path, default=Path(__file__).resolve().parents[1])
    args = parser.parse_args(argv)
    documents, queries, source = corpus_and_queries(args.data)
    shutil.rmtree(args.workdir, ignore_errors=True)
    args.workdir.mkdir(parents=True)
    upload = args.workdir / "import.jsonl"
    write_upload(upload, import_texts(args.data, args.documents))
    process = start({}, args.workdir / "data", PORT)
    http = httpx.Client(base_url=f"http://127.0.0.1:{PORT}", timeout=600)
    try:
        load_corpus(PORT, documents)
        warm = Load(PORT, ranks(queries), CLIENTS)  # the first calls pay one-time costs
        time.sleep(5)
        warm.stop()
        print("priority: queries alone", file=sys.stderr)
        load = Load(PORT, ranks(queries), CLIENTS)
        time.sleep(args.seconds)
        print(f"priority: importing {args.documents} documents under the same load", file=sys.stderr)
        checkpoints: list[dict[str, Any]] = []
        stop_watch = threading.Event()
        watcher = threading.Thread(target=watch_checkpoints, args=(http, stop_watch, checkpoints))
        watcher.start()
        import_started = time.monotonic() - load.origin
        imported = run_import(http, upload, args.import_limit)
        import_ended = time.monotonic() - load.origin
        time.sleep(5)  # the last checkpoint after the import
        calls = load.stop()
        stop_watch.set()
        watcher.join()
        alone = [c for c in calls if c.at < import_started]
        during = [c for c in calls if import_started <= c.at < import_ended]
        job = imported["job"]
        payload = {
            "command": command_line("serving/priority.py", argv),
            "machine": machine(),
            "corpus": {"documents": len(documents), "source": source, "queries": len(queries)},
            "clients": CLIENTS,
            "queries_alone": summary(alone),
            "with_import": summary(during),
            "import": {
                "documents": args.documents,
                "status": job["status"],
                "seconds": imported["seconds"],
                "documents_per_s": round(args.documents / imported["seconds"], 1),
                "progress": job.get("progress"),
            },
            "checkpoints_during_import": [c for c in checkpoints if c["at"]],
            "final_index": http.get("/v1/corpora/claims/index").json(),
            "windows": windows(calls, 5.0),
        }
        plot(calls, (import_started, import_ended), args.documents, args.output_dir / "priority.png")
    finally:
        http.close()
        process.send_signal(signal.SIGINT)
        process.wait(120)
    (args.output_dir / "priority.json").write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    from priority_report import to_markdown

    (args.output_dir / "priority.md").write_text(to_markdown(payload), encoding="utf-8")
    print(to_markdown(payload))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
