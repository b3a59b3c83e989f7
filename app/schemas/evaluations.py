"""Request and response models for offline evaluations and threshold calibration."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from app.schemas.common import CorpusName, DocumentId, NonBlankText


class LabeledText(BaseModel):
    """A query or an inline document: id and text."""

    model_config = ConfigDict(extra="forbid")
    id: DocumentId
    text: NonBlankText


class Judgment(BaseModel):
    """One qrels row: how relevant a document is to a query (0 = judged non-relevant)."""

    model_config = ConfigDict(extra="forbid")
    query_id: DocumentId
    document_id: DocumentId
    relevance: int = Field(ge=-1000, le=1000)


class EvaluationCreate(BaseModel):
    """POST /v1/evaluations body: labeled queries ranked against a corpus or inline documents."""

    model_config = ConfigDict(extra="forbid")
    name: str | None = Field(None, max_length=200)
    corpus: CorpusName | None = Field(None, description="Rank against this existing corpus's index.")
    documents: list[LabeledText] | None = Field(
        None, min_length=1, description="Or rank these inline documents."
    )
    queries: list[LabeledText] = Field(min_length=1)
    qrels: list[Judgment] = Field(min_length=1)
    mode: Literal["retrieval", "rerank"] = Field(
        "retrieval",
        description="retrieval: against every document; rerank: only each query's judged documents.",
    )
    relevance_level: int = Field(1, ge=1, le=1000, description="Grades at or above this are relevant.")
    metrics: list[str] | None = Field(
        None, min_length=1, description="e.g. MAP, MRR, HasPositive@1, nDCG@10."
    )
    cutoffs: list[Annotated[int, Field(ge=1, le=1000)]] | None = Field(None, min_length=1)
    top_k: int = Field(100, ge=1, le=1000, description="Retrieval depth per query.")

    @model_validator(mode="after")
    def _one_document_source(self) -> EvaluationCreate:
        if (self.corpus is None) == (self.documents is None):
            raise ValueError("give exactly one of `corpus` or `documents`")
        return self


class EvaluationOut(BaseModel):
    """An evaluation: status, metrics (means), per-query breakdown, model version and timing."""

    id: str
    name: str | None
    status: Literal["queued", "running", "succeeded", "failed"]
    corpus: str | None
    mode: str
    model: str | None
    metrics: dict[str, float] | None
    per_query: dict[str, dict[str, float]] | None
    error: str | None
    query_count: int
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    duration_seconds: float | None


class EvaluationList(BaseModel):
    """GET /v1/evaluations response (newest first, without per-query details)."""

    evaluations: list[EvaluationOut]


class CalibrationPair(BaseModel):
    """A labeled pair: a text and a corpus document (by id) or another text; label 1 = duplicate."""

    model_config = ConfigDict(extra="forbid")
    text: NonBlankText
    document_id: DocumentId | None = None
    document: NonBlankText | None = None
    label: Literal[0, 1]

    @model_validator(mode="after")
    def _one_side(self) -> CalibrationPair:
        if (self.document_id is None) == (self.document is None):
            raise ValueError("give exactly one of `document_id` or `document`")
        return self


class CalibrationRequest(BaseModel):
    """POST /v1/corpora/{name}/calibrate body."""

    model_config = ConfigDict(extra="forbid")
    pairs: list[CalibrationPair] = Field(min_length=2)


class CalibrationOut(BaseModel):
    """The F1-optimal threshold, now the corpus's default for duplicates with this model."""

    threshold: float
    precision: float
    recall: float
    f1: float
    accuracy: float
    pair_count: int
    model: str
