"""JSON-LD blocks out of what publishers serve: a page's `<script type="application/ld+json">` blocks, a
JSON document (an object, an array, an `@graph`), or JSON lines; and the nodes of one schema.org type.

The page is read with the standard library's `html.parser`, which hands a script's content over as it
is (CDATA): no HTML library is needed to find a few script blocks, and none is installed for it
(docs/reference/layout.md). A block that is not valid JSON is reported with its place, not skipped
silently; JSON is read with `strict=False`, since pages often carry raw line breaks inside strings.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Any

LD_JSON = "application/ld+json"
SCHEMA_PREFIXES = ("http://schema.org/", "https://schema.org/", "schema:")


@dataclass(frozen=True)
class Block:
    """One JSON value of the input and where it was: `line 3`, `script 2`, `document`; `error` when its
    text is not JSON (the value is then None)."""

    where: str
    value: Any
    error: str | None = None


class _Scripts(HTMLParser):
    """The content of every `<script type="application/ld+json">` of a page, in order."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.blocks: list[str] = []
        self._inside = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        kind = (dict(attrs).get("type") or "").split(";")[0].strip().lower()
        self._inside = tag == "script" and kind == LD_JSON
        if self._inside:
            self.blocks.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._inside = False

    def handle_data(self, data: str) -> None:
        if self._inside:
            self.blocks[-1] += data


def _parsed(where: str, text: str) -> Block:
    try:
        return Block(where, json.loads(text, strict=False))
    except ValueError as error:
        return Block(where, None, f"not valid JSON ({error})")
    except RecursionError:
        return Block(where, None, "nested too deeply to read")


def is_html(text: str) -> bool:
    """True when the text is a page (it starts with a tag or a doctype), not JSON."""
    return text.lstrip("\ufeff \t\r\n").startswith("<")


def read_blocks(text: str) -> list[Block]:
    """The JSON values of a page's JSON-LD scripts, of a JSON document, or of each line of JSON lines."""
    text = text.lstrip("\ufeff")
    if is_html(text):
        scripts = _Scripts()
        scripts.feed(text)
        scripts.close()
        return [_parsed(f"script {n}", block) for n, block in enumerate(scripts.blocks, start=1)]
    whole = _parsed("document", text)
    if whole.error is None:
        return [whole]
    lines = [(n, line) for n, line in enumerate(text.splitlines(), start=1) if line.strip()]
    return [_parsed(f"line {n}", line) for n, line in lines]


def type_names(node: dict[str, Any]) -> set[str]:
    """A node's `@type` (one or several), without a schema.org prefix."""
    declared = node.get("@type")
    names = declared if isinstance(declared, list) else [declared]
    found = set()
    for name in names:
        if isinstance(name, str):
            for prefix in SCHEMA_PREFIXES:
                name = name.removeprefix(prefix)
            found.add(name)
    return found


def nodes_of_type(value: Any, type_name: str) -> Iterator[dict[str, Any]]:
    """Every node of a type in a JSON-LD value, in document order: at the top, in arrays, in `@graph`,
    or nested in another node (a WebPage's `review`); never inside a node of that type."""
    if isinstance(value, list):
        for item in value:
            yield from nodes_of_type(item, type_name)
    elif isinstance(value, dict):
        if type_name in type_names(value):
            yield value
            return
        for key, item in value.items():
            if key != "@context":
                yield from nodes_of_type(item, type_name)


def mentions_type(value: Any, type_name: str) -> bool:
    """True when a JSON value holds a node of the type anywhere."""
    return next(nodes_of_type(value, type_name), None) is not None
