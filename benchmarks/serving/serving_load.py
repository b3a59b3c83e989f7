"""The load generator of benchmarks/serving/serving.py: keep-alive clients in threads, a request at a
time each."""

from __future__ import annotations

import http.client
import json
import random
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench_common import latency_ms


def _client(
    port: int,
    queries: list[str],
    stop: float,
    timeout: float,
    seed: int,
    out: list[tuple[int, float]],
    extra_headers: dict[str, str],
) -> None:
    rng = random.Random(seed)
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    headers = {"content-type": "application/json", **extra_headers}
    while time.monotonic() < stop:
        body = json.dumps({"query": rng.choice(queries), "k": 10})
        started = time.perf_counter()
        try:
            connection.request("POST", "/v1/corpora/claims/rank", body, headers)
            response = connection.getresponse()
            response.read()
            status = response.status
            if status == 429:  # back off as Retry-After asks (capped: the run is time-bound)
                time.sleep(min(float(response.getheader("Retry-After") or 1), 0.5))
        except TimeoutError:
            status = -1
            connection.close()
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        except (ConnectionError, http.client.HTTPException):
            status = -2
            connection.close()
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        out.append((status, (time.perf_counter() - started) * 1000))
    connection.close()


def drive(
    port: int,
    queries: list[str],
    clients: int,
    seconds: float,
    timeout: float = 60,
    headers: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Run `clients` concurrent clients for `seconds`; latency percentiles of the 200s, counts of the rest."""
    results: list[list[tuple[int, float]]] = [[] for _ in range(clients)]
    stop = time.monotonic() + seconds
    threads = [
        threading.Thread(target=_client, args=(port, queries, stop, timeout, i, results[i], headers or {}))
        for i in range(clients)
    ]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    calls = [call for per_client in results for call in per_client]
    ok = [ms for status, ms in calls if status == 200]
    return {
        "requests": len(calls),
        "ok": len(ok),
        "requests_per_s": round(len(ok) / elapsed, 1),
        **latency_ms(ok),
        "429": sum(1 for status, _ in calls if status == 429),
        "5xx": sum(1 for status, _ in calls if 500 <= status < 600),
        "timeouts": sum(1 for status, _ in calls if status == -1),
        "errors": sum(1 for status, _ in calls if status not in (200, 429)),
    }


def rss_gib(pid: int) -> float:
    """Resident memory of a process in GiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 2**20, 2)
    return float("nan")
