"""Request and response models for offline evaluations and threshold calibration."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, AliasChoices, BaseModel, ConfigDict, Field, model_validator
from pydantic.json_schema import SkipJsonSchema

from app.schemas.common import CorpusName, Description, DocumentId, NonBlankText, limited
from app.schemas.ranking import RankingModeName, RankingUsed, RerankOptions, RerankUsed
from app.schemas.requests import MetadataFilter, RequestModel, exactly_one_of, no_nulls
from evaluation.metric_names import METRIC_FAMILIES, parse_metric
from indexes.fusion_defaults import DEFAULT_ALPHA

# What evaluation.metrics.parse_metric accepts, as one pattern: MAP, MRR, or a family at a cutoff.
_CUTOFF_FAMILIES = "|".join(sorted(name[:-2] for name in METRIC_FAMILIES if name.endswith("@k")))
METRIC_NAME_PATTERN = rf"^(MAP|MRR|({_CUTOFF_FAMILIES})@[1-9][0-9]{{0,5}})$"


def _known_metric(name: str) -> str:
    # The schema states the same rule as METRIC_NAME_PATTERN; the message names the metrics there are.
    parse_metric(name)
    return name


# A metric name in a request: the schema's pattern, and a message naming the valid metrics.
MetricName = Annotated[
    str,
    AfterValidator(_known_metric),
    Field(
        json_schema_extra={"pattern": METRIC_NAME_PATTERN}, description="MAP, MRR, or a family at a cutoff."
    ),
]


class LabeledText(RequestModel):
    """A query or an inline document: id and text."""

    id: DocumentId
    text: NonBlankText


class Judgment(RequestModel):
    """One qrels row: how relevant a document is to a query (0 = judged non-relevant)."""

    query_id: DocumentId
    document_id: DocumentId
    relevance: int = Field(ge=-1000, le=1000)


class OpenWorld(RequestModel):
    """The open-world protocol: a random share of the queries have their relevant documents (and their
    twins) left out of the corpus, as if their claim was never checked; the corpus's calibrated match
    decisions are scored (docs/guides/checked-before.md)."""

    share: float = Field(0.5, ge=0.01, le=0.99, description="The share of queries whose claim is left out.")
    seed: int = Field(0, ge=0, le=2**31, description="Which queries those are (a random draw).")


class EvaluationCreate(RequestModel):
    """POST /v1/evaluations body: labeled queries ranked against a corpus or inline documents."""

    model_config = ConfigDict(json_schema_extra=exactly_one_of(("corpus",), ("documents",)))
    name: Annotated[Description, Field(max_length=200)] | None = None
    corpus: CorpusName | SkipJsonSchema[None] = Field(None, description="Rank against this existing corpus.")
    documents: (
        Annotated[
            list[LabeledText],
            limited("max_evaluation_documents", min_length=1, description="Or rank these inline documents."),
        ]
        | SkipJsonSchema[None]
    ) = None
    queries: list[LabeledText] = limited("max_evaluation_queries", min_length=1)
    qrels: list[Judgment] = Field(min_length=1)
    mode: Literal["retrieval", "rerank"] = Field(
        "retrieval",
        description="retrieval: against every document; rerank: only each query's judged documents.",
    )
    relevance_level: int = Field(1, ge=1, le=1000, description="Grades at or above this are relevant.")
    metrics: list[MetricName] | None = Field(
        None, min_length=1, description="e.g. MAP, MRR, HasPositive@1, nDCG@10."
    )
    cutoffs: list[Annotated[int, Field(ge=1, le=1000)]] | None = Field(None, min_length=1)
    top_k: int = Field(100, ge=1, le=1000, description="Retrieval depth per query.")
    ranking: RankingModeName | SkipJsonSchema[None] = Field(
        None,
        description="Rank with the bi-encoder, BM25, or both fused (docs/concepts/ranking.md). Default: a "
        "corpus as `rank` ranks it (its calibration for the serving model, else its default); inline "
        "documents: dense.",
    )
    alpha: float | SkipJsonSchema[None] = Field(
        None,
        ge=0,
        le=1,
        description="hybrid: the lexical weight (0: dense only). Default: the corpus's, else "
        f"{DEFAULT_ALPHA:g}.",
    )
    fusion: Literal["linear", "rrf"] | SkipJsonSchema[None] = Field(
        None, description="hybrid: linear mix or reciprocal-rank fusion. Default: the corpus's, else linear."
    )
    open_world: OpenWorld | SkipJsonSchema[None] = Field(
        None,
        description="Score the corpus's match decisions open-world (a calibrated corpus, `retrieval`): "
        "metrics match_precision, match_coverage, new_precision, new_coverage and gold_shown.",
    )
    filter: MetadataFilter | SkipJsonSchema[None] = Field(
        None,
        description="A corpus evaluation: rank only the documents this metadata filter admits, as `rank`.",
    )
    rerank: RerankOptions | None = Field(
        None,
        description="A re-ranking stage over each query's top k, as `rank` takes it. Default: a corpus's own "
        'stage, if it has one (`{"enabled": false}` evaluates without it); inline documents: none unless '
        "a model is named (an admin key).",
    )

    @model_validator(mode="before")
    @classmethod
    def _no_nulls(cls, data: Any) -> Any:
        return no_nulls(data, "corpus", "documents", "ranking", "alpha", "fusion", "filter", "open_world")

    @model_validator(mode="after")
    def _one_document_source(self) -> EvaluationCreate:
        if (self.corpus is None) == (self.documents is None):
            raise ValueError("give exactly one of `corpus` or `documents`")
        if self.open_world is not None and (self.corpus is None or self.mode != "retrieval"):
            raise ValueError(
                "`open_world` scores a corpus's match decisions: give `corpus` and mode `retrieval`"
            )
        if self.filter is not None and self.documents is not None:
            raise ValueError(
                "`filter` applies to a corpus's metadata: give it with `corpus`, not `documents`"
            )
        return self


class EvaluationOut(BaseModel):
    """An evaluation: status, metrics (means), per-query breakdown, model version and timing."""

    model_config = ConfigDict(from_attributes=True)
    id: str
    name: str | None
    status: Literal["queued", "running", "succeeded", "failed"]
    corpus: str | None = Field(validation_alias=AliasChoices("corpus_name", "corpus"))
    mode: str
    model: str | None = Field(validation_alias=AliasChoices("model_version", "model"))
    metrics: dict[str, float] | None
    per_query: dict[str, dict[str, float]] | None
    ranking: RankingUsed | None = Field(
        None, description="The first stage's setting the evaluation ranked by (null while queued)."
    )
    rerank: RerankUsed | None = Field(None, description="The re-ranking stage the evaluation ran, if any.")
    error: str | None
    query_count: int
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    duration_seconds: float | None


class EvaluationList(BaseModel):
    """GET /v1/evaluations response (newest first, without per-query details)."""

    evaluations: list[EvaluationOut]


class CalibrationPair(RequestModel):
    """A labeled pair: a text and a corpus document (by id) or another text; label 1 = duplicate."""

    model_config = ConfigDict(json_schema_extra=exactly_one_of(("document_id",), ("document",)))
    text: NonBlankText
    document_id: DocumentId | SkipJsonSchema[None] = None
    document: NonBlankText | SkipJsonSchema[None] = None
    label: Literal[0, 1]

    @model_validator(mode="before")
    @classmethod
    def _no_nulls(cls, data: Any) -> Any:
        return no_nulls(data, "document_id", "document")

    @model_validator(mode="after")
    def _one_side(self) -> CalibrationPair:
        if (self.document_id is None) == (self.document is None):
            raise ValueError("give exactly one of `document_id` or `document`")
        return self


class CalibrationRequest(RequestModel):
    """POST /v1/corpora/{name}/calibrate body."""

    pairs: list[CalibrationPair] = limited(
        "max_pairs_per_request",
        min_length=2,
        description="At least one duplicate (label 1) and one non-duplicate (label 0).",
        json_schema_extra={
            "allOf": [{"contains": {"properties": {"label": {"const": v}}}} for v in (0, 1)],
        },
    )


class CalibrationOut(BaseModel):
    """The F1-optimal threshold, now the corpus's default for duplicates with this model."""

    model_config = ConfigDict(from_attributes=True)
    threshold: float
    precision: float
    recall: float
    f1: float
    accuracy: float
    pair_count: int
    model: str


class RankingCalibrationRequest(RequestModel):
    """POST /v1/corpora/{name}/calibrate-ranking body (all optional)."""

    metric: MetricName | None = Field(
        None,
        description="Metric to maximise; default: the corpus kind's gate metric (MRR for claims, else MAP).",
    )
    folds: int = Field(
        5, ge=2, le=20, description="Grouped cross-validation folds (fewer if there are fewer groups)."
    )


class RankingCalibrationOut(BaseModel):
    """The chosen ranking setting, now the corpus's default for rank and duplicates with this model."""

    model: str
    mode: str
    alpha: float
    fusion: str
    metric: str
    value: float = Field(description="The metric of the chosen setting over all the corpus's pair queries.")
    cv_mean: float = Field(description="Held-out metric of the setting chosen on the other folds, averaged.")
    cv_std: float
    chosen_per_fold: list[str]
    settings: dict[str, float] = Field(description="Every setting tried and its metric over all queries.")
    queries: int
    task: str
    calibrated_at: str
