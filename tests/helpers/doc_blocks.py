"""The code blocks of the docs' markdown pages, with the comment that says how each is run.

A fenced block of `bash`, `sh`, `shell` or `python` runs in tests/test_docs_examples.py unless the line
before its fence (blank lines aside) is a directive comment:

- `<!-- norun -->` or `<!-- norun: why -->`: shown only;
- `<!-- run: keys -->`: against the server with keys required instead of the demo server;
- `<!-- run: statuses 401 201 -->`: the HTTP statuses of the block's curl calls, in order (otherwise
  every call must answer 2xx); options combine with `;`.

Any other comment before a fence, or a directive before a block of another language, is an error, so a
misspelt directive cannot silently turn a test off.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

RUNNABLE = {"bash": "bash", "sh": "bash", "shell": "bash", "python": "python", "py": "python"}
FENCE = re.compile(r"^(?P<indent> *)(?P<ticks>`{3,})\s*(?P<info>[^`\s]*)")
DIRECTIVE = re.compile(r"^<!--\s*(?P<kind>norun|run)\b(?P<rest>.*?)-->$")
SERVERS = ("demo", "keys")


@dataclass(frozen=True)
class Block:
    """One runnable code block and how to run it."""

    page: str
    line: int
    language: str  # "bash" or "python"
    code: str
    run: bool = True
    server: str = "demo"
    statuses: tuple[int, ...] | None = None

    @property
    def where(self) -> str:
        """`page.md:line`, for messages."""
        return f"{self.page}:{self.line}"


@dataclass
class Page:
    """A page's runnable blocks in order, and the directive errors found on it."""

    blocks: list[Block] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def _options(rest: str, where: str, errors: list[str]) -> tuple[str, tuple[int, ...] | None]:
    server, statuses = "demo", None
    text = rest.strip().removeprefix(":").strip()
    for option in filter(None, (part.strip() for part in text.split(";"))):
        words = option.split()
        if words == ["keys"]:
            server = "keys"
        elif (
            words[0] == "statuses"
            and len(words) > 1
            and all(re.fullmatch(r"[1-5]\d\d", w) for w in words[1:])
        ):
            statuses = tuple(int(word) for word in words[1:])
        else:
            errors.append(f"{where}: unknown run option {option!r} (keys; statuses NNN ...)")
    return server, statuses


def parse_page(text: str, page: str) -> Page:
    """The runnable blocks of one markdown page (norun blocks included, marked), with any errors."""
    result = Page()
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if not opening:
            index += 1
            continue
        indent, ticks, info = opening["indent"], opening["ticks"], opening["info"].lower()
        start = index
        body: list[str] = []
        index += 1
        while index < len(lines) and not lines[index].startswith(indent + ticks):
            body.append(lines[index][len(indent) :] if lines[index].startswith(indent) else lines[index])
            index += 1
        index += 1
        previous = next((line.strip() for line in reversed(lines[:start]) if line.strip()), "")
        where = f"{page}:{start + 1}"
        directive = DIRECTIVE.match(previous)
        if previous.startswith("<!--") and not previous.startswith("<!-- generated:") and not directive:
            result.errors.append(f"{where}: unknown directive {previous!r} (norun, run: ...)")
        language = RUNNABLE.get(info)
        if language is None:
            if directive:
                result.errors.append(
                    f"{where}: a directive before a {info or 'plain'} block, which never runs"
                )
            continue
        code = "\n".join(body) + "\n"
        if directive and directive["kind"] == "norun":
            result.blocks.append(Block(page, start + 1, language, code, run=False))
            continue
        server, statuses = _options(directive["rest"], where, result.errors) if directive else ("demo", None)
        result.blocks.append(Block(page, start + 1, language, code, server=server, statuses=statuses))
    return result


def docs_pages(docs: Path, skip: frozenset[str] = frozenset()) -> dict[str, Page]:
    """Every markdown page under docs/ by its path there, parsed (pages named in `skip` left out)."""
    pages = {}
    for path in sorted(docs.rglob("*.md")):
        name = path.relative_to(docs).as_posix()
        if name not in skip:
            pages[name] = parse_page(path.read_text(encoding="utf-8"), name)
    return pages
