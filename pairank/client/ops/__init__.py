"""The client's operations, one generator per API call or sequence of calls (see `pairank.client.calls`).

Each builds its request with the API's own request model (so the client refuses what the server would,
naming the same field) and reads the answer with the API's response model. `idempotent=True` marks the
calls that are retried (`pairank.client.retry`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from pairank.client.calls import Call, Exchange, Steps, reads_json


def segment(value: str) -> str:
    """A path segment: all but letters, digits, `-`, `_` and `~` percent-encoded (README, "Ids")."""
    # The dot too: HTTP clients rewrite `.` and `..` segments.
    return quote(value, safe="").replace(".", "%2E")


def given(**fields: Any) -> dict[str, Any]:
    """The optional fields the caller gave (None: left out, so the server's default applies)."""
    return {name: value for name, value in fields.items() if value is not None}


def request(
    method: str,
    path: str,
    *,
    json: Any = None,
    params: Mapping[str, Any] | None = None,
    idempotent: bool = False,
) -> Steps[Any]:
    """Any route, its JSON answer as plain data (None without a body): errors, retries and keys as for
    every other call (retried only when `idempotent`)."""
    exchange = Exchange(method.upper(), path, params=params, json=json)
    return (yield Call(exchange, reads_json, idempotent))
