"""The background checkpoint thread yields the CPU to requests: it runs `checkpoint_nice` levels below
them, and so do the threads it starts (a Faiss OpenMP team), while request threads keep their priority.
Real threads of a real runtime, their priorities read back from the kernel."""

from __future__ import annotations

import os
import sys
import threading

import faiss
import numpy as np
import pytest

from app.serving.priority import lower_thread_priority, thread_nice
from tests.helpers.runtime import RuntimeFactory

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread nice is Linux's")


def _checkpoint_thread() -> threading.Thread:
    for _ in range(500):
        found = [thread for thread in threading.enumerate() if thread.name == "pairank-checkpoint"]
        if found:
            return found[0]
        threading.Event().wait(0.01)
    raise AssertionError("no checkpoint thread started")


@pytest.mark.parametrize("nice", [10, 0])
def test_the_checkpoint_thread_runs_below_the_requests(make_runtime: RuntimeFactory, nice: int) -> None:
    base = thread_nice(threading.get_native_id())
    runtime = make_runtime(checkpoint_nice=nice)
    runtime.start_loading()
    assert runtime.serving.wait_ready(120), runtime.serving.load_error
    expected = min(19, base + nice)
    for _ in range(500):  # the loader starts the loop after ready; the loop lowers itself first thing
        thread = _checkpoint_thread()
        if thread.native_id is not None and thread_nice(thread.native_id) == expected:
            break
        threading.Event().wait(0.01)
    assert thread.native_id is not None and thread_nice(thread.native_id) == expected
    assert thread_nice(threading.get_native_id()) == base  # this (a request's) thread is untouched


def test_the_threads_a_lowered_thread_starts_inherit_its_priority() -> None:
    rows = np.random.default_rng(0).random((20_000, 32), dtype=np.float32)
    index = faiss.index_factory(32, "IVF64,SQ8")
    index.train(rows)
    index.add(rows)
    index.nprobe = 32
    faiss.extract_index_ivf(index).parallel_mode = 1  # one query over all cores: an OpenMP team
    before = set(os.listdir("/proc/self/task"))
    seen: dict[str, object] = {}

    def background() -> None:
        seen["nice"] = lower_thread_priority(5)
        for _ in range(20):
            index.search(rows[:1], 10)
        started = set(os.listdir("/proc/self/task")) - before - {str(threading.get_native_id())}
        seen["started"] = {int(tid): thread_nice(int(tid)) for tid in started}

    thread = threading.Thread(target=background)
    thread.start()
    thread.join()
    lowered = seen["nice"]
    assert isinstance(lowered, int) and lowered > thread_nice(threading.get_native_id())
    if (os.cpu_count() or 1) > 1:  # one core: OpenMP starts no team
        assert seen["started"] and set(seen["started"].values()) == {lowered}  # type: ignore[union-attr]
