"""The micro-batcher: same vectors as encoding alone, rows to the right caller, priorities, backpressure."""

from __future__ import annotations

import random
import threading
from collections.abc import Sequence

import numpy as np
import pytest

from encoders.batcher import BatchingConfig, EncoderOverloaded, MicroBatcher, Priority
from encoders.torch_backend import TorchBackend
from tests.encoders.encoder_helpers import GatedBackend

WORDS = [
    "the",
    "moon",
    "vaccine",
    "tower",
    "router",
    "flight",
    "bleach",
    "shark",
    "law",
    "water",
    "price",
    "claim",
    "video",
    "photo",
    "masts",
    "virus",
    "landing",
    "studio",
    "senator",
    "bill",
]


def random_texts(rng: random.Random, count: int) -> list[str]:
    """Texts of 1 to 60 words, so batches mix very different lengths."""
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 60))) for _ in range(count)]


def encode_alone(backend: TorchBackend, texts: Sequence[str]) -> np.ndarray:
    """The reference: every text in its own forward pass, no padding at all."""
    return np.vstack([backend.forward(backend.tokenize([text])) for text in texts])


def test_batched_vectors_equal_encoding_each_text_alone(tiny_torch_backend: TorchBackend) -> None:
    texts = random_texts(random.Random(1), 150)
    batcher = MicroBatcher(tiny_torch_backend, BatchingConfig(max_batch_texts=32, max_batch_tokens=600))
    try:
        together = batcher.encode(texts)
        bulk = batcher.encode(texts, Priority.BULK)
    finally:
        batcher.close()
    alone = encode_alone(tiny_torch_backend, texts)
    np.testing.assert_allclose(together, alone, atol=1e-6)
    np.testing.assert_allclose(bulk, alone, atol=1e-6)


def test_rows_never_go_to_another_caller_under_32_threads(tiny_torch_backend: TorchBackend) -> None:
    rng = random.Random(7)
    requests = [random_texts(rng, rng.randint(1, 12)) for _ in range(32)]
    expected = [encode_alone(tiny_torch_backend, texts) for texts in requests]
    batcher = MicroBatcher(tiny_torch_backend, BatchingConfig(max_batch_texts=16, wait_ms=5))
    results: dict[int, np.ndarray] = {}
    barrier = threading.Barrier(len(requests))

    def call(position: int) -> None:
        barrier.wait()
        for _ in range(3):
            results[position] = batcher.encode(requests[position])
            np.testing.assert_allclose(results[position], expected[position], atol=1e-6)

    threads = [threading.Thread(target=call, args=(i,)) for i in range(len(requests))]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
    finally:
        batcher.close()
    assert len(results) == len(requests)
    for position, vectors in results.items():
        np.testing.assert_allclose(vectors, expected[position], atol=1e-6)
    # Concurrency really shared passes: fewer forward passes than calls.
    assert batcher.stats.batches < 3 * len(requests)


def test_interactive_calls_go_before_queued_bulk_work(tiny_torch_backend: TorchBackend) -> None:
    backend = GatedBackend(tiny_torch_backend)
    config = BatchingConfig(max_batch_texts=4, bulk_batch_texts=4, wait_ms=0, bulk_max_wait_ms=60_000)
    batcher = MicroBatcher(backend, config)
    outcome: dict[str, np.ndarray] = {}
    try:
        first = threading.Thread(target=lambda: outcome.setdefault("first", batcher.encode(["hold"])))
        first.start()
        assert backend.started.wait(10)  # the worker is now busy with "hold"
        bulk = threading.Thread(
            target=lambda: outcome.setdefault("bulk", batcher.encode(["b"] * 5, Priority.BULK))
        )
        bulk.start()
        while batcher.queued_texts < 4:  # bulk work queues one chunk (4 texts) at a time
            threading.Event().wait(0.01)
        query = threading.Thread(target=lambda: outcome.setdefault("query", batcher.encode(["q", "q", "q"])))
        query.start()
        while batcher.queued_texts < 7:
            threading.Event().wait(0.01)
        backend.gate.set()
        for thread in (first, bulk, query):
            thread.join(30)
    finally:
        batcher.close()
    # After "hold", the query (3 texts) goes first although the bulk chunk (4) was queued before it;
    # the bulk chunk does not fit beside it, then the bulk call's last text follows.
    assert backend.passes == [1, 3, 4, 1]
    # Only a pass serving several interactive callers leaves a core to their threads; here each pass
    # serves one caller (the query's 3 texts are one call) or bulk work.
    assert backend.spare_core == [False, False, False, False]
    assert set(outcome) == {"first", "bulk", "query"}


def held_passes(config: BatchingConfig, tiny_torch_backend: TorchBackend, bulk_texts: int) -> list[int]:
    """Texts per pass when a bulk call and then a one-text query queue behind a held pass."""
    backend = GatedBackend(tiny_torch_backend)
    batcher = MicroBatcher(backend, config)
    try:
        first = threading.Thread(target=lambda: batcher.encode(["hold"]))
        first.start()
        assert backend.started.wait(10)
        bulk = threading.Thread(target=lambda: batcher.encode(["b"] * bulk_texts, Priority.BULK))
        bulk.start()
        while batcher.queued_texts < bulk_texts:
            threading.Event().wait(0.01)
        query = threading.Thread(target=lambda: batcher.encode(["q"]))
        query.start()
        while batcher.queued_texts < bulk_texts + 1:
            threading.Event().wait(0.01)
        backend.gate.set()
        for thread in (first, bulk, query):
            thread.join(30)
    finally:
        batcher.close()
    return backend.passes


def test_a_pass_carrying_queries_carries_no_bulk_work(tiny_torch_backend: TorchBackend) -> None:
    config = BatchingConfig(max_batch_texts=8, wait_ms=0, bulk_max_wait_ms=60_000)
    # The query (1 text) and the bulk chunk (2) would fit one pass of 8: they run apart, query first.
    assert held_passes(config, tiny_torch_backend, 2) == [1, 1, 2]


def test_bulk_work_waiting_too_long_runs_before_queries(tiny_torch_backend: TorchBackend) -> None:
    config = BatchingConfig(max_batch_texts=8, wait_ms=0, bulk_max_wait_ms=0)
    assert held_passes(config, tiny_torch_backend, 2) == [1, 2, 1]  # starved bulk work goes first


def test_bulk_chunks_are_small_only_while_queries_are_about(tiny_torch_backend: TorchBackend) -> None:
    backend = GatedBackend(tiny_torch_backend)
    backend.gate.set()
    batcher = MicroBatcher(backend, BatchingConfig(max_batch_texts=8, bulk_batch_texts=2, wait_ms=0))
    try:
        assert not batcher.interactive_recently()
        batcher.encode(["b"] * 10, Priority.BULK)
        assert backend.passes == [8, 2]  # no queries: full passes
        batcher.encode(["q"])
        assert batcher.interactive_recently()
        batcher.encode(["b"] * 5, Priority.BULK)
        assert backend.passes == [8, 2, 1, 2, 2, 1]  # a query was just served: short passes
    finally:
        batcher.close()


def test_full_queue_refuses_interactive_calls_and_lets_bulk_wait(tiny_torch_backend: TorchBackend) -> None:
    backend = GatedBackend(tiny_torch_backend)
    batcher = MicroBatcher(backend, BatchingConfig(max_batch_texts=4, max_queued_texts=6, wait_ms=0))
    done: list[str] = []
    try:
        threading.Thread(target=lambda: done.append(str(batcher.encode(["busy"]).shape))).start()
        assert backend.started.wait(10)
        waiting = threading.Thread(target=lambda: done.append(str(batcher.encode(["w"] * 5).shape)))
        waiting.start()
        while batcher.queued_texts < 5:
            threading.Event().wait(0.01)
        with pytest.raises(EncoderOverloaded) as refused:
            batcher.encode(["one", "two"])
        assert refused.value.limit == 6 and refused.value.retry_after >= 1
        assert "PAIRANK_MAX_QUEUED_TEXTS" in str(refused.value)
        bulk = threading.Thread(
            target=lambda: done.append(str(batcher.encode(["x"] * 9, Priority.BULK).shape))
        )
        bulk.start()
        backend.gate.set()
        waiting.join(30)
        bulk.join(30)
    finally:
        batcher.close()
    assert sorted(done) == ["(1, 32)", "(5, 32)", "(9, 32)"]
    assert batcher.stats.rejected == 1


def test_without_micro_batching_each_request_runs_alone(tiny_torch_backend: TorchBackend) -> None:
    texts = random_texts(random.Random(3), 20)
    batcher = MicroBatcher(tiny_torch_backend, BatchingConfig(enabled=False, max_batch_texts=8))
    try:
        vectors = batcher.encode(texts)
    finally:
        batcher.close()
    np.testing.assert_allclose(vectors, encode_alone(tiny_torch_backend, texts), atol=1e-6)
    assert batcher.stats.batches == 0  # no worker thread: the caller ran the passes itself


def test_a_pass_serving_several_callers_leaves_a_core_spare(tiny_torch_backend: TorchBackend) -> None:
    backend = GatedBackend(tiny_torch_backend)
    batcher = MicroBatcher(backend, BatchingConfig(max_batch_texts=8, wait_ms=0))
    try:
        first = threading.Thread(target=lambda: batcher.encode(["hold"]))
        first.start()
        assert backend.started.wait(10)
        callers = [threading.Thread(target=lambda: batcher.encode(["a query"])) for _ in range(3)]
        for thread in callers:
            thread.start()
        while batcher.queued_texts < 3:
            threading.Event().wait(0.01)
        backend.gate.set()
        for thread in (first, *callers):
            thread.join(30)
    finally:
        batcher.close()
    assert backend.passes == [1, 3]
    assert backend.spare_core == [False, True]


def test_bulk_work_and_a_lone_query_start_at_once_and_overlapping_queries_wait_for_company(
    tiny_torch_backend: TorchBackend,
) -> None:
    # A minute's wait for company: a call that waited would not finish within the joins below.
    backend = GatedBackend(tiny_torch_backend)
    batcher = MicroBatcher(backend, BatchingConfig(max_batch_texts=8, wait_ms=60_000))
    done: dict[str, np.ndarray] = {}

    def call(key: str, priority: Priority = Priority.INTERACTIVE) -> threading.Thread:
        thread = threading.Thread(target=lambda: done.setdefault(key, batcher.encode([key], priority)))
        thread.start()
        return thread

    try:
        backend.gate.set()
        call("bulk", Priority.BULK).join(20)
        assert "bulk" in done
        call("lone").join(20)
        assert "lone" in done  # no caller overlapped it: nobody to wait for
        backend.gate.clear()
        backend.started.clear()
        holding = call("holding")  # starts at once, then waits at the gate while 8 callers queue
        assert backend.started.wait(10)
        together = [call(f"together {n}") for n in range(8)]
        while batcher.queued_texts < 8:
            threading.Event().wait(0.01)
        backend.gate.set()  # a full pass starts at once: its 8 callers overlapped
        for thread in (holding, *together):
            thread.join(20)
        assert backend.passes[-1] == 8
        query = call("query")
        query.join(1)
        assert "query" not in done  # callers overlap now: a query waits for company while not full
        company = [call(f"company {n}") for n in range(7)]
        query.join(20)
        assert "query" in done  # a full pass starts at once
        for thread in company:
            thread.join(20)
    finally:
        batcher.close()
