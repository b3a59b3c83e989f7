"""Print the project's runtime dependencies from pyproject.toml, one requirement per line.

The Dockerfile installs these in their own layer before it copies the code, so a code change rebuilds
only the small layer that installs pairank itself, not torch and the rest. Reading pyproject.toml (not
a second, hand-kept requirements file) means the image can never drift from the project's pins.

Usage: python requirements_from_pyproject.py [pyproject.toml]
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path


def runtime_requirements(pyproject: Path) -> list[str]:
    """The `[project].dependencies` list, as written."""
    with pyproject.open("rb") as handle:
        return list(tomllib.load(handle)["project"]["dependencies"])


def main(argv: list[str]) -> int:
    path = Path(argv[1]) if len(argv) > 1 else Path("pyproject.toml")
    print("\n".join(runtime_requirements(path)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
