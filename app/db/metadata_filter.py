"""SQL for metadata filters: `{"lang": "en", "source": {"in": ["snopes", "politifact"]}, "year":
{"gte": 2019}, "published": {"gte": "2020-01-01", "lte": "2020-12-31"}}`.

A range (`gte`, `lte`) compares numbers as numbers and ISO dates as text (ISO 8601 sorts as it reads).
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


_BOUNDS = {"gte": "__ge__", "lte": "__le__"}


def _range(dialect: str, key: str, bounds: dict[str, Scalar]) -> ColumnElement[bool]:
    """`gte`/`lte` bounds on a number (numeric comparison) or an ISO date (text comparison)."""
    numeric = all(isinstance(v, int | float) and not isinstance(v, bool) for v in bounds.values())
    if dialect == "postgresql":
        member = literal_column("documents.metadata").op("->")(key)
        text = literal_column("documents.metadata").op("->>")(key)
        kind = func.json_typeof(member)
        value: ColumnElement = case((kind == "number", cast(text, Float)), else_=None) if numeric else text
        typed = kind == ("number" if numeric else "string")
    else:
        path = f'$."{key}"'
        kind = func.json_type(literal_column("documents.metadata"), path)
        extracted = func.json_extract(literal_column("documents.metadata"), path)
        value = type_coerce(extracted, Float) if numeric else type_coerce(extracted, String)
        typed = kind.in_(["integer", "real"]) if numeric else kind == "text"
    limits = [getattr(value, _BOUNDS[name])(float(v) if numeric else v) for name, v in bounds.items()]
    return and_(typed, *limits)


def metadata_condition(
    dialect: str, key: str, wanted: Scalar | dict[str, Sequence[Scalar]] | dict[str, Scalar]
) -> ColumnElement[bool]:
    """The WHERE condition for one filter key: a value, `{"in": [values]}`, or `{"gte"?, "lte"?}`."""
    if isinstance(wanted, dict) and set(wanted) <= set(_BOUNDS) and wanted:
        return _range(dialect, key, dict(wanted))  # type: ignore[arg-type]
    build = _postgresql if dialect == "postgresql" else _sqlite
    values = list(wanted["in"]) if isinstance(wanted, dict) else [wanted]  # type: ignore[arg-type]
    conditions = [build(key, value) for value in values]
    return or_(*conditions) if conditions else false()
