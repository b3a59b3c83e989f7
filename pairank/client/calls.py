"""Operations as data, and the one loop that sends their calls: retries, error mapping and parsing.

An operation of the client (`pairank.client.ops`) is a generator: it yields `Call`s (and `Pause`s while it
polls a job) and receives each call's parsed answer. `Run` turns it into a sequence of exchanges and
pauses, each call sent under the retry policy and its failures raised as typed errors. `Client` and
`AsyncClient` only carry out those exchanges and pauses, blocking or awaiting: requests are built,
retried, read and mapped to errors here, once for both.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Generator, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, cast

import httpx
from pydantic import BaseModel, ValidationError

from pairank.client.errors import (
    ConnectionFailedError,
    PairankError,
    error_from_response,
    invalid_request,
    unexpected_body,
)
from pairank.client.retry import RetryPolicy

log = logging.getLogger("pairank.client")
T = TypeVar("T")
U = TypeVar("U")
M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class Pause:
    """Wait this long before the next step (a job being polled, a retry)."""

    seconds: float


@dataclass(frozen=True)
class Exchange:
    """One HTTP request, as httpx's `build_request` takes it."""

    method: str
    path: str
    params: Mapping[str, Any] | None = None
    json: Any = None
    content: bytes | Iterable[bytes] | None = None
    headers: Mapping[str, str] | None = None


Reply = httpx.Response | httpx.TransportError  # what carrying out an exchange gives back


@dataclass(frozen=True)
class Call(Generic[T]):
    """A request, how to read its answer, and whether sending it twice is the same as sending it once."""

    exchange: Exchange
    read: Callable[[httpx.Response], T]
    idempotent: bool


Step = Call[Any] | Pause
Steps = Generator[Step, Any, T]  # an operation: it receives each call's answer, and returns its result
I = TypeVar("I")  # noqa: E741 - an item of a paged listing


@dataclass(frozen=True)
class Pages(Generic[I]):
    """A listing read page by page: `fetch(cursor)` gives a page's items and the next cursor (None: done)."""

    fetch: Callable[[Any], Steps[tuple[list[I], Any]]]
    start: Any


def body(model: BaseModel) -> Any:
    """A request model as JSON: only the fields that were set (an omitted field keeps its server meaning)."""
    return model.model_dump(mode="json", by_alias=True, exclude_unset=True)


def call(
    method: str,
    path: str,
    read: Callable[[httpx.Response], T],
    *,
    idempotent: bool,
    json: BaseModel | None = None,
    params: Mapping[str, Any] | None = None,
) -> Call[T]:
    """A JSON call (its body, when there is one, a request model of the API)."""
    payload = body(json) if json is not None else None
    return Call(Exchange(method, path, params=params, json=payload), read, idempotent)


def reads(model: type[M]) -> Callable[[httpx.Response], M]:
    """Read an answer as one of the API's response models."""
    return lambda response: model.model_validate_json(response.content)


def reads_nothing(_: httpx.Response) -> None:
    """Read an answer without a body (204)."""


def reads_json(response: httpx.Response) -> Any:
    """Read an answer as plain JSON (None when it has no body)."""
    return response.json() if response.content else None


def mapped(steps: Steps[T], convert: Callable[[T], U]) -> Steps[U]:
    """The same operation, its result converted."""
    return convert((yield from steps))


def _failure(reply: Reply) -> PairankError:
    if isinstance(reply, httpx.Response):
        return error_from_response(reply.status_code, reply.content, reply.headers)
    error = ConnectionFailedError(f"no answer: {type(reply).__name__}: {reply}")
    error.__cause__ = reply
    return error


def _send(request: Call[T], policy: RetryPolicy) -> Generator[Exchange | Pause, Reply | None, T]:
    started = time.monotonic()
    tries = 0
    while True:
        tries += 1
        reply = yield request.exchange
        assert reply is not None
        if isinstance(reply, httpx.Response) and reply.is_success:
            try:
                return request.read(reply)
            except ValidationError as invalid:
                raise unexpected_body(reply.status_code, invalid) from invalid
        error = _failure(reply)
        delay = policy.delay_after(error, tries, time.monotonic() - started, request.idempotent)
        if delay is None:
            raise error
        exchange = request.exchange
        log.info(
            "retrying %s %s in %.2f s after %s (try %d of %d)",
            exchange.method,
            exchange.path,
            delay,
            error.status or "no answer",
            tries + 1,
            policy.attempts,
        )
        yield Pause(delay)


def _execute(steps: Steps[T], policy: RetryPolicy) -> Generator[Exchange | Pause, Reply | None, T]:
    answer: Any = None
    failed: PairankError | None = None
    while True:
        try:
            step = steps.throw(failed) if failed is not None else steps.send(answer)
        except StopIteration as stop:
            return cast(T, stop.value)
        except ValidationError as invalid:  # the API's request models refused what the caller gave
            raise invalid_request(invalid.errors()) from None
        answer, failed = None, None
        if isinstance(step, Pause):
            yield step
            continue
        try:
            answer = yield from _send(step, policy)
        except PairankError as refused:  # the operation may handle it (else it comes straight back out)
            failed = refused


class Run(Generic[T]):
    """An operation under way: `advance` gives the next exchange or pause to carry out, None once done."""

    def __init__(self, steps: Steps[T], policy: RetryPolicy) -> None:
        self._steps = _execute(steps, policy)
        self.result: T = cast(T, None)

    def advance(self, reply: Reply | None = None) -> Exchange | Pause | None:
        """Hand in the last exchange's reply (None after a pause); get what to do next."""
        try:
            return self._steps.send(reply)
        except StopIteration as stop:
            self.result = cast(T, stop.value)
            return None
