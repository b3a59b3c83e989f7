"""One encoder worker for every caller: concurrent requests share forward passes (micro-batching).

Callers tokenize in their own threads and queue their token ids; a single worker thread takes what is
queued, waits up to `wait_ms` for company while queries are queued, the batch is not full and callers
overlap (a lone caller's query, and bulk work, which brings its own chunk, start at once), sorts the
texts by length, runs
padded forward passes of at most `max_batch_texts` texts and `max_batch_tokens` padded tokens, and hands
each caller its own rows. Interactive calls go first and a pass carrying them carries no bulk work (a
query's pass stays short); bulk callers (upserts, imports, index builds, evaluations) queue one chunk at
a time, of `bulk_batch_texts` texts while queries have been seen in the last second (else full size), so
a query waits for at most one small bulk pass. A bulk chunk that has waited `bulk_max_wait_ms` runs in a
pass of its own even while queries keep coming, so bulk work slows down under query load but never stops.
When more than `max_queued_texts` texts wait, new interactive calls are refused with `EncoderOverloaded`
(the API answers 429) instead of queueing without bound; bulk calls wait their turn instead.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Protocol

import numpy as np

from encoders.backend import EncoderBackend

log = logging.getLogger(__name__)
_MIN_PASS = 8


class Priority(IntEnum):
    """Interactive calls (rank, duplicates, similarity) go before bulk work."""

    INTERACTIVE = 0
    BULK = 1


class EncoderOverloaded(Exception):
    """Too many texts are waiting for the encoder; retry after `retry_after` seconds."""

    def __init__(self, queued: int, limit: int, retry_after: int) -> None:
        super().__init__(
            f"the encoder queue holds {queued} texts, over the limit of {limit} "
            f"(PAIRANK_MAX_QUEUED_TEXTS); retry after {retry_after} s"
        )
        self.queued = queued
        self.limit = limit
        self.retry_after = retry_after


@dataclass(frozen=True)
class BatchingConfig:
    """Micro-batching knobs (PAIRANK_ENCODE_BATCH_SIZE, _MAX_BATCH_TOKENS, _BATCH_WAIT_MS, ...)."""

    max_batch_texts: int = 64
    max_batch_tokens: int = 16384
    wait_ms: float = 0.0  # PAIRANK_BATCH_WAIT_MS: waiting for company measured slower on CPUs
    max_queued_texts: int = 2048
    enabled: bool = True
    bulk_batch_texts: int = 16
    bulk_max_wait_ms: float = 200.0


@dataclass
class _Request:
    tokens: Sequence[np.ndarray]
    priority: Priority
    future: Future[np.ndarray] = field(default_factory=Future)
    enqueued: float = field(default_factory=time.monotonic)
    started: float = 0.0  # when its forward pass began (the end of its wait in the queue)


@dataclass
class BatcherStats:
    """Counters for metrics and benchmarks."""

    batches: int = 0
    texts: int = 0
    rejected: int = 0
    largest_batch: int = 0


class BatchObserver(Protocol):
    """Told about every forward pass and every refusal (the service's metrics implement it)."""

    def batch_done(self, texts: int, seconds: float, queued: int) -> None:
        """A pass of `texts` texts took `seconds`; `queued` texts wait for the next."""

    def rejected(self, texts: int) -> None:
        """An interactive call of `texts` texts was refused: the queue was full."""


class MicroBatcher:
    """Gathers concurrent encode calls into shared forward passes on one worker thread."""

    def __init__(
        self,
        backend: EncoderBackend,
        config: BatchingConfig | None = None,
        observer: BatchObserver | None = None,
    ) -> None:
        self.backend = backend
        self.config = config or BatchingConfig()
        self.observer = observer
        self.stats = BatcherStats()
        self._queues: dict[Priority, deque[_Request]] = {p: deque() for p in Priority}
        self._queued_texts = 0
        self._cond = threading.Condition()
        self._closed = False
        # Without micro-batching, one lock serializes whole requests (the old behaviour, for comparison).
        self._direct_lock = threading.Lock()
        self._rate = 0.0  # texts per second, smoothed: turns the queue length into a Retry-After
        self._last_interactive = float("-inf")  # when the last interactive call was queued
        self._overlapping = False  # the last pass of queries carried more than one caller's
        self._worker: threading.Thread | None = None
        if self.config.enabled:
            self._worker = threading.Thread(target=self._run, name="pairank-encoder", daemon=True)
            self._worker.start()

    @property
    def queued_texts(self) -> int:
        """Texts waiting for a forward pass now."""
        return self._queued_texts

    def encode(
        self,
        texts: Sequence[str],
        priority: Priority = Priority.INTERACTIVE,
        progress: Callable[[int], None] | None = None,
        timings: Callable[[float, float], None] | None = None,
    ) -> np.ndarray:
        """Normalized float32 embeddings, one row per text, in order; `timings(queued, encoding)`: the
        seconds an interactive call waited for its forward pass, and the rest of its time (tokenizing,
        the pass)."""
        if not texts:
            return np.zeros((0, self.backend.dimension), dtype=np.float32)
        called = time.monotonic()
        tokens = self.backend.tokenize(texts)
        if not self.config.enabled:
            return self._encode_direct(tokens, progress, timings, called)
        chunk = self.config.max_batch_texts
        if priority is Priority.INTERACTIVE:
            requests = self._submit([tokens[i : i + chunk] for i in range(0, len(tokens), chunk)], priority)
            vectors = np.vstack([r.future.result() for r in requests])
            if timings is not None:
                queued = max(r.started - r.enqueued for r in requests)
                timings(queued, time.monotonic() - called - queued)
            return vectors
        rows: list[np.ndarray] = []
        start = 0
        while start < len(tokens):
            # Small chunks while queries are about: one never waits behind more than a short pass.
            size = self.config.bulk_batch_texts if self.interactive_recently() else chunk
            (request,) = self._submit([tokens[start : start + size]], priority)
            rows.append(request.future.result())
            start += size
            if progress is not None:
                progress(min(start, len(tokens)))
        return np.vstack(rows)

    def interactive_recently(self, seconds: float = 1.0) -> bool:
        """True when an interactive call was queued in the last `seconds` (bulk work then yields)."""
        return time.monotonic() - self._last_interactive < seconds

    def encode_tokens(
        self, tokens: Sequence[np.ndarray], timings: Callable[[float, float], None] | None = None
    ) -> np.ndarray:
        """`encode` (interactive) of inputs the caller tokenized: a cross-encoder's (query, document)
        pairs, one id array each, share the queue, the limit and the forward passes like texts do."""
        if not tokens:
            return np.zeros((0, self.backend.dimension), dtype=np.float32)
        called = time.monotonic()
        if not self.config.enabled:
            return self._encode_direct(list(tokens), None, timings, called)
        chunk = self.config.max_batch_texts
        chunks = [tokens[i : i + chunk] for i in range(0, len(tokens), chunk)]
        requests = self._submit(chunks, Priority.INTERACTIVE)
        rows = np.vstack([r.future.result() for r in requests])
        if timings is not None:
            queued = max(r.started - r.enqueued for r in requests)
            timings(queued, time.monotonic() - called - queued)
        return rows

    def _encode_direct(
        self,
        tokens: list[np.ndarray],
        progress: Callable[[int], None] | None,
        timings: Callable[[float, float], None] | None,
        called: float,
    ) -> np.ndarray:
        rows = []
        waited = time.monotonic()
        with self._direct_lock:
            queued = time.monotonic() - waited
            for start in range(0, len(tokens), self.config.max_batch_texts):
                started = time.monotonic()
                rows.append(self.backend.forward(tokens[start : start + self.config.max_batch_texts]))
                if self.observer is not None:
                    self.observer.batch_done(len(rows[-1]), time.monotonic() - started, 0)
                if progress is not None:
                    progress(min(start + self.config.max_batch_texts, len(tokens)))
        if timings is not None:
            timings(queued, time.monotonic() - called - queued)
        return np.vstack(rows)

    def _submit(self, chunks: list[Sequence[np.ndarray]], priority: Priority) -> list[_Request]:
        count = sum(len(c) for c in chunks)
        with self._cond:
            if self._closed:
                raise RuntimeError("the encoder is closed")
            limit = self.config.max_queued_texts
            if priority is Priority.INTERACTIVE and self._queued_texts and self._queued_texts + count > limit:
                self.stats.rejected += 1
                if self.observer is not None:
                    self.observer.rejected(count)
                raise EncoderOverloaded(self._queued_texts, limit, self._retry_after())
            requests = [_Request(chunk, priority) for chunk in chunks]
            if priority is Priority.INTERACTIVE:
                self._last_interactive = requests[0].enqueued
            self._queues[priority].extend(requests)
            self._queued_texts += count
            self._cond.notify()
        return requests

    def _retry_after(self) -> int:
        rate = self._rate or 100.0
        return max(1, math.ceil(self._queued_texts / rate))

    def _take_batch(self) -> list[_Request]:
        """Wait for work, give company `wait_ms` to arrive, then take requests up to the limits."""
        config = self.config
        with self._cond:
            while not self._closed and not self._queued_texts:
                self._cond.wait()
            if self._closed:
                return []
            deadline = time.monotonic() + config.wait_ms / 1000
            # Company is worth waiting for when queries overlap (two queued now, or the last pass of
            # queries carried several): concurrent single queries then share a pass. A lone caller's
            # query would wait for nobody, and bulk callers bring their own chunk (an upsert's texts, an
            # import's batch): both start at once (benchmarks/batch_wait.md, benchmarks/upsert_latency.md).
            interactive = self._queues[Priority.INTERACTIVE]
            overlapping = len(interactive) > 1 or (bool(interactive) and self._overlapping)
            while overlapping and self._queued_texts < config.max_batch_texts and not self._closed:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                self._cond.wait(remaining)
            batch: list[_Request] = []
            texts = longest = 0
            bulk = self._queues[Priority.BULK]
            if bulk and time.monotonic() - bulk[0].enqueued >= config.bulk_max_wait_ms / 1000:
                # Starved by a steady stream of queries: this bulk chunk runs now, in a pass of its own.
                request = bulk.popleft()
                self._queued_texts -= len(request.tokens)
                return [request]
            for priority in Priority:
                queue = self._queues[priority]
                if priority is Priority.BULK and batch:
                    break  # a pass carrying queries carries no bulk work: it stays short
                while queue:
                    request = queue[0]
                    size = len(request.tokens)
                    request_longest = max(len(t) for t in request.tokens)
                    padded = (texts + size) * max(longest, request_longest)
                    if batch and (texts + size > config.max_batch_texts or padded > config.max_batch_tokens):
                        break
                    batch.append(queue.popleft())
                    texts += size
                    longest = max(longest, request_longest)
                if batch and (texts >= config.max_batch_texts):
                    break
            self._queued_texts -= texts
            return batch

    def _run(self) -> None:
        while True:
            batch = self._take_batch()
            if not batch:
                return
            started = time.monotonic()
            for request in batch:
                request.started = started
            try:
                # Several interactive callers in one pass: their threads work beside it (search, answer).
                waiting = sum(1 for r in batch if r.priority is Priority.INTERACTIVE)
                if waiting:
                    self._overlapping = waiting > 1
                vectors = self._forward_sorted([t for r in batch for t in r.tokens], spare_core=waiting > 1)
            except BaseException as error:  # noqa: BLE001 - every waiting caller gets the error
                for request in batch:
                    request.future.set_exception(error)
                continue
            offset = 0
            for request in batch:
                request.future.set_result(vectors[offset : offset + len(request.tokens)])
                offset += len(request.tokens)
            self._record(offset, time.monotonic() - started)

    def _forward_sorted(self, tokens: list[np.ndarray], spare_core: bool = False) -> np.ndarray:
        """One or more padded passes over length-sorted texts, rows returned in the original order."""
        order = sorted(range(len(tokens)), key=lambda i: len(tokens[i]))
        out = np.empty((len(tokens), self.backend.dimension), dtype=np.float32)
        start = 0
        while start < len(order):
            end = start + 1
            shortest = len(tokens[order[start]])
            # Grow the pass while its padded size (count x longest) stays within the token budget, and
            # start a new one once a pass of 8 would pad its shortest text to over 1.5x its length.
            while end < len(order):
                longest = len(tokens[order[end]])
                if (end - start + 1) * longest > max(self.config.max_batch_tokens, longest):
                    break
                if end - start >= _MIN_PASS and longest > 1.5 * shortest:
                    break
                end += 1
            chunk = order[start:end]
            out[chunk] = self.backend.forward([tokens[i] for i in chunk], spare_core)
            start = end
        return out

    def _record(self, texts: int, seconds: float) -> None:
        stats = self.stats
        stats.batches += 1
        stats.texts += texts
        stats.largest_batch = max(stats.largest_batch, texts)
        rate = texts / max(seconds, 1e-6)
        self._rate = rate if not self._rate else 0.8 * self._rate + 0.2 * rate
        if self.observer is not None:
            self.observer.batch_done(texts, seconds, self._queued_texts)

    def close(self) -> None:
        """Stop the worker after the batch in flight; queued callers get an error."""
        with self._cond:
            self._closed = True
            pending = [r for q in self._queues.values() for r in q]
            for queue in self._queues.values():
                queue.clear()
            self._queued_texts = 0
            self._cond.notify_all()
        for request in pending:
            request.future.set_exception(RuntimeError("the encoder was closed"))
        if self._worker is not None and self._worker is not threading.current_thread():
            self._worker.join(timeout=30)
