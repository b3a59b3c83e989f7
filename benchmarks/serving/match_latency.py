"""`/match` beside `/rank` on the same corpus and queries, interleaved in one run (target: p50 <= 1.5x).

The real app in this process (TestClient, the default model as the service serves it, SQLite) with the
10,369 PFCC-S claims as a claim corpus (hybrid a=0.2), the 720 train pairs judged, match decisions
calibrated; then every PFCC-S dev tweet is sent to `/rank` (k=5) and to `/match`, alternating which goes
first, for `--rounds` rounds. Latency is the client's wall time per call. Writes
benchmarks/match_latency.json.

    nice -n 10 .venv/bin/python benchmarks/serving/match_latency.py [--data ../shared/data] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench_common import command_line, machine, percentile  # noqa: E402

from app.config import Settings  # noqa: E402
from app.db.migrate import upgrade_to_head  # noqa: E402
from app.main import create_app  # noqa: E402
from app.serving.runtime import Runtime  # noqa: E402
from evaluation.datasets import load_beir  # noqa: E402

HERE = Path(__file__).resolve().parents[1]


def timed(client: Any, path: str, body: dict[str, Any]) -> float:
    """One call's wall time in ms (asserting it answered 200)."""
    started = time.perf_counter()
    response = client.post(path, json=body)
    elapsed = (time.perf_counter() - started) * 1000
    assert response.status_code == 200, response.text
    return elapsed


def run(data: Path, rounds: int) -> dict[str, Any]:
    """Load, calibrate, then time both routes interleaved."""
    from fastapi.testclient import TestClient

    folder = data / "pfcc_snopes"
    train, dev = load_beir(folder, "train"), load_beir(folder, "dev")
    with tempfile.TemporaryDirectory() as scratch:
        settings = Settings(data_dir=Path(scratch), database_url=f"sqlite:///{scratch}/bench.db",
                            embedded_worker=True, seed_demo=False, auth="disabled")  # fmt: skip
        upgrade_to_head(settings.resolved_database_url)
        runtime = Runtime(settings)
        with TestClient(create_app(settings, runtime)) as client:
            assert runtime.serving.wait_ready(600), runtime.serving.load_error
            client.post("/v1/corpora", json={"name": "snopes", "kind": "claim"})
            documents = [{"id": d, "text": t} for d, t in train.corpus.items()]
            started = time.monotonic()
            for start in range(0, len(documents), 500):
                response = client.post(
                    "/v1/corpora/snopes/documents", json={"documents": documents[start : start + 500]}
                )
                assert response.status_code == 200, response.text
            loaded = time.monotonic() - started
            pairs = [{"query": train.queries[q], "document_id": d, "label": 1}
                     for q, judged in train.qrels.items() for d in judged]  # fmt: skip
            for start in range(0, len(pairs), 500):
                client.post("/v1/corpora/snopes/pairs", json={"pairs": pairs[start : start + 500]})
            started = time.monotonic()
            calibrate = client.post("/v1/corpora/snopes/match/calibrate", json={})
            calibration = calibrate.json()
            if calibrate.status_code == 202:  # more than the inline limit: a job, followed by its result
                deadline = time.monotonic() + 3600
                while (found := client.get("/v1/corpora/snopes/match/calibration")).status_code == 404:
                    assert time.monotonic() < deadline, "the calibration job never finished"
                    time.sleep(2)
                calibration = found.json()
            calibrated = time.monotonic() - started
            queries = list(dev.queries.values())
            rank_ms: list[float] = []
            match_ms: list[float] = []
            for _ in range(2):  # warm-up
                timed(client, "/v1/corpora/snopes/rank", {"query": queries[0], "k": 5})
                timed(client, "/v1/corpora/snopes/match", {"text": queries[0]})
            for round_ in range(rounds):
                for i, query in enumerate(queries):
                    calls = [("/v1/corpora/snopes/rank", {"query": query, "k": 5}, rank_ms),
                             ("/v1/corpora/snopes/match", {"text": query}, match_ms)]  # fmt: skip
                    if (i + round_) % 2:
                        calls.reverse()
                    for path, body, sink in calls:
                        sink.append(timed(client, path, body))
        runtime.close()
    summary = {
        name: {"p50": statistics.median(v), "p95": percentile(v, 0.95), "n": len(v)}
        for name, v in (("rank", rank_ms), ("match", match_ms))
    }
    return {
        "corpus": len(documents),
        "judged_pairs": len(pairs),
        "load_seconds": round(loaded, 1),
        "calibration_seconds": round(calibrated, 1),
        "calibration": {"kind": calibration.get("kind"), "thresholds": calibration.get("thresholds")},
        "latency_ms": summary,
        "ratio_p50": summary["match"]["p50"] / summary["rank"]["p50"],
    }


def main(argv: list[str] | None = None) -> None:
    """Run and write benchmarks/match_latency.json."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=HERE.parent.parent / "shared" / "data")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    result = run(args.data, args.rounds)
    result["command"] = command_line("serving/match_latency.py", argv)
    result["machine"] = machine()
    (HERE / "match_latency.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result["latency_ms"], indent=2), "ratio", round(result["ratio_p50"], 2))


if __name__ == "__main__":
    main()
