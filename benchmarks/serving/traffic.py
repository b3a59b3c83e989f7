"""Time-stamped load for the operations benchmarks (priority, soak): keep-alive clients in threads, each
call recorded with when it started, what it was, its status and its latency.

A client runs closed-loop (the next call when the last is answered) or at a fixed rate (calls start on a
schedule; a late call starts at once, and the schedule does not burst to catch up).
"""

from __future__ import annotations

import http.client
import json
import os
import random
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench_common import latency_ms, percentile

# (operation name, method, path, JSON body or None) for one call.
Request = tuple[str, str, str, Any]
NextCall = Callable[[random.Random], Request]


@dataclass(frozen=True)
class Call:
    """One answered (or failed) call: start (seconds since the run began), operation, status, latency."""

    at: float
    op: str
    status: int  # HTTP status; -1 timeout, -2 connection error
    ms: float


def _client(
    port: int, next_call: NextCall, stop: threading.Event, rate: float | None, seed: int, out: list[Call],
    origin: float, timeout: float,
) -> None:  # fmt: skip
    rng = random.Random(seed)
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    headers = {"content-type": "application/json"}
    due = time.monotonic() + rng.random() / rate if rate else 0.0  # spread the clients' first calls
    while not stop.is_set():
        if rate:
            pause = due - time.monotonic()
            if pause > 0 and stop.wait(pause):
                break
            due = max(due + 1 / rate, time.monotonic())
        op, method, path, body = next_call(rng)
        started = time.perf_counter()
        at = time.monotonic() - origin
        try:
            connection.request(method, path, json.dumps(body) if body is not None else None, headers)
            response = connection.getresponse()
            response.read()
            status = response.status
        except TimeoutError:
            status = -1
        except (ConnectionError, http.client.HTTPException):
            status = -2
        if status < 0:
            connection.close()
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        out.append(Call(round(at, 3), op, status, round((time.perf_counter() - started) * 1000, 2)))
    connection.close()


class Load:
    """`clients` threads calling `next_call` until `stop()`; `calls()` gathers what they recorded."""

    def __init__(
        self, port: int, next_call: NextCall, clients: int, rate_per_client: float | None = None,
        timeout: float = 60.0, origin: float | None = None,
    ) -> None:  # fmt: skip
        self.origin = time.monotonic() if origin is None else origin
        self._stop = threading.Event()
        self._results: list[list[Call]] = [[] for _ in range(clients)]
        self._threads = [
            threading.Thread(
                target=_client,
                args=(
                    port,
                    next_call,
                    self._stop,
                    rate_per_client,
                    i,
                    self._results[i],
                    self.origin,
                    timeout,
                ),
                daemon=True,
            )
            for i in range(clients)
        ]
        for thread in self._threads:
            thread.start()

    def stop(self) -> list[Call]:
        """Stop every client after its call in flight; every call, by start time."""
        self._stop.set()
        for thread in self._threads:
            thread.join()
        return sorted((c for per_client in self._results for c in per_client), key=lambda c: c.at)


def answered(call: Call) -> bool:
    """A 2xx, or a delete of a document that was not there (404: the outcome asked for)."""
    return 200 <= call.status < 300 or (call.op == "delete" and call.status == 404)


def summary(calls: list[Call]) -> dict[str, Any]:
    """Count, latency percentiles of the answered calls, and every other outcome counted."""
    ok = [c.ms for c in calls if answered(c)]
    return {
        "calls": len(calls),
        "ok": len(ok),
        **latency_ms(ok),
        "max_ms": round(max(ok), 1) if ok else float("nan"),
        "429": sum(1 for c in calls if c.status == 429),
        "errors": sum(1 for c in calls if not answered(c) and c.status != 429),
    }


def windows(calls: list[Call], seconds: float) -> list[dict[str, Any]]:
    """Per window of `seconds`: start, calls, p50 and p99 of the 200s (for plots)."""
    if not calls:
        return []
    out = []
    end = calls[-1].at
    start = 0.0
    while start <= end:
        inside = [c.ms for c in calls if start <= c.at < start + seconds and answered(c)]
        out.append({
            "t": round(start, 1), "calls": len(inside),
            "p50_ms": round(percentile(inside, 0.5), 1) if inside else None,
            "p99_ms": round(percentile(inside, 0.99), 1) if inside else None,
        })  # fmt: skip
        start += seconds
    return out


# What a bounded pool or a checkpoint in flight holds open: SQLite's files (each pooled connection has
# the database and its WAL open; the pool is bounded) and a checkpoint's lock and staged generation.
POOLED_SUFFIXES = (".db", ".db-wal", ".db-shm")
CHECKPOINT_MARKS = (".checkpoint.lock", "/.tmp-")


def open_files(pid: int) -> tuple[int, int]:
    """A process's open file descriptors: all of them, and those neither a pool nor a checkpoint holds."""
    targets = []
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            targets.append(os.readlink(fd))
        except OSError:  # closed between the listing and the read
            continue
    held = sum(1 for t in targets if t.endswith(POOLED_SUFFIXES) or any(m in t for m in CHECKPOINT_MARKS))
    return len(targets), len(targets) - held


def process_memory(pid: int) -> dict[str, float]:
    """RSS and PSS (MiB, from smaps_rollup) and open file descriptors of a process (see open_files)."""
    values: dict[str, float] = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in ("Rss", "Pss"):
            values[key.lower() + "_mib"] = round(int(rest.split()[0]) / 1024, 1)
    values["open_fds"], values["other_fds"] = open_files(pid)
    return values
