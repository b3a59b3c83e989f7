"""Shared field types for request and response models: what the server enforces is what the schema says.

Patterns that pydantic's regex engine cannot express (lone surrogates, Python's notion of whitespace)
are checked in Python and published in the OpenAPI schema as the equivalent JSON Schema pattern, so a
client generated from the schema rejects exactly what the server rejects. Limits that come from
settings (`PAIRANK_MAX_TEXT_CHARS`, ...) are marked `x-pairank-limit` and filled in by `app.api.openapi`.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import AfterValidator, Field, Strict
from pydantic_core import PydanticUndefined
from typing_extensions import TypeAliasType

from indexes.languages import ISO_639_1, MULTI

# Patterns are written for three regex engines at once (ECMA-262 in the schema, Rust in validators,
# Python here): plain classes and \xNN/\uNNNN escapes only. Whitespace is spelled out as ECMA-262's
# set, so "blank" means the same on every side. Lone surrogates cannot be written in these patterns
# (a Rust pattern cannot hold one); the JSON guard and the validators below refuse them.
_WS = r" \t\n\r\f\v\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
# No NUL anywhere (PostgreSQL text cannot hold one), and at least one non-whitespace character.
TEXT_PATTERN = rf"^[^\x00]*[^\x00{_WS}][^\x00]*$"
STRING_PATTERN = r"^[^\x00]*$"
ID_PATTERN = rf"^[^\x00-\x1f\x7f{_WS}](?:[^\x00-\x1f\x7f]*[^\x00-\x1f\x7f{_WS}])?$"
KEY_PATTERN = r"^[^\x00-\x1f\x7f]+$"
_TEXT = re.compile(TEXT_PATTERN)
_ID = re.compile(ID_PATTERN, re.DOTALL)
_KEY = re.compile(KEY_PATTERN, re.DOTALL)
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
LIMIT = "x-pairank-limit"  # names the Settings field that bounds a list or a text (see app.api.openapi)


def unicode_problem(value: str) -> str | None:
    """Why a string cannot be stored (a lone surrogate, a NUL character), or None."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as error:
        return f"contains a lone UTF-16 surrogate at position {error.start}: not valid Unicode"
    if "\x00" in value:
        return f"contains a NUL character at position {value.index(chr(0))}, which text columns cannot store"
    return None


def _text(value: str) -> str:
    problem = unicode_problem(value)
    if problem:
        raise ValueError(problem)
    if not _TEXT.match(value):
        raise ValueError("must not be empty or whitespace-only")
    return value


def check_identifier(value: str) -> str:
    """The value when it is a valid id (document ids, model versions), else ValueError saying why."""
    problem = unicode_problem(value)
    if problem:
        raise ValueError(problem)
    if not _ID.match(value):
        raise ValueError("must not contain control characters or start or end with whitespace")
    return value


def _key(value: str) -> str:
    problem = unicode_problem(value)
    if problem:
        raise ValueError(problem)
    if not _KEY.match(value):
        raise ValueError("must not be empty or contain control characters")
    return value


def _string(value: str) -> str:
    problem = unicode_problem(value)
    if problem:
        raise ValueError(problem)
    return value


def limited(setting: str, default: Any = PydanticUndefined, **kwargs: Any) -> Any:
    """A Field bounded by a setting: the schema gets its value as maxItems/maxLength (app.api.openapi)."""
    extra = {LIMIT: setting, **kwargs.pop("json_schema_extra", {})}
    return Field(default, json_schema_extra=extra, **kwargs)


def _schema(pattern: str, limit: str | None = None) -> dict[str, Any]:
    extra: dict[str, Any] = {"pattern": pattern}
    if limit:
        extra[LIMIT] = limit
    return extra


NonBlankText = Annotated[
    str,
    AfterValidator(_text),
    Field(
        json_schema_extra=_schema(TEXT_PATTERN, "max_text_chars"),
        description="Valid Unicode, at least one non-whitespace character, at most PAIRANK_MAX_TEXT_CHARS.",
    ),
]
DocumentId = Annotated[
    str,
    Field(
        min_length=1,
        max_length=256,
        json_schema_extra=_schema(ID_PATTERN),
        description="1-256 characters of valid Unicode, no control characters, no leading or trailing "
        "whitespace. In URLs, percent-encode every character but A-Z a-z 0-9 - _ ~ (so `a/b?c` is "
        "`a%2Fb%3Fc` and `.` is `%2E`).",
    ),
    AfterValidator(check_identifier),
]
CorpusName = Annotated[
    str,
    Field(
        min_length=1,
        max_length=100,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$",
        description="Letters, digits, `_`, `.`, `-`; starts with a letter or digit; 100 characters at most.",
    ),
]
Description = Annotated[
    str, Field(max_length=2000, json_schema_extra={"pattern": STRING_PATTERN}), AfterValidator(_string)
]
TopK = Annotated[int, Field(ge=1, le=1000, description="How many results to return (1..1000).")]
Threshold = Annotated[float, Field(ge=-1.0, le=1.0, description="Cosine threshold in [-1, 1].")]
Int64 = Annotated[int, Field(ge=INT64_MIN, le=INT64_MAX)]
# Strict scalars for unions of JSON types: "12" stays a string and `true` a boolean (no coercion).
StrictInt64 = Annotated[int, Strict(), Field(ge=INT64_MIN, le=INT64_MAX)]
StrictFiniteFloat = Annotated[float, Strict(), Field(allow_inf_nan=False)]
StrictBool = Annotated[bool, Strict()]

# Metadata: flat enough to filter on, storable everywhere (no NaN, no integers beyond 64 bits).
MetaKey = Annotated[
    str, Field(min_length=1, max_length=100, json_schema_extra={"pattern": KEY_PATTERN}), AfterValidator(_key)
]
MetaString = Annotated[
    str, Field(max_length=2000, json_schema_extra={"pattern": STRING_PATTERN}), AfterValidator(_string)
]
MetaScalar = MetaString | StrictInt64 | StrictFiniteFloat | StrictBool | None
MetaValue = MetaScalar | Annotated[list[MetaScalar], Field(max_length=100)]
Metadata = Annotated[
    dict[MetaKey, MetaValue],
    Field(
        max_length=64,
        json_schema_extra={"additionalProperties": False},
        description="Up to 64 keys; values are strings (2,000 characters at most), 64-bit integers, finite "
        "numbers, booleans, null, or lists of up to 100 of those.",
    ),
]

_CLOSED = {"additionalProperties": False}  # keys must match the key pattern (patternProperties)

# Free-form JSON (training parameters): storable values, keys without control characters.
JsonValue = TypeAliasType(
    "JsonValue",
    "MetaString | StrictInt64 | StrictFiniteFloat | StrictBool | None | list[JsonValue] | JsonObject",
)
JsonObject = TypeAliasType(
    "JsonObject",
    Annotated[
        dict[MetaKey, JsonValue], Field(max_length=64, json_schema_extra={"additionalProperties": False})
    ],
)


def _language(value: str) -> str:
    if value not in ISO_639_1:
        raise ValueError(f"{value!r} is not an ISO 639-1 language code (two letters: en, es, pt, ar, ...)")
    return value


def _corpus_language(value: str) -> str:
    return value if value == MULTI else _language(value)


LanguageCode = Annotated[
    str,
    Field(
        min_length=2,
        max_length=2,
        pattern=r"^[a-z]{2}$",
        description="An ISO 639-1 code, lower case: `en`, `es`, `pt`, `de`, `ar`, `sw`, ...",
        # The schema lists the codes, so a client (and the contract fuzz) knows which two letters pass.
        json_schema_extra={"enum": sorted(ISO_639_1)},
    ),
    AfterValidator(_language),
]
CorpusLanguage = Annotated[
    str,
    Field(
        min_length=2,
        max_length=5,
        pattern=r"^(?:[a-z]{2}|multi)$",
        description="An ISO 639-1 code (`en`, `es`, `pt`, `ar`, ...), or `multi`: each document in its own "
        "language, given or detected.",
        json_schema_extra={"enum": [*sorted(ISO_639_1), MULTI]},
    ),
    AfterValidator(_corpus_language),
]
