"""Request and response models for API keys (`/admin/keys`)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from app.schemas.common import CorpusName
from app.schemas.requests import RequestModel


class ApiKeyCreate(RequestModel):
    """POST /admin/keys body."""

    scope: Literal["read", "write", "admin"] = Field(
        description="`read`: rank, similarity, duplicates and GETs; `write`: also corpora, documents, pairs, "
        "calibration, evaluations; `admin`: also retraining, models and keys."
    )
    corpora: list[CorpusName] | None = Field(
        None, min_length=1, max_length=100, description="Limit the key to these corpora (default: all)."
    )
    name: str | None = Field(None, min_length=1, max_length=200, description="A label to recognise it by.")


class ApiKeyOut(BaseModel):
    """A key as listed: never its secret."""

    model_config = ConfigDict(from_attributes=True)
    id: str
    name: str | None
    scope: str
    corpora: list[str] | None
    created_at: datetime
    revoked_at: datetime | None


class ApiKeyCreated(ApiKeyOut):
    """201 response of POST /admin/keys: the key itself, shown this once."""

    key: str = Field(
        description="Send as `Authorization: Bearer <key>`; it is not stored and not shown again."
    )


class ApiKeyList(BaseModel):
    """Every key, newest first."""

    keys: list[ApiKeyOut]


class WhoAmI(BaseModel):
    """GET /v1/whoami: what the presented key may do (never the key itself)."""

    key_id: str | None = Field(description="The key's id; null for PAIRANK_ADMIN_API_KEY and anonymous.")
    name: str | None = Field(description="The key's label, if it has one.")
    scope: Literal["read", "write", "admin"]
    corpora: list[str] | None = Field(description="The corpora it is limited to (null: every corpus).")
    auth: Literal["required", "disabled"] = Field(
        description="`disabled`: read and write routes are open to anyone (PAIRANK_AUTH)."
    )
