"""`AsyncClient`: the asyncio client, with the same methods as `Client`, each awaited."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable
from types import TracebackType

import httpx

from pairank.client.api import Api
from pairank.client.calls import Exchange, Pause, Reply, Run, Steps
from pairank.client.connection import Connection
from pairank.client.surface import Awaiting, T


async def _chunks(content: Iterable[bytes]) -> AsyncIterator[bytes]:
    # httpx's AsyncClient streams an async iterable only; a file's chunks are read between sends.
    for chunk in content:
        yield chunk


class AsyncClient(Connection, Api, Awaiting):
    """pairank's API from asyncio: the methods of `Client`, awaited (`iter_documents` an async iterator).

    Use it as an async context manager (or `await aclose()`).
    """

    _http_class = httpx.AsyncClient
    _http: httpx.AsyncClient

    async def _drive(self, steps: Steps[T]) -> T:
        run = Run(steps, self.retry)
        step = run.advance()
        while step is not None:
            step = run.advance(await self._carry_out(step))
        return run.result

    async def _carry_out(self, step: Exchange | Pause) -> Reply | None:
        if isinstance(step, Pause):
            await asyncio.sleep(step.seconds)
            return None
        content = step.content
        streamed = _chunks(content) if content is not None and not isinstance(content, bytes) else content
        try:
            return await self._http.send(self._request(step, streamed))
        except httpx.TransportError as error:
            return error

    async def aclose(self) -> None:
        """Close the connections."""
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()
