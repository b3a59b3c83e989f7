"""Request and response models for training pairs and the admin API (jobs, models, API keys); the retraining
request is app/schemas/retraining.py."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic.json_schema import SkipJsonSchema

from app.schemas.common import CorpusName, DocumentId, NonBlankText, limited
from app.schemas.requests import RequestModel, exactly_one_of, no_nulls
from app.schemas.workbench import JudgementRecord


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
    label: float | None = Field(
        description="The aggregate of its judges' grades (majority, a tie the lower; "
        "docs/concepts/pairs.md); null while every judge was unsure."
    )
    disagreement: bool = Field(False, description="Its judges gave different grades.")
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
    label: float | None = Field(
        None,
        ge=-1000,
        le=1000,
        description="The grade on the corpus's scale: `binary` 1 relevant, 0 not; `graded` 0 to 3. "
        "Required unless `unsure`.",
    )
    unsure: bool = Field(False, description="Unsure/skip: recorded, but no vote in the pair's aggregate.")
    note: str | None = Field(None, max_length=2000, description="Why, for the other judges.")


class JudgementOut(BaseModel):
    """The pair of the (query, document), whether the judgement added it, this judge's judgement of it,
    and the corpus's counts."""

    pair: PairOut
    created: bool = Field(description="true: a new pair; false: the existing pair was updated.")
    judgement: JudgementRecord
    counts: PairCounts


class SplitRequest(RequestModel):
    """POST /v1/corpora/{name}/pairs/split body: a deterministic split by query text."""

    dev_fraction: float = Field(0.2, gt=0.0, lt=1.0)
    seed: int = Field(0, ge=0)


class JobCreated(BaseModel):
    """202 response of POST /admin/retrain."""

    job_id: str
    status: str


class JobOut(BaseModel):
    """A job: status, progress, timings, error and log tail."""

    model_config = ConfigDict(from_attributes=True)
    id: str
    kind: Literal["retrain", "activate", "evaluate", "import", "language", "calibrate-match", "query-set"]
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


# API keys (`/admin/keys`).
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
