"""Request and response models for comparing two rankings of a corpus (`.../compare`)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from app.schemas.common import NonBlankText
from app.schemas.evaluations import MetricName
from app.schemas.ranking import RankingOptions, RankingUsed, RankResponse, RerankOptions
from app.schemas.requests import MetadataFilter, RequestModel

CompareDepth = Field(
    10, ge=1, le=100, description="Results per side (at most 100, the candidate pool's depth)."
)


class CompareSide(RankingOptions):
    """One side: a model and a ranking setting; unset fields as `rank` resolves them."""

    model: str | None = Field(
        None,
        min_length=1,
        max_length=300,
        description="A registered model version (GET /admin/models; needs an admin key). Default: the "
        "serving model. Another version re-scores the serving indexes' candidates with its own vectors.",
    )
    rerank: RerankOptions | None = Field(
        None,
        description="The side's re-ranking stage, as `rank` takes it: default the corpus's stage, if any; "
        '`{"enabled": false}` compares without it.',
    )


class CompareRequest(RequestModel):
    """POST /v1/corpora/{name}/compare body: one query, ranked by both sides."""

    query: NonBlankText
    k: int = CompareDepth
    filter: MetadataFilter | None = Field(None, description="Both sides rank only the documents it admits.")
    left: CompareSide = Field(
        default_factory=CompareSide, description="Default: the corpus as `rank` ranks it."
    )
    right: CompareSide


class CompareResponse(BaseModel):
    """Both rankings of the query, each with its model and setting."""

    left: RankResponse
    right: RankResponse


class CompareMetricsRequest(RequestModel):
    """POST /v1/corpora/{name}/compare/metrics body: both sides over the corpus's judged queries."""

    left: CompareSide = Field(
        default_factory=CompareSide, description="Default: the corpus as `rank` ranks it."
    )
    right: CompareSide
    metrics: list[MetricName] | None = Field(
        None,
        min_length=1,
        max_length=10,
        description="Metric names (as in evaluations). Default: MRR, HasPositive@1, HasPositive@10, MAP.",
    )
    limit: int = Field(200, ge=1, le=1000, description="Score the most recently judged this many queries.")
    filter: MetadataFilter | None = Field(None, description="Both sides rank only the documents it admits.")


class SideMetricsOut(BaseModel):
    """One side's model, setting and mean metrics."""

    model: str
    ranking: RankingUsed
    means: dict[str, float]


class QueryMetricsOut(BaseModel):
    """One judged query: its text, relevant documents, and each side's metrics."""

    query: str
    relevant: int
    left: dict[str, float]
    right: dict[str, float]


class CompareMetricsResponse(BaseModel):
    """Both sides over the same judged queries, ranked to depth 100."""

    metrics: list[str]
    queries: int = Field(description="Queries scored.")
    judged_queries: int = Field(description="Judged queries with a relevant stored document, in all.")
    left: SideMetricsOut
    right: SideMetricsOut
    per_query: list[QueryMetricsOut] = Field(description="Most recently judged first.")
