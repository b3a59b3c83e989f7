"""Client methods written once for both clients: blocking on `Client` and `Job`, awaitable on `AsyncClient`
and `AsyncJob`.

An operation (`pairank.client.ops`) says what to send; a class lists it once as `rank = operation(...)`,
and the descriptor hands it to the instance's driver: `Blocking._drive` returns the result, and
`Awaiting._drive` is a coroutine. The overloads of `__get__` give type checkers each side's signature.
"""

from __future__ import annotations

import functools
import inspect
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar, cast, overload

from pairank.client.calls import Pages, Steps

P = ParamSpec("P")
T = TypeVar("T")
I = TypeVar("I")  # noqa: E741 - an item of a paged listing


class Blocking(ABC):
    """Runs an operation to its end before returning (`Client`, `Job`)."""

    @abstractmethod
    def _drive(self, steps: Steps[T]) -> T:
        """Carry out the operation; its result."""

    def _iterate(self, pages: Pages[I]) -> Iterator[I]:
        cursor = pages.start
        while cursor is not None:
            items, cursor = self._drive(pages.fetch(cursor))
            yield from items


class Awaiting(ABC):
    """Runs an operation in the event loop (`AsyncClient`, `AsyncJob`)."""

    @abstractmethod
    async def _drive(self, steps: Steps[T]) -> T:
        """Carry out the operation; its result."""

    async def _iterate(self, pages: Pages[I]) -> AsyncIterator[I]:
        cursor = pages.start
        while cursor is not None:
            items, cursor = await self._drive(pages.fetch(cursor))
            for item in items:
                yield item


class Operation(Generic[P, T]):
    """A method whose operation the instance's driver carries out (see the module's docstring)."""

    def __init__(self, build: Callable[..., Steps[T]], bound: bool) -> None:
        self.build = build
        self.bound = bound  # the operation's first argument is the instance (a job)
        functools.update_wrapper(cast(Any, self), build)  # help() and signatures: the operation's

    @overload
    def __get__(self, instance: None, owner: type) -> Operation[P, T]: ...
    @overload
    def __get__(self, instance: Blocking, owner: type) -> Callable[P, T]: ...
    @overload
    def __get__(self, instance: Awaiting, owner: type) -> Callable[P, Coroutine[Any, Any, T]]: ...
    def __get__(self, instance: Blocking | Awaiting | None, owner: type) -> Any:
        if instance is None:
            return self
        build = self.build
        if self.bound:
            bound = wrapped(build, lambda *args, **kwargs: instance._drive(build(instance, *args, **kwargs)))
            signature = inspect.signature(build)
            bound.__signature__ = signature.replace(parameters=list(signature.parameters.values())[1:])  # type: ignore[attr-defined]
            return bound
        return wrapped(build, lambda *args, **kwargs: instance._drive(build(*args, **kwargs)))


class Paged(Generic[P, I]):
    """A method that lists page by page: an iterator on `Client`, an async iterator on `AsyncClient`."""

    def __init__(self, build: Callable[P, Pages[I]]) -> None:
        self.build = build
        functools.update_wrapper(cast(Any, self), build)  # help() and signatures: the operation's

    @overload
    def __get__(self, instance: None, owner: type) -> Paged[P, I]: ...
    @overload
    def __get__(self, instance: Blocking, owner: type) -> Callable[P, Iterator[I]]: ...
    @overload
    def __get__(self, instance: Awaiting, owner: type) -> Callable[P, AsyncIterator[I]]: ...
    def __get__(self, instance: Blocking | Awaiting | None, owner: type) -> Any:
        if instance is None:
            return self
        build = self.build
        return wrapped(build, lambda *args, **kwargs: instance._iterate(build(*args, **kwargs)))


def wrapped(build: Callable[..., Any], method: Callable[..., Any]) -> Callable[..., Any]:
    """`method` named and documented as the operation it carries out (`help()` shows the operation's)."""
    return functools.update_wrapper(method, build)


def operation(build: Callable[P, Steps[T]]) -> Operation[P, T]:
    """A client method carrying out `build(...)`'s operation."""
    return Operation(build, bound=False)


def method(build: Callable[Concatenate[Any, P], Steps[T]]) -> Operation[P, T]:
    """A method whose operation also takes the instance (a job handle) as its first argument."""
    return Operation(build, bound=True)


def paged(build: Callable[P, Pages[I]]) -> Paged[P, I]:
    """A client method iterating over every item of a paged listing."""
    return Paged(build)
