"""What a search measure ran beside: how much of a generation's files the page cache held when it began,
and which of the process's other threads spent CPU meanwhile (a background job would share the cores)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from indexes.page_cache import cached_fraction  # noqa: E402

_TICKS = os.sysconf("SC_CLK_TCK")


def cached_files(generation: Path) -> dict[str, float | None]:
    """The share of each of a generation's large files now in the page cache."""
    return {
        path.name: None if (share := cached_fraction(path)) is None else round(share, 3)
        for path in sorted(generation.iterdir())
        if path.is_file() and path.stat().st_size >= 2**20
    }


def thread_seconds() -> dict[str, float]:
    """CPU seconds so far of each of this process's threads, by 'name/tid' (Linux /proc)."""
    out: dict[str, float] = {}
    for task in Path("/proc/self/task").iterdir():
        try:
            stat = (task / "stat").read_text()
        except OSError:
            continue  # the thread ended meanwhile
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2 :].split()
        out[f"{name}/{task.name}"] = (int(fields[11]) + int(fields[12])) / _TICKS  # utime + stime
    return out


def busiest_threads(before: dict[str, float], after: dict[str, float], top: int = 5) -> dict[str, float]:
    """The threads that spent the most CPU between two `thread_seconds` readings."""
    spent = {name: round(seconds - before.get(name, 0.0), 1) for name, seconds in after.items()}
    return dict(sorted(spent.items(), key=lambda item: -item[1])[:top])
