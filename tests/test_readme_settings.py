"""The README's configuration table is true to the code: every setting, with its real default."""

from __future__ import annotations

import re
from pathlib import Path

from app.config import Settings

README = Path(__file__).resolve().parents[1] / "README.md"
ROW = re.compile(r"^\| `(PAIRANK_[A-Z0-9_]+)` \| ([^|]*) \|")


def readme_defaults() -> dict[str, str]:
    """Variable -> the default cell of the README's configuration table."""
    rows = {}
    for line in README.read_text(encoding="utf-8").splitlines():
        match = ROW.match(line)
        if match:
            rows[match.group(1)] = match.group(2).strip().strip("`")
    return rows


def same_default(documented: str, actual: object) -> bool:
    """A documented default names the real one (numbers compared as numbers)."""
    if isinstance(actual, bool):
        return documented == str(actual).lower()
    if isinstance(actual, int | float):
        try:
            return float(documented) == float(actual)
        except ValueError:
            return False
    if isinstance(actual, Path):
        return documented in (str(actual), f"./{actual}")
    return documented == str(actual)


def test_every_setting_is_in_the_readme_with_its_default() -> None:
    documented = readme_defaults()
    for name, field in Settings.model_fields.items():
        variable = f"PAIRANK_{name.upper()}"
        assert variable in documented, f"{variable} is missing from the README's configuration table"
        if field.default is None:
            continue  # documented in words: unset, the model's own, the data dir's, ...
        assert same_default(documented[variable], field.default), (
            f"{variable}: README says {documented[variable]!r}, the code {field.default!r}"
        )
    assert set(documented) <= {f"PAIRANK_{n.upper()}" for n in Settings.model_fields}, (
        "README names unknown settings"
    )
