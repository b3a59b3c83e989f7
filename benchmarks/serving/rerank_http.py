"""The HTTP part of benchmarks/serving/rerank_latency.py: real `pairank serve` processes re-ranking."""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench_common import latency_ms

REPO = Path(__file__).resolve().parents[2]
ADMIN = {"X-API-Key": "bench-admin"}
SERVERS = {"micro-batched": "true", "without micro-batching": "false"}


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _env(folder: Path, batching: str) -> dict[str, str]:
    env = {
        **os.environ,
        "PAIRANK_DATA_DIR": str(folder),
        "PAIRANK_AUTH": "disabled",
        "PAIRANK_RATE_LIMIT": "0",
        "PAIRANK_ADMIN_API_KEY": ADMIN["X-API-Key"],
        "PAIRANK_MODEL_CACHE_DIR": str(REPO / "data" / "models"),
        "PAIRANK_MICRO_BATCHING": batching,
    }
    env.pop("PAIRANK_DATABASE_URL", None)
    return env


def start(folder: Path, batching: str, reranker: Path) -> tuple[subprocess.Popen[bytes], int, str]:
    """Register the cross-encoder (`pairank models register`), then serve: (process, port, version)."""
    env = _env(folder, batching)
    registered = subprocess.run([sys.executable, "-m", "pairank.cli", "models", "register", str(reranker)],
                                env=env, capture_output=True, text=True, check=True)  # fmt: skip
    version = json.loads(registered.stdout)["version"]
    port = _port()
    process = subprocess.Popen([sys.executable, "-m", "pairank.cli", "serve", "--port", str(port)], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/ready", timeout=5).status_code == 200:
                return process, port, version
        except httpx.TransportError:
            pass
        time.sleep(0.5)
    process.kill()
    raise RuntimeError("the server did not become ready")


def prepare(port: int, version: str, documents: list[str]) -> dict[str, Any]:
    """The claims corpus (hybrid a=0.2) with the cross-encoder as its re-ranking stage (k=20)."""
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=600) as http:
        http.post("/v1/corpora", json={"name": "claims", "kind": "claim"}).raise_for_status()
        for offset in range(0, len(documents), 500):
            batch = [
                {"id": f"c{offset + i}", "text": t} for i, t in enumerate(documents[offset : offset + 500])
            ]
            http.post("/v1/corpora/claims/documents", json={"documents": batch}).raise_for_status()
        stage = {"mode": "hybrid", "alpha": 0.2, "fusion": "linear", "rerank": {"model": version, "k": 20}}
        http.put("/v1/corpora/claims/ranking", json=stage, headers=ADMIN).raise_for_status()
        ranked = http.post("/v1/corpora/claims/rank", json={"query": "warm-up: loads the re-ranker"})
        ranked.raise_for_status()
        return {"ranking": ranked.json()["ranking"], "ready": http.get("/ready").json()}


def drive(port: int, bodies: list[dict[str, Any]], clients: int) -> tuple[list[float], int]:
    """`clients` keep-alive clients sending the bodies (shared, one at a time each); (ms of 200s, others)."""
    pending, lock = list(bodies), threading.Lock()
    latencies: list[float] = []
    failed = [0]

    def client() -> None:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        while True:
            with lock:
                if not pending:
                    break
                body = pending.pop()
            started = time.perf_counter()
            connection.request(
                "POST", "/v1/corpora/claims/rank", json.dumps(body), {"content-type": "application/json"}
            )
            response = connection.getresponse()
            response.read()
            with lock:
                if response.status == 200:
                    latencies.append((time.perf_counter() - started) * 1000)
                else:
                    failed[0] += 1
        connection.close()

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return latencies, failed[0]


def http_runs(args: argparse.Namespace, reranker: Path, documents: list[str], queries: list[str],
              scratch: Path) -> dict[str, Any]:  # fmt: skip
    """Both servers side by side: every (server, stage on/off, clients) block once per round."""
    servers: dict[str, tuple[subprocess.Popen[bytes], int]] = {}
    result: dict[str, Any] = {"servers": {}, "modes": {}}
    try:
        for name, batching in SERVERS.items():
            process, port, version = start(scratch / name.replace(" ", "-"), batching, reranker)
            servers[name] = (process, port)
            result["servers"][name] = prepare(port, version, documents[: args.corpus])
        rng = random.Random(1)
        samples: dict[str, list[float]] = {}
        spent: dict[str, float] = {}
        errors: dict[str, int] = {}
        for round_number in range(args.rounds):
            for name, (_, port) in servers.items():
                for stage in ("re-ranked (k=20)", "first stage only"):
                    for clients in (1, 8):
                        count = args.queries if clients == 1 else clients * max(1, args.queries // 4)
                        extra = {} if stage.startswith("re-ranked") else {"rerank": {"enabled": False}}
                        bodies = [{"query": rng.choice(queries), "k": 10, **extra} for _ in range(count)]
                        label = f"{name} / {stage} / {clients} client{'s' if clients > 1 else ''}"
                        print(f"rerank_latency: http round {round_number + 1}: {label}", file=sys.stderr)
                        started = time.perf_counter()
                        latencies, failed = drive(port, bodies, clients)
                        spent[label] = spent.get(label, 0.0) + time.perf_counter() - started
                        samples.setdefault(label, []).extend(latencies)
                        errors[label] = errors.get(label, 0) + failed
        for label, latencies in samples.items():
            result["modes"][label] = {
                "requests": len(latencies),
                "errors": errors[label],
                **latency_ms(latencies),
                "requests_per_s": round(len(latencies) / spent[label], 2),
            }
    finally:
        for process, _ in servers.values():
            process.send_signal(signal.SIGINT)
            process.wait(60)
    return result
