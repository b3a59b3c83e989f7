"""A serving process keeps every core for one query's IVF lists: the BLAS limit it sets at start-up
(`app.process.configure_process`) must not reach the OpenMP threads Faiss scans lists with on the request
threads that search (an OpenMP build of OpenBLAS sets the calling thread's OpenMP count as a side effect)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PROBE = """
import threading
from app.config import Settings
from app.process import configure_process
import faiss
configure_process(Settings(data_dir={data!r}))
seen = []
worker = threading.Thread(target=lambda: seen.append(faiss.omp_get_max_threads()))  # as a request thread
worker.start(); worker.join()
print(seen[0])
"""


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one core: nothing to share out")
def test_a_request_thread_of_a_configured_process_scans_lists_on_every_core(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("OMP_NUM_THREADS", None)
    out = subprocess.run(
        [sys.executable, "-c", PROBE.format(data=str(tmp_path))],
        env=env, capture_output=True, text=True, check=True, timeout=120,
    )  # fmt: skip
    assert int(out.stdout.split()[-1]) == os.cpu_count()
