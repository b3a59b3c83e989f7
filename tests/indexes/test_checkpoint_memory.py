"""A checkpoint's private copy of the ANN structure does not stay resident after it (issue 41 part 3).

An incremental checkpoint whose new rows would pass a tenth of the IVF lists folds them in: it reads the
lists into memory to extend them (Faiss cannot add to lists mapped from a file), while the served index
maps them from the file (fewer new rows go to a tail beside the linked lists: `indexes/ann_tail.py`).
Freed afterwards, that copy stayed resident as private memory (up to its size: 3.7 GB of lists at 10M
rows), held by the C allocator, which hands its heap back to the operating system only when told to.
"""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# Run in a fresh interpreter with the allocator's thresholds at the values glibc's own adjustment reaches
# in a long-running process (blocks up to 32 MB come from the heap, whose top is trimmed beyond 64 MB),
# so that the measurement depends neither on what the test session allocated before nor on chance.
_TUNABLES = "glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=67108864"
_SCRIPT = """
import ctypes, gc, json, sys
from pathlib import Path
import numpy as np
import indexes.ann_tail
from indexes.checkpoint import checkpoint, rebase
indexes.ann_tail.MAX_TAIL_FRACTION = 0.0  # every append folds: the path that copies the lists
from indexes.snapshot import ModelIdentity
from indexes.spec import IndexSpec
from indexes.vector_index import VectorIndex

def anonymous():
    for line in Path("/proc/self/smaps_rollup").read_text().splitlines():
        if line.startswith("Anonymous:"):
            return int(line.split()[1]) * 1024

folder, rows_count, dimension = Path(sys.argv[1]), 40_000, 384
model = ModelIdentity("m", "m@1", "44" * 32, dimension)
# 16 lists of 2,500 rows: lists of about 1 MB each, as at 10M rows in 4,096 lists; 15 MB in all.
spec = IndexSpec(type="ivf", nlist=16, nprobe=4, compression="sq8", refine=32)
rng = np.random.default_rng(0)
rows = rng.normal(size=(rows_count, dimension)).astype(np.float32)
index = VectorIndex(dimension, spec)
index.apply([(i, row, 1) for i, row in enumerate(rows)], hwm=1)
index = rebase(index, checkpoint(index, folder, "c", model).snapshot)
later = rng.normal(size=(200, dimension)).astype(np.float32)
index.apply([(rows_count + i, row, 2 + i) for i, row in enumerate(later)], hwm=201)
gc.collect()
ctypes.CDLL(None).malloc_trim(0)  # from a heap that holds no freed pages
before = anonymous()
result = checkpoint(index, folder, "c", model)
extended = not result.rebuilt_ann and not (result.snapshot.base.source / "ann.tail.faiss").exists()
index = rebase(index, result.snapshot)
del result
gc.collect()
print(json.dumps({
    "grown": anonymous() - before,
    "lists": (index.base.source / "ann.faiss").stat().st_size,
    "extended": extended,
    "size": len(index),
    "found": index.search(later[:3], 1)[0][0][0],
}))
"""


def _glibc() -> bool:
    try:
        ctypes.CDLL(None).malloc_trim  # noqa: B018 - only glibc has it
    except (OSError, AttributeError):
        return False
    return True


@pytest.mark.skipif(not sys.platform.startswith("linux") or not _glibc(), reason="glibc on Linux only")
def test_an_incremental_checkpoint_leaves_no_copy_of_the_lists_resident(tmp_path: Path) -> None:
    env = {**os.environ, "GLIBC_TUNABLES": _TUNABLES, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT, str(tmp_path)], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    measured = json.loads(done.stdout.strip().splitlines()[-1])
    assert measured["extended"] and measured["size"] == 40_200 and measured["found"] == 40_000
    grown, lists = measured["grown"], measured["lists"]
    assert grown < lists / 4, f"{grown / 2**20:.1f} MiB more private memory, {lists / 2**20:.1f} MiB of lists"
