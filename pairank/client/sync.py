"""`Client`: the blocking client."""

from __future__ import annotations

import time
from types import TracebackType

import httpx

from pairank.client.api import Api
from pairank.client.calls import Exchange, Pause, Reply, Run, Steps
from pairank.client.connection import Connection
from pairank.client.surface import Blocking, T


class Client(Connection, Api, Blocking):
    """pairank's API from Python, blocking: `Client(base_url, api_key=None, timeout=30.0, retry=...)`.

    Use it as a context manager (or call `close()`); it is safe to share between threads.
    """

    _http_class = httpx.Client
    _http: httpx.Client

    def _drive(self, steps: Steps[T]) -> T:
        run = Run(steps, self.retry)
        step = run.advance()
        while step is not None:
            step = run.advance(self._carry_out(step))
        return run.result

    def _carry_out(self, step: Exchange | Pause) -> Reply | None:
        if isinstance(step, Pause):
            time.sleep(step.seconds)
            return None
        try:
            return self._http.send(self._request(step, step.content))
        except httpx.TransportError as error:
            return error

    def close(self) -> None:
        """Close the connections."""
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
