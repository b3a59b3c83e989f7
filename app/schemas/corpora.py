"""Request and response models for corpora and documents."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from app.schemas.common import (
    CorpusLanguage,
    CorpusName,
    Description,
    DocumentId,
    LanguageCode,
    Metadata,
    NonBlankText,
    limited,
)
from app.schemas.ranking import RankingModeName, RankingUsed, RerankStage
from app.schemas.requests import RequestModel
from app.schemas.workbench import JudgementScale
from indexes.fusion_defaults import DEFAULT_ALPHA

CorpusKind = Literal["claim", "answer", "question"]
Storage = Literal["vector", "halfvec", "bit"]


def storage_field() -> Any:
    """The pgvector store's `storage` option (the Faiss store ignores it)."""
    return Field(
        "vector",
        description="pgvector: the HNSW graph over float32 (vector), float16 (halfvec: half the bytes) or "
        "binary-quantized (bit: one bit per dimension; raise ef_search) copies; halfvec and bit need "
        "pgvector >= 0.7 and re-score their candidates from the stored float32 vectors.",
    )


class AutoIndex(RequestModel):
    """Exact search below 200,000 documents, IVF above (the default)."""

    type: Literal["auto"]
    storage: Storage = storage_field()


class FlatIndex(RequestModel):
    """Exact search at any size."""

    type: Literal["flat"]


class HnswIndex(RequestModel):
    """Faiss HNSW: a graph over the vectors."""

    type: Literal["hnsw"]
    m: int = Field(32, ge=4, le=128, description="Links per node.")
    ef_construction: int = Field(80, ge=8, le=1024, description="Build beam width.")
    ef_search: int = Field(96, ge=8, le=4096, description="Search beam width (at least k).")
    storage: Storage = storage_field()


class IvfIndex(RequestModel):
    """Faiss IVF: vectors in lists around centroids, a few lists searched per query."""

    type: Literal["ivf"]
    nlist: int | None = Field(None, ge=1, le=262144, description="Lists (default about 4 sqrt(n)).")
    nprobe: int = Field(32, ge=1, le=65536, description="Lists visited per query.")
    compression: Literal["none", "sq8", "pq", "pq4"] = Field(
        "none",
        description="Vector compression in the lists: sq8 (a byte a dimension), pq (8-bit product "
        "quantization), pq4 (4-bit codes scanned with SIMD lookups: the fastest scan, give refine 1000+).",
    )
    pq_m: Literal[8, 16, 32, 48, 64, 96] = Field(
        48,
        description="pq/pq4: code bytes per vector (pq: that many 8-bit sub-quantizers, pq4: twice as many "
        "4-bit ones; the largest divisor of the dimension at most that count is used).",
    )
    refine: int = Field(
        0,
        ge=0,
        le=4096,
        description="sq8/pq/pq4: candidates re-scored exactly from float16 vectors on disk (0: off; sq8 100, "
        "pq 200, pq4 1000-4000).",
    )
    storage: Storage = storage_field()


IndexSpecIn = Annotated[AutoIndex | FlatIndex | HnswIndex | IvfIndex, Field(discriminator="type")]


class CorpusRanking(RequestModel):
    """How a corpus ranks until a ranking calibration for the serving model exists."""

    mode: RankingModeName = Field(description="`dense`, `lexical` (BM25) or `hybrid` (both, fused).")
    alpha: float = Field(
        DEFAULT_ALPHA, ge=0, le=1, description="`hybrid` with linear fusion: the lexical weight."
    )
    fusion: Literal["linear", "rrf"] = Field("linear", description="`hybrid`: linear mix or `rrf`.")
    rerank: RerankStage | None = Field(
        None,
        description="A re-ranking stage (needs an admin key): a registered cross-encoder re-orders the top "
        "k of every rank call, whatever the calibration. Omitted: none.",
    )


class CorpusCreate(RequestModel):
    """POST /v1/corpora body."""

    name: CorpusName
    kind: CorpusKind
    description: Description | None = None
    index: IndexSpecIn | None = Field(None, description="Search structure; omitted: automatic by size.")
    ranking: CorpusRanking | None = Field(
        None,
        description="Ranking until calibrated; omitted: the kind's default (`claim`: hybrid, "
        f"alpha {DEFAULT_ALPHA:g}; "
        "`answer`, `question`: dense).",
    )
    language: CorpusLanguage = Field(
        "en",
        description="The language its texts are analysed in (BM25's stop words and stemmer, and queries "
        "unless a request names another), or `multi`: each document in its own, given or detected.",
    )
    judgement_scale: JudgementScale = Field(
        "binary", description="What its judges grade on: `binary` (0/1) or `graded` (0 to 3, for nDCG)."
    )


class CorpusLanguageChange(RequestModel):
    """PUT /v1/corpora/{name}/language body."""

    language: CorpusLanguage


class CorpusOut(BaseModel):
    """A corpus with its document count (built from the corpus row)."""

    model_config = ConfigDict(from_attributes=True)
    name: str
    kind: str
    description: str | None
    document_count: int
    language: str = Field(
        "en", description="ISO 639-1 code its texts are analysed in, or `multi` (each document in its own)."
    )
    judgement_scale: str = Field("binary", description="What its judges grade on: `binary` or `graded`.")
    created_at: datetime
    updated_at: datetime
    duplicate_threshold: float | None = Field(None, description="Calibrated duplicate threshold, if any.")
    threshold_model: str | None = Field(
        None, description="The model version the threshold was calibrated with."
    )
    index: dict[str, Any] | None = Field(
        None,
        validation_alias=AliasChoices("index_spec", "index"),
        description="The index spec given at creation (null: auto).",
    )
    ranking: RankingUsed | None = Field(
        None,
        validation_alias=AliasChoices("default_ranking", "ranking"),
        description="Ranking until a calibration for the serving model exists (null: dense).",
    )


class LexicalStatus(BaseModel):
    """The corpus's BM25 index in this worker."""

    documents: int
    language: str = Field(
        "en", description="The language it analyses in (during a change of language: the previous one)."
    )
    high_water_mark: int = Field(description="Last change-log sequence number applied.")


class IndexStatus(BaseModel):
    """GET /v1/corpora/{name}/index: this worker's index of the corpus for the serving model."""

    model: str
    store: str = Field("faiss", description="faiss (this worker's index) or pgvector (rows in PostgreSQL).")
    spec: dict[str, Any]
    structure: str = Field(description="What is built now: flat, hnsw or ivf.")
    storage: str | None = Field(
        None,
        description="pgvector: what the HNSW graph holds, vector, halfvec or bit (null: the Faiss store).",
    )
    size: int = Field(description="Documents in the index.")
    dimension: int
    mapped_bytes: int = Field(description="Snapshot vectors mapped read-only (shared between workers).")
    memory_bytes: int = Field(description="Vectors written since the snapshot, held by this worker.")
    last_checkpoint: datetime | None
    checkpoint_seconds: float | None
    high_water_mark: int = Field(description="Last change-log sequence number applied.")
    corpus_change_seq: int = Field(description="Last change-log sequence number of the corpus.")
    changes_since_checkpoint: int
    recall_at_10: float | None = Field(
        description="Against exact search, measured when the ANN structure was last built or folded (an "
        "appending checkpoint that adds a tail beside the IVF lists keeps it; ANN only; 1.0 exact)."
    )
    lexical: LexicalStatus = Field(description="The BM25 index kept beside the vectors.")
    database_bytes: int | None = Field(None, description="pgvector: size of the corpus's HNSW index.")


class CorpusList(BaseModel):
    """GET /v1/corpora response."""

    corpora: list[CorpusOut]


class DocumentIn(RequestModel):
    """One document to insert or update."""

    id: DocumentId
    text: NonBlankText
    metadata: Metadata | None = Field(
        None, description="Replaces the stored metadata when given; kept as it is when omitted."
    )
    language: LanguageCode | None = Field(
        None,
        description="Its language: in a `multi` corpus, detected from the text when omitted; in a corpus of "
        "one language, the corpus's (another is refused).",
    )


class DocumentsUpsert(RequestModel):
    """POST /v1/corpora/{name}/documents body."""

    documents: list[DocumentIn] = limited("max_documents_per_request", min_length=1)


class UpsertOut(BaseModel):
    """What an upsert did."""

    model_config = ConfigDict(from_attributes=True)
    inserted: int
    updated: int
    unchanged: int
    document_count: int
    model: str


class DocumentOut(BaseModel):
    """A stored document (built from the document row)."""

    model_config = ConfigDict(from_attributes=True)
    id: str = Field(validation_alias=AliasChoices("external_id", "id"))
    text: str
    metadata: dict[str, Any] | None = Field(validation_alias=AliasChoices("meta", "metadata"))
    language: str | None = Field(
        None, description="Its own language (`multi` corpora: given or detected); null: the corpus's."
    )
    created_at: datetime
    updated_at: datetime


class DocumentPage(BaseModel):
    """GET /v1/corpora/{name}/documents: a page, and the cursor of the next one (null at the end)."""

    documents: list[DocumentOut]
    next_cursor: int | None = Field(description="Pass as `cursor` for the next page; null at the end.")
