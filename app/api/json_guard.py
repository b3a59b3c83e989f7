"""ASGI middleware: JSON bodies the service could not store or read back get a 422 naming the field.

Python's JSON parser accepts things a database or a tokenizer cannot take: lone UTF-16 surrogates
(`"\\ud800"`), NaN and Infinity, integers of any size, and nesting deep enough to exhaust the stack;
invalid UTF-8 and malformed JSON fail inside the framework with a 400 that names nothing. Every JSON
body is checked here once, before any route sees it, and refused with the same error shape as every
other validation error: `{"detail", "field", "errors": [{"field", "message", "type"}]}`. Uploads (an
import's file, up to PAIRANK_MAX_IMPORT_BYTES) are passed through: their job validates each record.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.schemas.json_safety import check_body, error_body

_BODY_METHODS = {"POST", "PUT", "PATCH"}


class JsonBodyGuard:
    """Check every JSON request body before routing; pass the untouched bytes on when it is fine."""

    def __init__(self, app: ASGIApp, uploads: Sequence[str] = ()) -> None:
        self.app = app
        self.uploads = [re.compile(pattern) for pattern in uploads]  # paths whose bodies are files

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope["method"] not in _BODY_METHODS
            or not _is_json(scope)
            or any(pattern.match(scope.get("path", "")) for pattern in self.uploads)
        ):
            await self.app(scope, receive, send)
            return
        chunks = []
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        body = b"".join(chunks)
        problem = check_body(body)
        if problem is not None:
            await _send_json(send, 422, error_body(*problem))
            return
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


def _is_json(scope: Scope) -> bool:
    for name, value in scope.get("headers") or []:
        if name == b"content-type":
            media = value.split(b";")[0].strip().lower()
            return media == b"application/json" or media.endswith(b"+json")
    return False


async def _send_json(send: Send, status: int, payload: dict[str, Any]) -> None:
    data = json.dumps(payload).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})
