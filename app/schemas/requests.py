"""The base of every request body model: unknown fields refused, no booleans taken for numbers, and
"exactly one of these fields" rules stated in the JSON Schema as well as enforced."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator


class RequestModel(BaseModel):
    """Request bodies: extra fields are an error; `true` is not the number 1."""

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _no_booleans_for_numbers(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        for name, field in cls.model_fields.items():
            value = data.get(field.alias or name)
            annotation = str(field.annotation)
            if (
                isinstance(value, bool)
                and ("int" in annotation or "float" in annotation)
                and "bool" not in annotation
            ):
                raise ValueError(f"`{name}` must be a number, not a boolean")
        return data


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
