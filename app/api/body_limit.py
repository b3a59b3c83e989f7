"""ASGI middleware rejecting request bodies over the configured size with 413 before parsing them."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class BodyTooLarge(Exception):
    """Raised inside receive() when a streamed body passes the limit."""


class BodySizeLimit:
    """Answer 413 when Content-Length, or the bytes actually streamed, exceed `max_bytes`."""

    def __init__(self, app: ASGIApp, max_bytes: int, overrides: Sequence[tuple[str, int]] = ()) -> None:
        self.app = app
        self.max_bytes = max_bytes
        # (path regex, limit): bulk imports take files far larger than any other request.
        self.overrides = [(re.compile(pattern), limit) for pattern, limit in overrides]

    def limit_for(self, path: str) -> int:
        """The body limit of a path."""
        return next((limit for pattern, limit in self.overrides if pattern.match(path)), self.max_bytes)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limit_for(scope.get("path", ""))
        headers = dict(scope.get("headers") or [])
        declared = headers.get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await self._reject(send, limit)
            return
        received = 0
        started = False

        async def limited_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise BodyTooLarge
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, limited_receive, tracking_send)
        except BodyTooLarge:
            if not started:
                await self._reject(send, limit)

    async def _reject(self, send: Send, limit: int) -> None:
        body: dict[str, Any] = {
            "detail": f"body: request body exceeds the limit of {limit} bytes",
            "field": "body",
            "limit": limit,
        }
        payload = json.dumps(body).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(payload)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": payload})
