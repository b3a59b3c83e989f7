"""Request and response models for corpora and documents."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from app.schemas.common import CorpusName, DocumentId, NonBlankText

CorpusKind = Literal["claim", "answer", "question"]


class CorpusCreate(BaseModel):
    """POST /v1/corpora body."""

    model_config = ConfigDict(extra="forbid")
    name: CorpusName
    kind: CorpusKind
    description: str | None = Field(None, max_length=2000)


class CorpusOut(BaseModel):
    """A corpus with its document count."""

    name: str
    kind: str
    description: str | None
    document_count: int
    created_at: datetime
    updated_at: datetime
    duplicate_threshold: float | None = Field(None, description="Calibrated duplicate threshold, if any.")
    threshold_model: str | None = Field(
        None, description="The model version the threshold was calibrated with."
    )


class CorpusList(BaseModel):
    """GET /v1/corpora response."""

    corpora: list[CorpusOut]


class DocumentIn(BaseModel):
    """One document to insert or update."""

    model_config = ConfigDict(extra="forbid")
    id: DocumentId
    text: NonBlankText
    metadata: dict[str, Any] | None = None


class DocumentsUpsert(BaseModel):
    """POST /v1/corpora/{name}/documents body."""

    model_config = ConfigDict(extra="forbid")
    documents: list[DocumentIn] = Field(min_length=1)


class UpsertOut(BaseModel):
    """What an upsert did."""

    inserted: int
    updated: int
    unchanged: int
    document_count: int
    model: str


class DocumentOut(BaseModel):
    """A stored document."""

    id: str
    text: str
    metadata: dict[str, Any] | None
    created_at: datetime
    updated_at: datetime
