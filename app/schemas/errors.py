"""The one error shape of the API, and the per-route declarations that put it in the OpenAPI schema."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field


class ErrorItem(BaseModel):
    """One problem of a request: where it is and what is wrong."""

    field: str = Field(description="Where, e.g. `documents[3].text` or `body`.")
    message: str
    type: str = Field(description="A machine-readable kind, e.g. `string_too_long`, `unicode`.")


class ErrorResponse(BaseModel):
    """Every 4xx and 5xx body: a sentence naming the field (and the limit), plus structured parts."""

    detail: str = Field(description="What is wrong, naming the field and the limit where one applies.")
    field: str | None = Field(None, description="The offending field, when there is one.")
    limit: int | None = Field(None, description="The limit that was exceeded (413, 429).")
    errors: list[ErrorItem] | None = Field(None, description="Every validation problem found (422).")


_LOCATIONS = ("body", "query", "path", "header", "cookie")


def field_path(location: Sequence[Any]) -> str:
    """`("body", "documents", 3, "text")` -> `documents[3].text`."""
    # Only the first part names where the value was (body, query string, path): a body field may itself be
    # called `query` (rank, pairs), and must be named.
    parts = list(location[1:]) if location and location[0] in _LOCATIONS else list(location)
    path = ""
    for part in parts:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path or "body"


def validation_error_body(problems: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The 422 body for pydantic's validation problems (`ValidationError.errors()`): every problem with its
    field, and a detail naming them all. The Python client shapes its own validation errors with it too."""
    errors = []
    for item in problems:
        field = field_path(item.get("loc", ()))
        message = str(item.get("msg", "invalid value"))
        if item.get("type") == "json_invalid":
            field, message = "body", f"malformed JSON: {item.get('ctx', {}).get('error', message)}"
        errors.append({"field": field, "message": message, "type": str(item.get("type", ""))})
    detail = "; ".join(f"{e['field']}: {e['message']}" for e in errors) or "invalid request"
    return {"detail": detail, "errors": errors}


_DESCRIPTIONS = {
    400: "Malformed request.",
    401: "Missing, unknown or revoked API key (`WWW-Authenticate` says how to send one).",
    403: "The key lacks the route's scope, or is limited to other corpora.",
    404: "Unknown corpus, document, pair, evaluation, job or model.",
    405: "Method not allowed on this path (the Allow header lists the allowed ones).",
    409: "Conflicts with the current state (a taken name, a running job).",
    413: "Over a configured size limit (the limit is named).",
    415: "The body is not in the media type this operation takes.",
    422: "Invalid input: every problem is listed with its field.",
    429: "The key's rate limit, or the encoder queue, is full; retry after the Retry-After seconds.",
    503: "The model and indexes are loading (or failed to load), or the database is unreachable.",
}


def error_responses(*codes: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI `responses` entries for these status codes, all with the ErrorResponse body."""
    responses: dict[int | str, dict[str, Any]] = {}
    for code in codes:
        entry: dict[str, Any] = {"model": ErrorResponse, "description": _DESCRIPTIONS[code]}
        if code == 429:
            entry["headers"] = {
                "Retry-After": {
                    "description": "Seconds to wait before retrying.",
                    "schema": {"type": "integer"},
                }
            }
        responses[code] = entry
    return responses


# Every keyed route can be refused for its key or its rate, for bad input, or while loading; body limits
# apply to every body.
COMMON_ERRORS = (401, 403, 413, 422, 429, 503)
NOT_FOUND = error_responses(404)
CONFLICT = error_responses(409)
