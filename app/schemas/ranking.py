"""Request and response models for ranking, duplicates and similarity."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from app.schemas.common import DocumentId, NonBlankText, Threshold, TopK


class CorpusRankRequest(BaseModel):
    """POST /v1/corpora/{name}/rank body."""

    model_config = ConfigDict(extra="forbid")
    query: NonBlankText
    k: TopK = 10
    candidates: list[DocumentId] | None = Field(None, min_length=1)


class TextRankRequest(BaseModel):
    """POST /v1/rank body."""

    model_config = ConfigDict(extra="forbid")
    query: NonBlankText
    documents: list[NonBlankText] = Field(min_length=1)
    k: TopK = 10


class RankedOut(BaseModel):
    """One ranked result."""

    id: str | int
    text: str
    score: float
    rank: int


class RankResponse(BaseModel):
    """Ranked results and the model version that produced them."""

    results: list[RankedOut]
    model: str


class DuplicateText(BaseModel):
    """A text to check, optionally with the id of the document it is (never matched to itself)."""

    model_config = ConfigDict(extra="forbid")
    id: DocumentId | None = None
    text: NonBlankText


class DuplicatesRequest(BaseModel):
    """POST /v1/corpora/{name}/duplicates body: exactly one of text, texts or ids."""

    model_config = ConfigDict(extra="forbid")
    text: NonBlankText | None = None
    texts: list[NonBlankText | DuplicateText] | None = Field(None, min_length=1)
    ids: list[DocumentId] | None = Field(None, min_length=1, description="Check stored documents by id.")
    threshold: Threshold | None = None
    k: TopK = 10

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


class DuplicatesResponse(BaseModel):
    """Duplicates of every input, the threshold used and the model version."""

    results: list[DuplicateResult]
    threshold: float
    threshold_source: Literal["request", "corpus", "default"] = Field(
        description="request: given in the body; corpus: calibrated for this model; default: the setting."
    )
    model: str


class TextPair(BaseModel):
    """Two texts to compare."""

    model_config = ConfigDict(extra="forbid")
    a: NonBlankText
    b: NonBlankText


class SimilarityRequest(BaseModel):
    """POST /v1/similarity body: either `pairs`, or `source` with `targets`."""

    model_config = ConfigDict(extra="forbid")
    pairs: list[TextPair] | None = Field(None, min_length=1)
    source: NonBlankText | None = None
    targets: list[NonBlankText] | None = Field(None, min_length=1)

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
