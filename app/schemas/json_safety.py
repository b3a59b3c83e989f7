"""Checks of JSON documents the service could not store or read back: lone UTF-16 surrogates, NaN and
Infinity, integers beyond 64 bits, nesting deeper than any record of the API, invalid UTF-8.

Used by the JSON body guard (every request body) and by bulk imports (every line of a file).
"""

from __future__ import annotations

import json
import math
from typing import Any

MAX_DEPTH = 32
INT64 = (-(2**63), 2**63 - 1)


class _NonFinite:
    def __init__(self, literal: str) -> None:
        self.literal = literal


class _HugeInt:
    def __init__(self, digits: str) -> None:
        self.digits = digits


def _parse_int(text: str) -> int | _HugeInt:
    # Python refuses to convert more than 4,300 digits; anything past 20 cannot be an int64 anyway.
    return _HugeInt(text) if len(text.lstrip("-")) > 20 else int(text)


def _parse_float(text: str) -> float | _NonFinite:
    value = float(text)
    return value if math.isfinite(value) else _NonFinite(text)


def _join(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path or 'body'}[{key}]"
    return f"{path}.{key}" if path else key


def _unicode_problem(text: str) -> str | None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        code = ord(text[error.start])
        return (
            f"contains a lone UTF-16 surrogate (\\u{code:04x} at position {error.start}): not valid Unicode"
        )
    if "\x00" in text:
        where = text.index("\x00")
        return f"contains a NUL character (\\u0000 at position {where}), which text columns cannot store"
    return None


def find_problem(value: Any, path: str = "", depth: int = 0) -> tuple[str, str, str] | None:
    """(field, message, type) of the first value the service cannot store, or None."""
    if depth > MAX_DEPTH:
        return path or "body", f"nested deeper than {MAX_DEPTH} levels", "too_deep"
    if isinstance(value, str):
        problem = _unicode_problem(value)
        return (path or "body", problem, "unicode") if problem else None
    if isinstance(value, _NonFinite):
        return path or "body", f"{value.literal} is not a JSON number; use null or a string", "not_finite"
    if isinstance(value, _HugeInt) or (isinstance(value, int) and not INT64[0] <= value <= INT64[1]):
        return path or "body", "integer outside the 64-bit range the service stores", "int_range"
    items: Any = (
        value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    )
    for key, item in items:
        if isinstance(key, str) and (problem := _unicode_problem(key)):
            return _join(path, key.encode("utf-8", "backslashreplace").decode()), f"key {problem}", "unicode"
        found = find_problem(item, _join(path, key), depth + 1)
        if found:
            return found
    return None


def check_body(body: bytes) -> tuple[str, str, str] | None:
    """Decode and parse a JSON body; the problem found, or None when the framework may take it."""
    if not body.strip():
        return None
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as error:
        return "body", f"not valid UTF-8 (byte {error.start})", "unicode"
    try:
        parsed = json.loads(text, parse_int=_parse_int, parse_float=_parse_float, parse_constant=_NonFinite)
    except json.JSONDecodeError as error:
        return (
            "body",
            f"malformed JSON: {error.msg} (line {error.lineno}, column {error.colno})",
            "json_invalid",
        )
    except RecursionError:
        return "body", f"nested deeper than {MAX_DEPTH} levels", "too_deep"
    return find_problem(parsed)


def error_body(field: str, message: str, kind: str) -> dict[str, Any]:
    """The 422 payload, the same shape as every other validation error."""
    return {"detail": f"{field}: {message}", "field": field, "errors": [{"field": field, "message": message,
            "type": kind}]}  # fmt: skip
