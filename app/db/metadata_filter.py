"""SQL for metadata filters: `{"lang": "en", "source": {"in": ["snopes", "politifact"]}}`.

A condition compares a top-level metadata value with the filter's values by JSON type (a string never
equals a number, `true` never equals 1), the same on SQLite and PostgreSQL; a document without the key,
or with a value of another type, does not match. Types are checked before any cast, so a text value can
never make a numeric comparison fail.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import ColumnElement, and_, case, cast, false, func, literal_column, or_, type_coerce
from sqlalchemy.types import Float, String

Scalar = str | int | float | bool


def _sqlite(key: str, value: Scalar) -> ColumnElement[bool]:
    path = f'$."{key}"'
    kind = func.json_type(literal_column("documents.metadata"), path)
    extracted = func.json_extract(literal_column("documents.metadata"), path)
    if isinstance(value, bool):
        return kind == ("true" if value else "false")
    if isinstance(value, int | float):
        return and_(kind.in_(["integer", "real"]), type_coerce(extracted, Float) == float(value))
    return and_(kind == "text", type_coerce(extracted, String) == value)


def _postgresql(key: str, value: Scalar) -> ColumnElement[bool]:
    member = literal_column("documents.metadata").op("->")(key)
    kind = func.json_typeof(member)
    text = literal_column("documents.metadata").op("->>")(key)
    if isinstance(value, bool):
        return and_(kind == "boolean", text == ("true" if value else "false"))
    if isinstance(value, int | float):
        # The CASE casts only JSON numbers: a text value can never make the cast fail.
        return case((kind == "number", cast(text, Float)), else_=None) == float(value)
    return and_(kind == "string", text == value)


def metadata_condition(
    dialect: str, key: str, wanted: Scalar | dict[str, Sequence[Scalar]]
) -> ColumnElement[bool]:
    """The WHERE condition for one filter key: a value, or `{"in": [values]}`."""
    build = _postgresql if dialect == "postgresql" else _sqlite
    values = list(wanted["in"]) if isinstance(wanted, dict) else [wanted]
    conditions = [build(key, value) for value in values]
    return or_(*conditions) if conditions else false()
