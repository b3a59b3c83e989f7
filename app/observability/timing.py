"""Where a request's time went, by stage: the `Server-Timing` header and the stage histogram.

The outermost middleware opens a record per request (`open_record`); the request's code, in whatever
thread it runs (the context is copied into the thread pool, the record with it), adds to it with
`stage(...)` or `record(...)`. Stages: `queue` (texts waiting for the encoder's forward pass), `encode`
(tokenizing and the pass), `search` (vector, lexical and fused search), `resolve` (ids to documents)
and, with a re-ranking stage, `rerank` (scoring the top k with the cross-encoder) of which `rerank_queue`
was waiting for its forward pass.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar, Token

STAGES = ("queue", "encode", "search", "resolve", "rerank", "rerank_queue")
_RECORD: ContextVar[dict[str, float] | None] = ContextVar("pairank_stage_seconds", default=None)


def open_record() -> tuple[dict[str, float], Token[dict[str, float] | None]]:
    """A fresh record for this request (and the token that closes it again)."""
    stages: dict[str, float] = {}
    return stages, _RECORD.set(stages)


def close_record(token: Token[dict[str, float] | None]) -> None:
    """Stop recording into this request's record."""
    _RECORD.reset(token)


def record(name: str, seconds: float) -> None:
    """Add `seconds` to the stage of the current request (nothing outside a request)."""
    current = _RECORD.get()
    if current is not None:
        current[name] = current.get(name, 0.0) + seconds


@contextmanager
def stage(name: str) -> Iterator[None]:
    """Time the block as (part of) a stage of the current request."""
    started = time.perf_counter()
    try:
        yield
    finally:
        record(name, time.perf_counter() - started)


def record_encoding(queued: float, encoding: float) -> None:
    """The encoder's report for one call: its wait for a forward pass, and the rest."""
    record("queue", queued)
    record("encode", encoding)


def server_timing(stages: dict[str, float]) -> bytes:
    """The `Server-Timing` header value: `queue;dur=0.12, encode;dur=3.40, ...` (milliseconds)."""
    return ", ".join(f"{name};dur={seconds * 1000:.2f}" for name, seconds in stages.items()).encode()
