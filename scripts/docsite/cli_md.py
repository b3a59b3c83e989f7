"""The CLI reference, from the argparse parsers of the `pairank.commands` entry points themselves.

Each command builds its parser inside its function and parses at once, so the parser is caught at
`parse_args` (nothing after it runs) and rendered with argparse's own help, subcommands included.
"""

from __future__ import annotations

import argparse
import contextlib
import os
from collections.abc import Callable, Iterator
from typing import Any, NoReturn

from pairank.cli import HELP, commands

HELP_WIDTH = "100"  # argparse wraps help to $COLUMNS: a fixed width keeps the pages the same everywhere


class _Caught(Exception):
    def __init__(self, parser: argparse.ArgumentParser) -> None:
        super().__init__(parser.prog)
        self.parser = parser


def _raise_parser(self: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> NoReturn:
    raise _Caught(self)


@contextlib.contextmanager
def _catching_parsers() -> Iterator[None]:
    original = argparse.ArgumentParser.parse_args, argparse.ArgumentParser.parse_known_args
    argparse.ArgumentParser.parse_args = _raise_parser  # type: ignore[assignment,method-assign]
    argparse.ArgumentParser.parse_known_args = _raise_parser  # type: ignore[assignment,method-assign]
    try:
        yield
    finally:
        argparse.ArgumentParser.parse_args, argparse.ArgumentParser.parse_known_args = original  # type: ignore[method-assign]


def parser_of(command: Callable[[list[str]], Any]) -> argparse.ArgumentParser:
    """The parser a command function builds, caught before it parses anything."""
    with _catching_parsers():
        try:
            command([])
        except _Caught as caught:
            return caught.parser
    raise RuntimeError(f"{command!r} never called parse_args")


def _help(parser: argparse.ArgumentParser) -> str:
    previous = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = HELP_WIDTH
    try:
        return parser.format_help().rstrip()
    finally:
        if previous is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = previous


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:  # argparse keeps subcommands only here
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def cli_markdown() -> str:
    """One section per registered command (and per subcommand), each with its `--help`."""
    lines: list[str] = []
    for name, entry_point in commands().items():
        parser = parser_of(entry_point.load())
        lines += [f"## pairank {name} {{ #pairank-{name} }}", ""]
        if HELP.get(name):
            lines += [HELP[name][0].upper() + HELP[name][1:] + ".", ""]
        lines += ["```text", _help(parser), "```", ""]
        for sub_name, sub_parser in _subparsers(parser).items():
            lines += [f"### pairank {name} {sub_name}", "", "```text", _help(sub_parser), "```", ""]
    return "\n".join(lines)
