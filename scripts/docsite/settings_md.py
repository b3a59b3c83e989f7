"""The configuration table, from `app.config.Settings` (each field's default, type, bounds, description)."""

from __future__ import annotations

import json
import types
import typing
from pathlib import Path
from typing import Any

from annotated_types import Ge, Gt, Le, Lt
from pydantic.fields import FieldInfo

from app.config import Settings

PREFIX = "PAIRANK_"
MIB = 1024 * 1024


def variable(name: str) -> str:
    """The environment variable of a Settings field."""
    return f"{PREFIX}{name.upper()}"


def default_text(field: FieldInfo) -> str:
    """The default as an operator writes it (`true`, `./data`, `1024`), or `unset`."""
    value = field.default
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, Path):
        return f"`./{value}`" if not value.is_absolute() else f"`{value}`"
    if isinstance(value, float):
        return f"`{value:g}`"
    if isinstance(value, int) and value >= MIB and value % MIB == 0:
        return f"`{value}` ({value // MIB:,} MiB)"
    return f"`{value}`"


def _plain_type(annotation: Any) -> Any:
    # `int | None` and `Optional[int]`: what may be set is the int.
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        options = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
        return options[0] if len(options) == 1 else annotation
    return annotation


def values_text(field: FieldInfo) -> str:
    """What the variable accepts: the choices, `true`/`false`, or a number's type and bounds."""
    kind = _plain_type(field.annotation)
    if typing.get_origin(kind) is typing.Literal:
        return ", ".join(f"`{choice}`" for choice in typing.get_args(kind))
    if kind is bool:
        return "`true`, `false`"
    if kind in (int, float):
        bounds = []
        for rule in field.metadata:
            for cls, sign, attr in ((Ge, ">=", "ge"), (Gt, ">", "gt"), (Le, "<=", "le"), (Lt, "<", "lt")):
                if isinstance(rule, cls):
                    bounds.append(f"{sign} {getattr(rule, attr):g}")
        words = "integer" if kind is int else "number"
        return f"{words} {', '.join(bounds)}".strip()
    if kind is Path:
        return "a path"
    return "text"


def settings_table(settings: type[Settings] = Settings) -> str:
    """The markdown table of every setting, in the order Settings declares them."""
    lines = ["| variable | default | values | meaning |", "| --- | --- | --- | --- |"]
    for name, field in settings.model_fields.items():
        description = " ".join((field.description or "").split()).replace("|", "\\|")
        lines.append(f"| `{variable(name)}` | {default_text(field)} | {values_text(field)} | {description} |")
    return "\n".join(lines) + "\n"


def training_defaults_table() -> str:
    """The retrain job's defaults by what the judged pairs hold (app/core/defaults.py), with evidence."""
    from app.core.defaults import LABELLED_NEGATIVES, POSITIVES_ONLY

    rows = [
        "| the corpus's judged pairs hold | training defaults | measured | re-ranker trained too |",
        "|---|---|---|---|",
    ]
    for row in (LABELLED_NEGATIVES, POSITIVES_ONLY):
        settings = ", ".join(f"`{key}`: `{json.dumps(value)}`" for key, value in row.settings.items())
        reranker = f"{'**on**' if row.reranker else 'off'}: {row.reranker_evidence}"
        rows.append(f"| {row.data} | {settings} | {row.evidence} | {reranker} |")
    return "\n".join(rows) + "\n"
