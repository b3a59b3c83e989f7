"""Request and response models for ranking, duplicates and similarity."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic.json_schema import SkipJsonSchema

from app.schemas.common import (
    DocumentId,
    LanguageCode,
    NonBlankText,
    StrictBool,
    Threshold,
    TopK,
    limited,
)
from app.schemas.requests import MetadataFilter, RequestModel, exactly_one_of, no_nulls
from indexes.fusion_defaults import DEFAULT_ALPHA
from indexes.rerank import DEFAULT_RERANK_K, MAX_RERANK_K

RankingModeName = Literal["dense", "lexical", "hybrid"]


class RankingOptions(RequestModel):
    """How a corpus is ranked (docs/concepts/ranking.md); unset fields take the corpus's calibration."""

    mode: RankingModeName | None = Field(
        None,
        description="`dense` (the bi-encoder), `lexical` (BM25) or `hybrid` (both, fused). Default: the "
        "corpus's calibrated mode for the serving model, else `dense`.",
    )
    alpha: float | None = Field(
        None,
        ge=0,
        le=1,
        description="`hybrid` with linear fusion: the lexical side's weight after min-max normalising each "
        f"side per query (0: dense only, 1: lexical only). Default: calibrated, else {DEFAULT_ALPHA:g}.",
    )
    fusion: Literal["linear", "rrf"] | None = Field(
        None, description="`hybrid`: normalised linear mix (`linear`) or reciprocal-rank fusion (`rrf`)."
    )


class LanguageOptions(RequestModel):
    """A request's languages (docs/concepts/languages.md), taken by every request that matches texts."""

    language: LanguageCode | None = Field(
        None,
        description="The language of the query (of every text): it is analysed in it, and `same_language` "
        "keeps documents in it. Default: the corpus's; in a `multi` corpus, detected per text.",
    )
    same_language: StrictBool = Field(
        False,
        description="Only documents in the query's language: in a corpus of one language all of them or "
        "none, in a `multi` corpus those whose own language it is (a query whose language cannot be told "
        "is not restricted).",
    )


class QueryLanguageOut(BaseModel):
    """The language a query (a text) was analysed in, and where it came from."""

    model_config = ConfigDict(from_attributes=True)
    code: str | None = Field(description="ISO 639-1; null: it could not be told (no letter in the text).")
    source: Literal["request", "corpus", "detected"] = Field(
        description="request: named in the body; corpus: the corpus's; detected: from the text."
    )
    confidence: float | None = Field(
        None,
        description="detected: the detector's confidence (0..1).",
        exclude_if=lambda value: value is None,
    )


RerankDepth = Annotated[
    int,
    Field(
        ge=1,
        le=MAX_RERANK_K,
        description=f"How many of the first stage's best the cross-encoder "
        f"re-orders (1..{MAX_RERANK_K}); below them nothing moves.",
    ),  # fmt: skip
]
RerankWeight = Annotated[
    float,
    Field(
        ge=0,
        le=1,
        description="The cross-encoder's share of the order within the top k, blended with the "
        "first stage's score (each min-max scaled over the k); 1: the cross-encoder's order alone.",
    ),  # fmt: skip
]
ModelVersionName = Annotated[str, Field(min_length=1, max_length=300)]


class RerankStage(RequestModel):
    """A corpus's re-ranking stage: a registered cross-encoder re-orders the first stage's top k."""

    model: ModelVersionName = Field(
        description="A registered cross-encoder version (GET /admin/models, `kind`; needs an admin key)."
    )
    k: RerankDepth = DEFAULT_RERANK_K
    weight: RerankWeight = 1.0


class RerankOptions(RequestModel):
    """A query's re-ranking: unset fields take the corpus's stage (README, "Re-ranking")."""

    enabled: StrictBool = Field(True, description="`false`: rank without the corpus's re-ranking stage.")
    model: ModelVersionName | None = Field(
        None, description="A registered cross-encoder version (needs an admin key). Default: the corpus's."
    )
    k: RerankDepth | None = None
    weight: RerankWeight | None = None


class CorpusRankRequest(RankingOptions, LanguageOptions):
    """POST /v1/corpora/{name}/rank body."""

    query: NonBlankText
    k: TopK = 10
    filter: MetadataFilter | None = None
    include_metadata: bool = Field(False, description="Return each result's metadata.")
    candidates: list[DocumentId] | None = limited("max_candidates_per_request", None, min_length=1)
    rerank: RerankOptions | None = Field(
        None, description="Re-rank the top k with a cross-encoder; default: the corpus's stage, if any."
    )


class TextRankRequest(RequestModel):
    """POST /v1/rank body."""

    query: NonBlankText
    documents: list[NonBlankText] = limited("max_documents_per_request", min_length=1)
    k: TopK = 10


class RankedOut(BaseModel):
    """One ranked result."""

    id: str | int
    text: str
    score: float
    rank: int
    metadata: dict[str, Any] | None = Field(
        None, description="With `include_metadata` only.", exclude_if=lambda value: value is None
    )
    dense_score: float | None = Field(
        None, description="`lexical`/`hybrid`: the cosine.", exclude_if=lambda value: value is None
    )
    lexical_score: float | None = Field(
        None, description="`lexical`/`hybrid`: the BM25 score.", exclude_if=lambda value: value is None
    )
    rerank_score: float | None = Field(
        None,
        description="Re-ranked results (the top k): the cross-encoder's score; `score` is the first stage's.",
        exclude_if=lambda value: value is None,
    )
    probability: float | None = Field(
        None,
        description="A corpus calibrated for the serving model (POST .../match/calibrate): the calibrated "
        "probability that this is the right match for the query (the top 10 results).",
        exclude_if=lambda value: value is None,
    )


class RerankUsed(BaseModel):
    """The re-ranking stage a ranking used (or a corpus holds)."""

    model_config = ConfigDict(from_attributes=True)
    model: str = Field(description="The cross-encoder version.")
    k: int = Field(description="How many of the first stage's best it re-ordered.")
    weight: float = Field(description="Its share of the order (1: its order alone).")


class RankingUsed(BaseModel):
    """The ranking a corpus request used (from the request, the corpus's calibration or its default)."""

    model_config = ConfigDict(from_attributes=True)
    mode: RankingModeName
    alpha: float = Field(description="`hybrid` with linear fusion: the lexical weight.")
    fusion: Literal["linear", "rrf"]
    rerank: RerankUsed | None = Field(
        None, description="The re-ranking stage, when one ran.", exclude_if=lambda value: value is None
    )


class RankResponse(BaseModel):
    """Ranked results and the model version that produced them."""

    results: list[RankedOut]
    model: str
    ranking: RankingUsed | None = Field(
        None, description="Corpus rankings: how it ranked.", exclude_if=lambda value: value is None
    )
    language: QueryLanguageOut | None = Field(
        None,
        description="Corpus rankings: the language the query was analysed in.",
        exclude_if=lambda value: value is None,
    )


class DuplicateText(RequestModel):
    """A text to check, optionally with the id of the document it is (never matched to itself)."""

    id: DocumentId | None = None
    text: NonBlankText


class DuplicatesRequest(RankingOptions, LanguageOptions):
    """POST /v1/corpora/{name}/duplicates body: exactly one of text, texts or ids."""

    model_config = ConfigDict(json_schema_extra=exactly_one_of(("text",), ("texts",), ("ids",)))
    text: NonBlankText | SkipJsonSchema[None] = None
    texts: (
        Annotated[list[NonBlankText | DuplicateText], limited("max_texts_per_request", min_length=1)]
        | SkipJsonSchema[None]
    ) = None
    ids: (
        Annotated[
            list[DocumentId],
            limited("max_texts_per_request", min_length=1, description="Check stored documents by id."),
        ]
        | SkipJsonSchema[None]
    ) = None
    threshold: Threshold | None = None
    k: TopK = 10
    filter: MetadataFilter | None = None
    include_metadata: bool = Field(False, description="Return each duplicate's metadata.")

    @model_validator(mode="before")
    @classmethod
    def _no_nulls(cls, data: Any) -> Any:
        return no_nulls(data, "text", "texts", "ids")

    @model_validator(mode="after")
    def _exactly_one_input(self) -> DuplicatesRequest:
        given = [name for name in ("text", "texts", "ids") if getattr(self, name) is not None]
        if len(given) != 1:
            raise ValueError("give exactly one of `text`, `texts` or `ids`")
        return self


class DuplicateResult(BaseModel):
    """Duplicates of one input text."""

    text: str
    id: str | None
    duplicates: list[RankedOut]
    language: QueryLanguageOut | None = Field(None, description="The language the text was analysed in.")


class DuplicatesResponse(BaseModel):
    """Duplicates of every input, the threshold used and the model version."""

    results: list[DuplicateResult]
    threshold: float = Field(description="What each duplicate reached: see `threshold_on`.")
    threshold_source: Literal["request", "corpus", "default", "policy"] = Field(
        description="request: given in the body; corpus: calibrated for this model; default: the setting; "
        "policy: the corpus's match policy decides (its auto-match threshold on the calibrated probability)."
    )
    threshold_on: Literal["cosine", "probability"] = Field(
        "cosine", description="Whether `threshold` applies to the cosine or to the calibrated probability."
    )
    model: str
    ranking: RankingUsed = Field(description="How the candidates were ranked.")


class TextPair(RequestModel):
    """Two texts to compare."""

    a: NonBlankText
    b: NonBlankText


class SimilarityRequest(RequestModel):
    """POST /v1/similarity body: either `pairs`, or `source` with `targets`."""

    model_config = ConfigDict(json_schema_extra=exactly_one_of(("pairs",), ("source", "targets")))
    pairs: (
        Annotated[list[TextPair], limited("max_pairs_per_request", min_length=1)] | SkipJsonSchema[None]
    ) = None
    source: NonBlankText | SkipJsonSchema[None] = None
    targets: (
        Annotated[list[NonBlankText], limited("max_pairs_per_request", min_length=1)] | SkipJsonSchema[None]
    ) = None

    @model_validator(mode="before")
    @classmethod
    def _no_nulls(cls, data: Any) -> Any:
        return no_nulls(data, "pairs", "source", "targets")

    @model_validator(mode="after")
    def _one_form(self) -> SimilarityRequest:
        if self.pairs is not None and (self.source is not None or self.targets is not None):
            raise ValueError("give either `pairs` or `source` with `targets`, not both")
        if self.pairs is None and (self.source is None or self.targets is None):
            raise ValueError("give `pairs`, or both `source` and `targets`")
        return self


class SimilarityResponse(BaseModel):
    """Cosine similarity per pair (or per target), in request order."""

    scores: list[float]
    model: str
