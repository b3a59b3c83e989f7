"""Request and response models for corpora and documents."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from app.schemas.common import CorpusName, DocumentId, NonBlankText

CorpusKind = Literal["claim", "answer", "question"]


class IndexSpecIn(BaseModel):
    """How a corpus is searched: exact, HNSW or IVF (see README, "Index types")."""

    model_config = ConfigDict(extra="forbid")
    type: Literal["auto", "flat", "hnsw", "ivf"] = Field(
        "auto", description="auto: exact below 200,000 documents, IVF above."
    )
    m: int = Field(32, ge=4, le=128, description="HNSW links per node.")
    ef_construction: int = Field(80, ge=8, le=1024, description="HNSW build beam width.")
    ef_search: int = Field(96, ge=8, le=4096, description="HNSW search beam width (at least k).")
    nlist: int | None = Field(None, ge=1, le=262144, description="IVF lists (default about 4 sqrt(n)).")
    nprobe: int = Field(32, ge=1, le=65536, description="IVF lists visited per query.")
    compression: Literal["none", "sq8", "pq"] = Field("none", description="IVF vector compression.")
    pq_m: int = Field(48, ge=1, le=384, description="IVF-PQ sub-quantizers (must divide the dimension).")


class CorpusCreate(BaseModel):
    """POST /v1/corpora body."""

    model_config = ConfigDict(extra="forbid")
    name: CorpusName
    kind: CorpusKind
    description: str | None = Field(None, max_length=2000)
    index: IndexSpecIn | None = Field(None, description="Search structure; omitted: automatic by size.")


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
    index: dict[str, Any] | None = Field(None, description="The index spec given at creation (null: auto).")


class IndexStatus(BaseModel):
    """GET /v1/corpora/{name}/index: this worker's index of the corpus for the serving model."""

    model: str
    spec: dict[str, Any]
    structure: str = Field(description="What is built now: flat, hnsw or ivf.")
    size: int = Field(description="Documents in the index.")
    dimension: int
    mapped_bytes: int = Field(description="Snapshot vectors mapped read-only (shared between workers).")
    memory_bytes: int = Field(description="Vectors written since the snapshot, held by this worker.")
    last_checkpoint: datetime | None
    checkpoint_seconds: float | None
    high_water_mark: int = Field(description="Last change-log sequence number applied.")
    corpus_change_seq: int = Field(description="Last change-log sequence number of the corpus.")
    changes_since_checkpoint: int
    recall_at_10: float | None = Field(description="Measured at the last checkpoint (ANN only; 1.0 exact).")


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
