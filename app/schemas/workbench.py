"""Request and response models of the judging workbench: judgements by several judges, their agreement,
export and import, and query sets."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from app.schemas.common import NonBlankText
from app.schemas.requests import RequestModel

JudgementScale = Literal["binary", "graded"]


class JudgementScaleIn(RequestModel):
    """PUT /v1/corpora/{name}/judgements/scale body."""

    judgement_scale: JudgementScale


class JudgementScaleOut(BaseModel):
    """The corpus's judging scale."""

    judgement_scale: JudgementScale


class JudgementRecord(BaseModel):
    """One judge's judgement of a (query, document) pair."""

    id: int
    pair_id: int
    query: str
    document_id: str | None
    judged_by: str = Field(description="The key id that judged (`admin-key`, `anonymous`, `unknown`).")
    grade: float | None = Field(description="Its grade on the corpus's scale; null: unsure/skip.")
    unsure: bool
    note: str | None
    aggregate: float | None = Field(description="The pair's aggregate grade (docs/concepts/pairs.md).")
    disagreement: bool = Field(description="The pair's judges gave different grades.")
    created_at: datetime
    updated_at: datetime | None


class JudgementPage(BaseModel):
    """GET /v1/corpora/{name}/judgements: a page of judgements, oldest first."""

    judgements: list[JudgementRecord]
    next_cursor: str | None = Field(description="Pass as `cursor` for the next page; null: the last page.")


class JudgementEdit(RequestModel):
    """PATCH /v1/corpora/{name}/judgements/{id} body: change your own judgement."""

    label: float | None = Field(None, ge=-1000, le=1000, description="A grade on the corpus's scale.")
    unsure: bool = False
    note: str | None = Field(None, max_length=2000)


class JudgePairAgreement(BaseModel):
    """Cohen's kappa of two judges over the pairs both graded."""

    judges: list[str]
    overlap: int = Field(description="Pairs both judges graded.")
    kappa: float | None = Field(description="Null where fewer than 2 pairs overlap, or kappa is undefined.")


class Agreement(BaseModel):
    """GET /v1/corpora/{name}/judgements/agreement: chance-corrected agreement of the judges."""

    scale: JudgementScale
    judges: list[str]
    graded_pairs: int = Field(description="Pairs with at least one grade.")
    shared_pairs: int = Field(description="Pairs graded by at least two judges (what agreement reads).")
    disagreements: int = Field(description="Pairs whose judges gave different grades.")
    pairs: list[JudgePairAgreement]
    alpha: float | None = Field(
        description="Krippendorff's alpha over all judges (nominal on `binary`, ordinal on `graded`); null "
        "where no pair has two grades or alpha is undefined."
    )


class JudgementsImport(RequestModel):
    """POST /v1/corpora/{name}/judgements/import body: judged pairs as a file's text."""

    format: Literal["jsonl", "csv"] = Field(
        description="`jsonl`: one {query, document_id, label, note?} per line; `csv`: a header with query, "
        "document_id, label (note optional)."
    )
    text: str = Field(min_length=1, max_length=5_000_000, description="The file's content.")


class JudgementsImported(BaseModel):
    """What an import stored."""

    judged: int = Field(description="Judgements stored (added or changed) for the sender.")
    pairs: int = Field(description="Labeled pairs of the corpus after it.")


class QuerySetCreate(RequestModel):
    """POST /v1/corpora/{name}/query-sets body: a named list of queries."""

    name: str = Field(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9][A-Za-z0-9 _.-]*$")
    queries: list[NonBlankText] = Field(
        min_length=1, max_length=1000, description="Query texts (duplicates dropped)."
    )


class QueryChangeOut(BaseModel):
    """A query whose MRR moved since the previous run (null: not scored in that run)."""

    query: str
    before: float | None
    after: float | None


class QuerySetRunOut(BaseModel):
    """One scoring of a query set: why it ran, with which model, its means and each query's metrics."""

    id: int
    status: Literal["queued", "running", "succeeded", "failed"]
    trigger: str = Field(description="`manual`, `activation` or `ranking change`.")
    job_id: str | None
    model: str | None
    metrics: dict[str, float] | None = Field(description="Means over the set's judged queries.")
    per_query: dict[str, dict[str, float]] | None = Field(description="Query text -> its metrics.")
    changes: list[QueryChangeOut] = Field(description="Queries whose MRR moved since the previous run.")
    error: str | None = Field(description="Why it failed, or why nothing was scored.")
    created_at: datetime
    finished_at: datetime | None


class QuerySetOut(BaseModel):
    """A saved query set with its latest run."""

    name: str
    queries: list[str]
    created_at: datetime
    last_run: QuerySetRunOut | None


class QuerySetList(BaseModel):
    """GET /v1/corpora/{name}/query-sets."""

    query_sets: list[QuerySetOut]


class QuerySetHistory(BaseModel):
    """GET /v1/corpora/{name}/query-sets/{set}: the set and its runs, oldest first."""

    query_set: QuerySetOut
    runs: list[QuerySetRunOut]
