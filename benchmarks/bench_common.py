"""What every benchmark records beside its numbers: the machine, the command, and robust summaries."""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo (or what platform knows)."""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def machine() -> dict[str, Any]:
    """CPU count and model, memory, Python and torch versions, and the date: what timings depend on."""
    import torch

    memory_gib = None
    meminfo = Path("/proc/meminfo")
    if meminfo.is_file():
        first = meminfo.read_text().splitlines()[0].split()
        memory_gib = round(int(first[1]) / 2**20, 1)
    return {
        "nproc": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "cpu_model": cpu_model(),
        "memory_gib": memory_gib,
        "torch_threads": torch.get_num_threads(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "platform": platform.platform(),
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }


def machine_name(machine: dict[str, Any]) -> str:
    """The GPU a benchmark run used, else its CPU model."""
    return str(machine.get("gpu") or machine.get("cpu_model", "CPU"))


def command_line(script: str, argv: Sequence[str] | None) -> str:
    """The command that produced a result, with the niceness it ran at (a niced run is slower)."""
    niceness = os.nice(0)
    prefix = f"nice -n {niceness} " if niceness else ""
    arguments = " ".join(sys.argv[1:] if argv is None else argv)
    return f"{prefix}.venv/bin/python benchmarks/{script} {arguments}".strip()


def percentile(values: Sequence[float], fraction: float) -> float:
    """The value below which `fraction` of the values lie (nearest rank)."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    rank = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[rank]


def latency_ms(
    values: Sequence[float], quantiles: Sequence[int] = (50, 95, 99), digits: int = 1
) -> dict[str, float]:
    """Percentiles (p50, p95 and p99 unless given) of latencies in milliseconds (nearest rank), rounded
    to `digits` decimals."""
    return {f"p{q}_ms": round(percentile(values, q / 100), digits) for q in quantiles}


def median(values: Sequence[float]) -> float:
    """The median, NaN for no values."""
    return statistics.median(values) if values else float("nan")


def mean_sd(values: Sequence[float]) -> dict[str, float]:
    """Mean and sample standard deviation; the sd of a single run is 0 (no spread was measured)."""
    return {"mean": statistics.fmean(values), "std": statistics.stdev(values) if len(values) > 1 else 0.0}


def mapping_rss(pid: int | str = "self") -> Iterator[tuple[str | None, int]]:
    """Each mapping of a process (from /proc/PID/smaps): its file's path (None when anonymous) and its
    resident bytes."""
    path: str | None = None
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        fields = line.split()
        if fields and "-" in fields[0] and len(fields) >= 5:  # a mapping's header line
            path = fields[5] if len(fields) > 5 else None
        elif fields and fields[0] == "Rss:":
            yield path, int(fields[1]) * 1024


def fresh_call(folder: Path, module: str, function: str, *args: Any) -> dict[str, Any]:
    """`module.function(*args)` in a fresh interpreter (its memory peak is its own); its JSON result.

    The arguments travel as their repr (numbers, strings, None, paths); the call's stdout line
    `RESULT{json}` carries the result back, whatever else the call prints.
    """
    call = ", ".join(repr(arg) for arg in args)
    code = (f"import sys, json; from pathlib import PosixPath; sys.path.insert(0, {str(folder)!r}); "
            f"import {module} as m; print('RESULT' + json.dumps(m.{function}({call})))")  # fmt: skip
    repo = Path(__file__).resolve().parents[1]
    done = subprocess.run([sys.executable, "-c", code], cwd=repo, check=True, capture_output=True, text=True)
    line = next(x for x in done.stdout.splitlines() if x.startswith("RESULT"))
    return dict(json.loads(line[len("RESULT") :]))


def baseline_tree(folder: Path, commit: str, paths: Sequence[str] = ("indexes",)) -> str:
    """`commit`'s `paths` (packages, files), written out from git under `folder` (a side-by-side
    baseline: put it first on `sys.path` in a fresh process)."""
    repo = Path(__file__).resolve().parents[1]
    archive = subprocess.run(["git", "archive", commit, *paths], cwd=repo, check=True, capture_output=True)
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive.stdout, check=True)
    return str(folder)


def rotating_rounds(
    names: Sequence[str], rounds: int, run: Callable[[int, str], dict[str, Any]]
) -> list[list[dict[str, Any]]]:
    """`rounds` rounds of `run(round, variant)` over every variant, the order rotating from round to
    round (no variant always first on a warming machine); each row tagged with its variant and printed."""
    runs: list[list[dict[str, Any]]] = []
    for number in range(rounds):
        order = [*names[number % len(names) :], *names[: number % len(names)]]
        runs.append([])
        for name in order:
            runs[-1].append({"variant": name, **run(number, name)})
            print(json.dumps(runs[-1][-1]), flush=True)
    return runs


def paced_latencies(
    call: Any, items: Sequence[Any], interval: float, running: threading.Event
) -> list[float]:
    """Latencies (ms) of `call(item)`, one every `interval` s, cycling through `items` while `running`
    is set: a desk's paced traffic, not a closed loop that would keep the cores busy by itself."""
    latencies: list[float] = []
    number = 0
    while running.is_set():
        begun = time.perf_counter()
        call(items[number % len(items)])
        latencies.append((time.perf_counter() - begun) * 1000)
        number += 1
        time.sleep(max(0.0, interval - (time.perf_counter() - begun)))
    return latencies


def paced_summary(latencies: list[float]) -> dict[str, Any]:
    """How many, and p50 / p90 / p99 in ms."""
    return {"queries": len(latencies), **latency_ms(latencies, (50, 90, 99), digits=2)}
