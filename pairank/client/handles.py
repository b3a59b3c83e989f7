"""Job handles: what `retrain`, `activate`, `rollback`, `import_file` and `get_job` return.

A handle holds the job's latest known state (`record`, the API's `JobOut`) and its client; `Job` blocks
and `AsyncJob` awaits, their methods written once (`pairank.client.surface`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Coroutine
from typing import Any, Generic, ParamSpec, TypeVar, cast, overload

from app.schemas.admin import JobOut
from pairank.client.calls import Steps, mapped
from pairank.client.ops import jobs
from pairank.client.surface import Awaiting, Blocking, method, wrapped

P = ParamSpec("P")
T = TypeVar("T")


class _JobMethods:
    """A job's methods and state, for both handles."""

    record: JobOut
    refresh = method(jobs.refresh)
    wait = method(jobs.wait)
    cancel = method(jobs.cancel)
    resume = method(jobs.resume)

    @property
    def id(self) -> str:
        """The job's id."""
        return self.record.id

    @property
    def status(self) -> str:
        """`queued`, `running`, `succeeded`, `failed` or `cancelled`, as last read."""
        return self.record.status

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.record.kind} {self.record.id} {self.record.status}>"


class Job(_JobMethods, Blocking):
    """A job followed through a `Client`: `wait()` blocks until it ends."""

    def __init__(self, client: Blocking, record: JobOut) -> None:
        self.client, self.record = client, record

    def _drive(self, steps: Steps[T]) -> T:
        return self.client._drive(steps)


class AsyncJob(_JobMethods, Awaiting):
    """A job followed through an `AsyncClient`: `await job.wait()`."""

    def __init__(self, client: Awaiting, record: JobOut) -> None:
        self.client, self.record = client, record

    async def _drive(self, steps: Steps[T]) -> T:
        return await self.client._drive(steps)


class JobOperation(Generic[P]):
    """A client method that starts or finds a job: a `Job` on `Client`, an `AsyncJob` on `AsyncClient`."""

    def __init__(self, build: Callable[P, Steps[JobOut]]) -> None:
        self.build = build
        functools.update_wrapper(cast(Any, self), build)

    @overload
    def __get__(self, instance: None, owner: type) -> JobOperation[P]: ...
    @overload
    def __get__(self, instance: Blocking, owner: type) -> Callable[P, Job]: ...
    @overload
    def __get__(self, instance: Awaiting, owner: type) -> Callable[P, Coroutine[Any, Any, AsyncJob]]: ...
    def __get__(self, instance: Blocking | Awaiting | None, owner: type) -> Any:
        if instance is None:
            return self
        build = self.build

        def handle(record: JobOut) -> Job | AsyncJob:
            return Job(instance, record) if isinstance(instance, Blocking) else AsyncJob(instance, record)

        return wrapped(build, lambda *args, **kwargs: instance._drive(mapped(build(*args, **kwargs), handle)))


def job_operation(build: Callable[P, Steps[JobOut]]) -> JobOperation[P]:
    """A client method whose operation gives a job's record, handed back as a job handle."""
    return JobOperation(build)
