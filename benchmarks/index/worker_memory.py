"""Worker memory for the scale benchmarks: RSS and PSS of 1 and 4 `pairank serve` workers on one folder,
and how much of the mapped index each has touched."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench_common import mapping_rss  # noqa: E402


def _memory(pid: int) -> tuple[int, int]:
    rollup = Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()
    fields = {line.split()[0].rstrip(":"): int(line.split()[1]) for line in rollup[1:] if line.split()}
    return fields.get("Rss", 0) * 1024, fields.get("Pss", 0) * 1024


WORDS = [
    *("moon", "tower", "flood", "senator", "vaccine", "election", "river", "bridge", "school", "court"),
    *("water", "price", "tax", "city", "storm", "virus", "border", "police", "farmer", "doctor"),
    *("market", "bank", "oil", "film", "prize", "judge", "army", "coast", "train", "fire", "bird"),
]


def _texts(count: int, seed: int) -> list[str]:
    """Varied query texts: queries that probe different lists, as a real stream's do."""
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(WORDS, 6)) + f" {i}" for i in range(count)]


def _children(pid: int) -> list[int]:
    return [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def _workers(children: list[int]) -> list[int]:
    """uvicorn's worker processes among its supervisor's children (not multiprocessing's resource tracker)."""
    return [child for child in children if b"spawn_main" in Path(f"/proc/{child}/cmdline").read_bytes()]


def _spread(port: int, texts: list[str], clients: int) -> None:
    """POST each text to /rank from `clients` concurrent clients, a new connection per call, so that
    every worker takes a share (one kept-alive connection would feed a single worker all of them)."""

    def one(text: str) -> None:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=600) as http:
            http.post("/v1/corpora/bench/rank", json={"query": text, "k": 10}).raise_for_status()

    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(one, texts))


def _mapped_resident(pid: int, under: Path) -> int:
    """Resident bytes of a process's mappings of files under `under` (the index's mapped files)."""
    return sum(rss for path, rss in mapping_rss(pid) if path and path.startswith(str(under)))


def measure_workers(
    folder: Path, model_dir: Path, searches_per_worker: list[int] | None = None
) -> dict[str, Any]:
    """RSS and PSS (shared pages split between sharers) of `pairank serve --workers 1` and `--workers 4`,
    measured after each total of /rank calls per worker in `searches_per_worker` (default: 20): the
    more a worker has searched, the more of the mapped index it has touched (shared, counted once)."""
    totals = sorted(searches_per_worker or [20])
    rows: dict[int, dict[str, Any]] = {total: {"searches_per_worker": total} for total in totals}
    for workers in (1, 4):
        env = {
            **os.environ,
            "PAIRANK_DATA_DIR": str(folder / "data"),
            "PAIRANK_MODEL": str(model_dir),
            "PAIRANK_MODEL_CACHE_DIR": str(folder.parent / "model-exports"),
            "PAIRANK_SYNC_SECONDS": "0",
            "PAIRANK_AUTH": "disabled",
            "PAIRANK_RATE_LIMIT": "0",
        }
        port = 18000 + workers
        process = subprocess.Popen(
            [sys.executable, "-m", "pairank.cli", "serve", "--port", str(port), "--workers", str(workers)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=600) as http:
                deadline = time.monotonic() + 600
                ready = 0
                while time.monotonic() < deadline and ready < 4 * workers:
                    with contextlib.suppress(httpx.TransportError):
                        ready = ready + 1 if http.get("/ready").status_code == 200 else 0
                    time.sleep(0.2)
                texts = _texts(totals[-1] * workers, seed=workers)
                done = 0
                for total in totals:  # every worker searches (and touches its pages)
                    _spread(port, texts[done * workers : total * workers], clients=2 * workers)
                    done = total
                    # Memory counts the whole tree (supervisor and multiprocessing's tracker too); the
                    # index share is per serving worker.
                    tree = [process.pid, *_children(process.pid)] if workers > 1 else [process.pid]
                    pids = _workers(tree[1:]) if workers > 1 else tree
                    rss, pss = zip(*(_memory(pid) for pid in tree), strict=True)
                    index = [_mapped_resident(pid, folder / "data") for pid in pids]
                    rows[total][str(workers)] = {
                        "rss_gib": round(sum(rss) / 2**30, 2),
                        "pss_gib": round(sum(pss) / 2**30, 2),
                        "index_resident_gib_per_worker": round(sum(index) / len(index) / 2**30, 2),
                        "index_resident_gib_min_max": [
                            round(min(index) / 2**30, 2),
                            round(max(index) / 2**30, 2),
                        ],
                    }
        finally:
            process.send_signal(signal.SIGINT)
            process.wait(60)
    for row in rows.values():
        row["pss_ratio_4_to_1"] = round(row["4"]["pss_gib"] / row["1"]["pss_gib"], 2)
    first = rows[totals[0]]
    out: dict[str, Any] = {"1": first["1"], "4": first["4"], "pss_ratio_4_to_1": first["pss_ratio_4_to_1"]}
    if len(totals) > 1:
        out["by_searches"] = list(rows.values())
    return out
