"""Path and query parameters with the bounds the database and the URL grammar impose (422 outside)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Path, Query
from pydantic import AfterValidator
from starlette.convertors import Convertor, register_url_convertor

from app.schemas.common import ID_PATTERN, INT64_MAX, check_identifier, unicode_problem

CorpusNameParam = Annotated[
    str,
    Path(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", description="Corpus name."),
]
DocumentIdParam = Annotated[
    str,
    Path(
        min_length=1,
        max_length=256,
        json_schema_extra={"pattern": ID_PATTERN},
        description="Document id, percent-encoded (every character but A-Z a-z 0-9 - _ ~, `.` included).",
    ),
    AfterValidator(check_identifier),
]
ModelVersionParam = Annotated[
    str,
    Path(
        min_length=1, max_length=300, json_schema_extra={"pattern": ID_PATTERN}, description="Model version."
    ),
    AfterValidator(check_identifier),
]


class _ModelVersionConvertor(Convertor[str]):
    """A version in a path (it may hold `/`), never one ending in `/activate`: that path is the activation's,
    and a DELETE route matching it would be advertised in its 405 `Allow` header."""

    regex = r".+(?<!/activate)"

    def convert(self, value: str) -> str:
        """The version as given."""
        return value

    def to_string(self, value: str) -> str:
        """The version as given."""
        return value


register_url_convertor("model_version", _ModelVersionConvertor())  # `{version:model_version}` in a route

RecordIdParam = Annotated[
    str, Path(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9-]+$", description="Evaluation or job id.")
]
PairIdParam = Annotated[int, Path(ge=1, le=INT64_MAX, description="Pair id.")]
Offset = Annotated[int, Query(ge=0, le=INT64_MAX, description="Items to skip.")]
KeyIdParam = Annotated[
    str, Path(min_length=1, max_length=16, pattern=r"^[a-z0-9]+$", description="API key id (`prk_<id>_...`).")
]


def _storable(value: str | None) -> str | None:
    problem = unicode_problem(value) if value is not None else None
    if problem:
        raise ValueError(problem)
    return value


QueryTextParam = Annotated[
    str | None,
    Query(min_length=1, max_length=10_000, description="Only the pairs of this query text (exactly)."),
    AfterValidator(_storable),
]
