"""The base of every request body model: unknown fields refused, strict types, and
"exactly one of these fields" rules stated in the JSON Schema as well as enforced; and the metadata
filter every ranking, matching and comparison request takes."""

from __future__ import annotations

from types import UnionType
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic.json_schema import SkipJsonSchema

from app.schemas.common import MetaString, StrictBool, StrictFiniteFloat, StrictInt64


class RequestModel(BaseModel):
    """Request bodies: extra fields are an error; types are strict (`true` is not the number 1, `0` not a
    boolean, `"5"` not a number), as the schema says; JSON integers still fill number fields."""

    model_config = ConfigDict(extra="forbid", strict=True)

    @model_validator(mode="before")
    @classmethod
    def _integral_numbers_are_integers(cls, data: Any) -> Any:
        # JSON Schema's `integer` includes 49.0 (a number with no fraction); strict pydantic does not.
        if not isinstance(data, dict):
            return data
        for name, field in cls.model_fields.items():
            key = field.alias or name
            value: Any = data.get(key)
            shape = _integer_shape(field.annotation)
            if shape == "one" and _integral(value):
                data = {**data, key: int(value)}
            elif shape == "list" and isinstance(value, list) and any(_integral(v) for v in value):
                data = {**data, key: [int(v) if _integral(v) else v for v in value]}
        return data


def _integral(value: Any) -> bool:
    return isinstance(value, float) and value.is_integer()


def _integer_shape(annotation: Any) -> str | None:
    """ "one" for an int field, "list" for a list of ints, else None (optional or not)."""
    options = (
        [a for a in get_args(annotation) if a is not type(None)] if _is_union(annotation) else [annotation]
    )
    for option in options:
        inner = get_args(option)[0] if get_origin(option) is Annotated else option
        if inner is int:
            return "one"
        if get_origin(inner) is list and get_args(inner):
            element = get_args(inner)[0]
            element = get_args(element)[0] if get_origin(element) is Annotated else element
            if element is int:
                return "list"
    return None


def _is_union(annotation: Any) -> bool:
    return get_origin(annotation) in (Union, UnionType)


def exactly_one_of(*groups: tuple[str, ...]) -> dict[str, Any]:
    """JSON Schema for "exactly one group of these fields is present" (a group: fields given together).

    The fields involved must not be nullable in the schema (see `no_nulls`), so "present" means given.
    """
    every = {name for group in groups for name in group}
    alternatives = []
    for group in groups:
        others = sorted(every - set(group))
        alternative: dict[str, Any] = {"required": list(group)}
        if others:
            alternative["not"] = {"anyOf": [{"required": [name]} for name in others]}
        alternatives.append(alternative)
    return {"oneOf": alternatives}


def no_nulls(data: Any, *fields: str) -> Any:
    """Refuse an explicit null for optional fields (leave them out instead), as the schema says."""
    if isinstance(data, dict):
        for name in fields:
            if name in data and data[name] is None:
                raise ValueError(f"`{name}` must not be null; leave it out instead")
    return data


FilterScalar = MetaString | StrictInt64 | StrictFiniteFloat | StrictBool  # noqa: UP007


class InFilter(RequestModel):
    """Matches when the metadata value equals any of these."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    in_: list[FilterScalar] = Field(alias="in", min_length=1, max_length=100)


_ISO_DATE = r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$"
RangeBound = Annotated[
    StrictInt64 | StrictFiniteFloat | Annotated[str, Field(pattern=_ISO_DATE, max_length=40)],  # noqa: UP007
    Field(description="A number, or an ISO 8601 date (`2024-05-01`, `2024-05-01T12:00:00Z`)."),
]


class RangeFilter(RequestModel):
    """Matches numbers (or ISO dates) within the bounds; at least one bound, both of one type."""

    # The schema states the rules a client must know: at least one bound, both numbers or both dates.
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "minProperties": 1,
            "anyOf": [
                {"properties": {"gte": {"type": "number"}, "lte": {"type": "number"}}},
                {"properties": {"gte": {"type": "string"}, "lte": {"type": "string"}}},
            ],
        },
    )
    gte: RangeBound | SkipJsonSchema[None] = None
    lte: RangeBound | SkipJsonSchema[None] = None

    @model_validator(mode="before")
    @classmethod
    def _no_nulls(cls, data: Any) -> Any:
        return no_nulls(data, "gte", "lte")

    @model_validator(mode="after")
    def _bounds(self) -> RangeFilter:
        given = [v for v in (self.gte, self.lte) if v is not None]
        if not given:
            raise ValueError("a range needs `gte`, `lte` or both")
        if len({isinstance(v, str) for v in given}) > 1:
            raise ValueError("`gte` and `lte` must both be numbers or both be ISO dates")
        return self


MetadataFilter = Annotated[
    dict[Annotated[str, Field(pattern=r"^[A-Za-z0-9_-]{1,100}$")], FilterScalar | InFilter | RangeFilter],
    Field(
        min_length=1,
        max_length=16,
        json_schema_extra={"additionalProperties": False},
        description='Only documents whose metadata has every key with the given value, one of `{"in": '
        '[...]}`, or within `{"gte"?, "lte"?}` (numbers, or ISO dates); keys: letters, digits, `_`, `-`. '
        'Types must match (`"2020"` is not `2020`).',
    ),
]


def filter_conditions(value: dict[str, Any] | None) -> dict[str, Any] | None:
    """The filter as plain values for the use cases: `{key: value}`, `{key: {"in": [...]}}` or
    `{key: {"gte"?: ..., "lte"?: ...}}`."""
    if value is None:
        return None
    conditions: dict[str, Any] = {}
    for key, wanted in value.items():
        if isinstance(wanted, InFilter):
            conditions[key] = {"in": list(wanted.in_)}
        elif isinstance(wanted, RangeFilter):
            conditions[key] = wanted.model_dump(exclude_none=True)
        else:
            conditions[key] = wanted
    return conditions
