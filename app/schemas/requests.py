"""The base of every request body model: unknown fields refused, strict types, and
"exactly one of these fields" rules stated in the JSON Schema as well as enforced."""

from __future__ import annotations

from types import UnionType
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, model_validator


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
