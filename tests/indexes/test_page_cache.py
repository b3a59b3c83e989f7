"""Page-cache hints of snapshot generations: a compact index's float32 rows (read by no search) leave the
cache once written, a flat index's (its search matrix) stay; the float16 rows that refining reads one
candidate at a time are mapped without read-ahead. Real files on the test's file system, asked with
mincore and /proc/self/smaps."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from indexes.checkpoint import checkpoint
from indexes.page_cache import cached_fraction, forget
from indexes.snapshot import ModelIdentity
from indexes.spec import IndexSpec
from indexes.vector_index import VectorIndex
from tests.indexes.test_compact_index import COMPACT, DIMENSION, ROWS, clustered

MODEL = ModelIdentity("m", "m@1", "44" * 32, DIMENSION)


def _file_system(path: Path) -> str:
    """The type of the file system holding `path` (the longest mount point above it)."""
    best, kind = "", ""
    for line in Path("/proc/mounts").read_text().splitlines():
        _, point, fs_type, *_ = line.split()
        if str(path).startswith(point.rstrip("/") + "/") and len(point) > len(best):
            best, kind = point, fs_type
    return kind


@pytest.fixture
def disk(tmp_path: Path) -> Path:
    """A folder on a file system whose page cache the hints act on (not tmpfs: its pages are the file)."""
    if not sys.platform.startswith("linux") or not hasattr(os, "posix_fadvise"):
        pytest.skip("page-cache hints and mincore are Linux calls")
    if _file_system(tmp_path) in ("tmpfs", "ramfs", "overlay"):
        pytest.skip(f"{tmp_path} is on {_file_system(tmp_path)}, which keeps every page in memory")
    return tmp_path


def _generation(spec: IndexSpec, folder: Path) -> Path:
    index = VectorIndex(DIMENSION, spec)
    index.apply([(i, row, 1) for i, row in enumerate(clustered(ROWS))], hwm=1)
    source = checkpoint(index, folder, "c", MODEL).snapshot.base.source
    assert source is not None
    return source


def test_cached_fraction_sees_a_file_leave_and_come_back(disk: Path) -> None:
    path = disk / "rows.npy"
    np.save(path, np.ones((50_000, 32), np.float32))
    with path.open("rb") as handle:
        os.fsync(handle.fileno())
    assert cached_fraction(path) == 1.0  # just written
    forget(path)
    assert cached_fraction(path) == 0.0
    path.read_bytes()
    assert cached_fraction(path) == 1.0


def test_a_compact_generations_float32_rows_leave_the_cache_and_a_flat_ones_stay(disk: Path) -> None:
    compact = _generation(COMPACT[0], disk / "compact")
    # Loading the generation touches at most its first few pages (read-ahead around a check).
    share = cached_fraction(compact / "vectors.f32")
    assert share is not None and share < 0.05
    assert cached_fraction(compact / "ann.faiss") == 1.0
    flat = _generation(IndexSpec(type="flat"), disk / "flat")
    assert cached_fraction(flat / "vectors.f32") == 1.0  # the flat index's search matrix


def _mapping_flags(path: Path) -> list[str]:
    """The VmFlags of this process's mappings of `path`."""
    smaps = Path("/proc/self/smaps").read_text()
    header = rf"^\S+ \S+ \S+ \S+ \S+\s+{re.escape(str(path))}\n"
    return [flags.split() for flags in re.findall(header + r"(?:.*\n)*?VmFlags:(.*)$", smaps, re.M)]


def test_the_float16_rows_are_mapped_for_random_reads_and_the_float32_rows_are_not(disk: Path) -> None:
    index = VectorIndex(DIMENSION, COMPACT[0])
    index.apply([(i, row, 1) for i, row in enumerate(clustered(ROWS))], hwm=1)
    base = checkpoint(index, disk, "c", MODEL).snapshot.base
    assert base.source is not None and base.refine is not None
    refine_flags = _mapping_flags(base.source / "vectors.f16")
    assert refine_flags and all("rr" in flags for flags in refine_flags)
    # The next checkpoint copies the float32 rows in order: read-ahead stays on for them.
    vector_flags = _mapping_flags(base.source / "vectors.f32")
    assert vector_flags and not any("rr" in flags for flags in vector_flags)
