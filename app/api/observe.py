"""ASGI middleware: a request id on every response, Prometheus counts and latencies, one access log line."""

from __future__ import annotations

import logging
import re
import time
import uuid
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.observability.logs import ACCESS, REQUEST_ID
from app.observability.metrics import LATENCY, REQUESTS, STAGE_SECONDS
from app.observability.timing import close_record, open_record, server_timing

HEADER = b"x-request-id"
TIMING_HEADER = b"server-timing"
# A caller's id is kept when it is short and plain (it is echoed in headers and written to logs).
_SANE = re.compile(rb"^[A-Za-z0-9._:/+=-]{1,128}$")


def _route_of(scope: Scope) -> str:
    # The route template, never the raw path: one time series per endpoint, not one per document id.
    route = scope.get("route")
    return str(getattr(route, "path", None) or "unmatched")


class RequestObserver:
    """Outermost middleware: ids, metrics and the access log see every response, 413s and 429s included."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = dict(scope.get("headers") or []).get(HEADER)
        request_id = given.decode() if given and _SANE.match(given) else uuid.uuid4().hex
        token = REQUEST_ID.set(request_id)
        stages, stages_token = open_record()
        started = time.perf_counter()
        status = 500

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != HEADER]
                headers.append((HEADER, request_id.encode()))
                if stages:
                    headers.append((TIMING_HEADER, server_timing(stages)))
                message = {**message, "headers": headers}
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            seconds = time.perf_counter() - started
            route = _route_of(scope)
            REQUESTS.labels(scope["method"], route, str(status)).inc()
            LATENCY.labels(scope["method"], route).observe(seconds)
            for name, stage_seconds in stages.items():
                STAGE_SECONDS.labels(name).observe(stage_seconds)
            close_record(stages_token)
            _log_access(scope, route, status, seconds)
            REQUEST_ID.reset(token)


def _log_access(scope: Scope, route: str, status: int, seconds: float) -> None:
    principal = (scope.get("state") or {}).get("principal")
    runtime: Any = getattr(getattr(scope.get("app"), "state", None), "runtime", None)
    fields = {
        "method": scope["method"],
        "path": scope.get("path"),
        "route": route,
        "status": status,
        "duration_ms": round(seconds * 1000, 2),
        "key_id": getattr(principal, "id", None),
        "model": runtime.serving.version() if runtime is not None else None,
    }
    level = logging.WARNING if status >= 500 else logging.INFO
    message = "%s %s %s %.1f ms key=%s"
    key = fields["key_id"] or "-"
    ACCESS.log(level, message, scope["method"], scope.get("path"), status, seconds * 1000, key, extra=fields)
