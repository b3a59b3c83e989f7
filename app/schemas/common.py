"""Shared field types for request and response models."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, Field


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty or whitespace-only")
    return value


NonBlankText = Annotated[str, AfterValidator(_not_blank)]
DocumentId = Annotated[str, Field(min_length=1, max_length=256), AfterValidator(_not_blank)]
CorpusName = Annotated[
    str,
    Field(
        min_length=1,
        max_length=100,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$",
        description="Letters, digits, `_`, `.`, `-`; starts with a letter or digit; 100 characters at most.",
    ),
]
TopK = Annotated[int, Field(ge=1, le=1000, description="How many results to return (1..1000).")]
Threshold = Annotated[float, Field(ge=-1.0, le=1.0, description="Cosine threshold in [-1, 1].")]
