"""What both clients are made of: the service's address, the key, timeouts and the retry policy."""

from __future__ import annotations

import os
from typing import Any

import httpx

from pairank import __version__
from pairank.client.calls import Exchange
from pairank.client.retry import RetryPolicy

DEFAULT_URL = "http://127.0.0.1:8000"


class Connection:
    """The settings of a client, and its httpx client (`httpx.Client` or `httpx.AsyncClient`)."""

    _http_class: type[httpx.Client] | type[httpx.AsyncClient]
    _http: Any

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float | httpx.Timeout = 30.0,
        retry: RetryPolicy | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        """`base_url` (default `$PAIRANK_URL`, else http://127.0.0.1:8000), `api_key` (default
        `$PAIRANK_API_KEY`; sent as `Authorization: Bearer`), `timeout` per request in seconds, `retry`
        (default `RetryPolicy()`; `RetryPolicy(attempts=1)` never retries), extra `headers`."""
        self.base_url = base_url or os.environ.get("PAIRANK_URL") or DEFAULT_URL
        self.retry = retry if retry is not None else RetryPolicy()
        key = api_key if api_key is not None else os.environ.get("PAIRANK_API_KEY")
        sent = {"user-agent": f"pairank-client/{__version__}", **(headers or {})}
        if key:
            sent["authorization"] = f"Bearer {key}"
        self._http = self._http_class(base_url=self.base_url, headers=sent, timeout=timeout)

    def _request(self, exchange: Exchange, content: Any) -> httpx.Request:
        return self._http.build_request(  # type: ignore[no-any-return]
            exchange.method,
            exchange.path,
            params=exchange.params,
            json=exchange.json,
            content=content,
            headers=exchange.headers,
        )

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.base_url}>"
