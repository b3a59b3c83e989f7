"""Request and response models for training pairs and the admin API (retraining, jobs, models)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, JsonValue, field_validator, model_validator
from pydantic.json_schema import SkipJsonSchema

from app.schemas.common import CorpusName, DocumentId, JsonObject, NonBlankText, limited
from app.schemas.evaluations import MetricName
from app.schemas.requests import RequestModel, exactly_one_of, no_nulls


class PairIn(RequestModel):
    """A labeled pair: a query and a stored document (by id) or an inline document text."""

    model_config = ConfigDict(json_schema_extra=exactly_one_of(("document_id",), ("document",)))
    query: NonBlankText
    document_id: DocumentId | SkipJsonSchema[None] = None
    document: NonBlankText | SkipJsonSchema[None] = None
    label: float = Field(ge=-1000, le=1000, description="1/0 (match or not) or a graded score.")
    split: Literal["train", "dev"] | None = None

    @model_validator(mode="before")
    @classmethod
    def _no_nulls(cls, data: Any) -> Any:
        return no_nulls(data, "document_id", "document")

    @model_validator(mode="after")
    def _one_document(self) -> PairIn:
        if (self.document_id is None) == (self.document is None):
            raise ValueError("give exactly one of `document_id` or `document`")
        return self


class PairsCreate(RequestModel):
    """POST /v1/corpora/{name}/pairs body."""

    pairs: list[PairIn] = limited("max_pairs_per_request", min_length=1)


class PairOut(BaseModel):
    """A stored pair (built from the pair row)."""

    model_config = ConfigDict(from_attributes=True)
    id: int
    query: str
    document_id: str | None
    document: str | None
    label: float
    split: str | None
    created_at: datetime
    judged_by: str | None = Field(
        description="Who stored or last changed it: a key id, `admin-key` (PAIRANK_ADMIN_API_KEY), "
        "`anonymous` (auth disabled); null for pairs stored before this was recorded."
    )
    updated_at: datetime | None = Field(description="When its label last changed (null: never).")


class PairCounts(BaseModel):
    """Pair counts of a corpus."""

    total: int
    queries: int = Field(description="Distinct judged queries.")
    positive: int
    negative: int
    train: int
    dev: int
    unsplit: int


class PairsAdded(PairCounts):
    """What POST /pairs stored, and the corpus's counts after it."""

    added: int


class PairList(BaseModel):
    """A page of pairs with the corpus's counts."""

    pairs: list[PairOut]
    counts: PairCounts


class JudgementIn(RequestModel):
    """PUT /v1/corpora/{name}/pairs/judgement body: a verdict on a stored document for a query."""

    query: NonBlankText
    document_id: DocumentId
    label: float = Field(ge=-1000, le=1000, description="1 relevant, 0 not relevant (or a graded score).")


class JudgementOut(BaseModel):
    """The pair of the (query, document), whether the judgement added it, and the corpus's counts."""

    pair: PairOut
    created: bool = Field(description="true: a new pair; false: the existing pair was updated.")
    counts: PairCounts


class SplitRequest(RequestModel):
    """POST /v1/corpora/{name}/pairs/split body: a deterministic split by query text."""

    dev_fraction: float = Field(0.2, gt=0.0, lt=1.0)
    seed: int = Field(0, ge=0)


class DevSet(RequestModel):
    """The dev set of a retraining job: explicit pairs, or the most recently judged share of the queries."""

    pairs: list[PairIn] | None = Field(None, min_length=1)
    fraction: float | None = Field(
        None,
        gt=0.0,
        lt=1.0,
        description="Share of the queries, the most recently judged, held out (default 0.2).",
    )


class HardNegativesIn(RequestModel):
    """Hard negatives mined per training pair from the corpus (training/README.md, `hard_negatives`)."""

    count: int = Field(1, ge=1, le=16, description="Extra negative document columns per pair.")
    start: int = Field(0, ge=0, le=10_000, description="Skip this many best-ranked non-positives.")
    window: int = Field(20, ge=1, le=10_000, description="Draw from the next `window` candidates.")
    near_duplicate_cutoff: float = Field(
        0.95, gt=0.0, le=1.0, description="Cosine to a positive at or above which a candidate is skipped."
    )
    remine: Literal["epoch", "once"] = Field("epoch", description="Mine with the current model each epoch.")

    @model_validator(mode="after")
    def _window_holds_count(self) -> HardNegativesIn:
        if self.window < self.count:
            raise ValueError(f"window ({self.window}) must be at least count ({self.count})")
        return self


# The names training registers (training.losses.LOSSES, training.shuffling.BATCH_ORDERS): app/ and training/
# meet only through files, so the schema lists them here and tests/test_method_names.py keeps them equal.
LossName = Literal["bsc", "combo", "mse", "triplet", "mnr", "focal_infonce", "pairsupcon"]
ShufflingName = Literal["random", "none", "example", "fast_words", "fast_clusters", "fast_neighbours"]
# Hard negatives are BSC's extra columns: with another loss named, `hard_negatives` must be absent or null.
_HARD_NEGATIVES_NEED_BSC: dict[str, JsonValue] = {
    "if": {"required": ["loss"], "properties": {"loss": {"not": {"enum": ["bsc", None]}}}},
    "then": {"properties": {"hard_negatives": {"type": "null"}}},
}


class RetrainRequest(RequestModel):
    """POST /admin/retrain body; everything has a default (docs/guides/fine-tuning.md)."""

    model_config = ConfigDict(json_schema_extra=_HARD_NEGATIVES_NEED_BSC)
    corpus: CorpusName
    base_model: str | None = Field(None, description="Default: the active model.")
    loss: LossName | None = Field(
        None, description="Default: by the corpus's judged pairs (combo with labelled negatives, else bsc)."
    )
    loss_params: JsonObject | None = None
    shuffling: ShufflingName | None = Field(
        None,
        description="Default: by the corpus's judged pairs (none with labelled negatives, else example).",
    )
    shuffle_params: JsonObject | None = None
    epochs: int | None = Field(None, ge=1, le=50)
    batch_size: int | None = Field(None, ge=2, le=1024)
    learning_rate: float | None = Field(None, gt=0.0, le=1.0)
    bias_correction: bool | None = Field(
        None, description="AdamW's bias correction (the paper's CQA setting)."
    )
    max_seq_length: int | None = Field(None, ge=8, le=512)
    seed: int | None = Field(None, ge=0)
    dev: DevSet | None = None
    gate_metric: MetricName | None = Field(
        None, description="Default: the corpus kind's (MRR for claims, else MAP)."
    )
    auto_activate: bool | None = None
    min_improvement: float | None = Field(None, ge=-1.0, le=1.0)
    require_significant: bool | None = Field(
        None,
        description="Activate only a gain larger than two standard errors of the paired per-query "
        "differences on the dev queries (default true); false: min_improvement alone decides.",
    )
    cross_validation: Literal["auto", "always", "never"] | None = Field(
        None,
        description="Gate by cross-validation forward in time over all the corpus's pairs instead of the dev "
        "set (each of K blocks of later queries scored by a model trained on the earlier ones): `auto` "
        "(default) when the dev set has fewer than 200 queries and the pairs hold at least 2 judged "
        "queries per block; only when the base model is the active one.",
    )
    folds: int | None = Field(
        None, ge=2, le=10, description="Forward blocks (cut points) of a cross-validated gate (default 5)."
    )
    hard_negatives: HardNegativesIn | None = Field(
        None,
        description="BSC only: mine hard negatives from the corpus's documents (default: one per pair, "
        "mined once, for claim corpora; off for other kinds; null: off).",
    )


class JobCreated(BaseModel):
    """202 response of POST /admin/retrain."""

    job_id: str
    status: str


class JobOut(BaseModel):
    """A job: status, progress, timings, error and log tail."""

    model_config = ConfigDict(from_attributes=True)
    id: str
    kind: Literal["retrain", "activate", "evaluate", "import", "language", "calibrate-match"]
    status: Literal["queued", "running", "succeeded", "failed", "cancelled"]
    corpus: str | None = Field(validation_alias=AliasChoices("corpus_name", "corpus"))
    params: dict[str, Any] = Field(description="The request (a worker's own parameters left out).")
    progress: dict[str, Any] | None
    error: str | None
    log_tail: str | None
    model_version: str | None
    gate: dict[str, Any] | None
    owner: str | None = Field(description="The worker running it (host:pid:suffix), while it runs.")
    cancel_requested: bool
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None

    @field_validator("params", mode="after")
    @classmethod
    def _public(cls, params: dict[str, Any]) -> dict[str, Any]:
        return {key: value for key, value in params.items() if not key.startswith("_")}


class JobList(BaseModel):
    """GET /admin/jobs response."""

    jobs: list[JobOut]


class ModelOut(BaseModel):
    """A registered model version (built from the registry row)."""

    model_config = ConfigDict(from_attributes=True)
    version: str
    model_id: str
    kind: Literal["bi-encoder", "cross-encoder"] = Field(
        "bi-encoder",
        description="`bi-encoder`: embeds texts, can be activated; `cross-encoder`: a corpus's re-ranker.",
    )
    source: str
    path: str = Field(
        description="The folder (on the machine that registered it) or the name it was registered from; "
        "its stored files are what every process loads."
    )
    base_model: str | None
    weights_sha256: str | None
    job_id: str | None
    training: dict[str, Any] | None
    dev_metrics: dict[str, Any] | None
    encoder: dict[str, Any] | None = Field(
        None, description="How this version is served: backend, precision, quality gate, fallbacks."
    )
    is_active: bool
    created_at: datetime
    activated_at: datetime | None
    artifact_store: str | None = Field(
        None,
        description="Where the model's files are stored: `database` (any machine loads them) or `local` "
        "(the folder it was registered from); null for the bundled default and hub names.",
    )
    artifact_sha256: str | None = Field(None, description="sha256 of the manifest of its files.")
    artifact_bytes: int | None = Field(None, description="Bytes of its files.")
    artifact_files: int | None = Field(None, description="How many files.")


class ModelList(BaseModel):
    """GET /admin/models response."""

    models: list[ModelOut]
    artifact_store: str = Field(description="This deployment's artifact store: `database` or `local`.")
    stored_bytes: int = Field(
        description="Bytes the artifact store holds for every model (files shared by models counted once "
        "in the database store)."
    )


class ModelDeleted(BaseModel):
    """DELETE /admin/models/{version} response."""

    model_config = ConfigDict(from_attributes=True)
    version: str
    artifact_bytes: int = Field(description="Bytes of the deleted model's files.")
    freed_bytes: int = Field(description="Bytes the store freed (files other models or jobs share stay).")
