"""Request and response models for match decisions ("has this been checked before?"), their calibration
and a corpus's match policy."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic.json_schema import SkipJsonSchema

from app.schemas.common import NonBlankText, limited
from app.schemas.requests import MetadataFilter, RequestModel, exactly_one_of, no_nulls

Decision = Literal["match", "review", "new"]
Precision = Annotated[float, Field(ge=0.5, le=0.999)]
MetadataKey = Annotated[str, Field(pattern=r"^[A-Za-z0-9_-]{1,100}$")]


class MatchRequest(RequestModel):
    """POST /v1/corpora/{name}/match body: one `text`, or `texts` (up to the configured limit)."""

    model_config = ConfigDict(json_schema_extra=exactly_one_of(("text",), ("texts",)))
    text: NonBlankText | SkipJsonSchema[None] = None
    texts: (
        Annotated[list[NonBlankText], limited("max_texts_per_request", min_length=1)] | SkipJsonSchema[None]
    ) = None
    filter: MetadataFilter | None = None
    include_metadata: bool = Field(True, description="Return each candidate's metadata.")

    @model_validator(mode="before")
    @classmethod
    def _no_nulls(cls, data: Any) -> Any:
        return no_nulls(data, "text", "texts")

    @model_validator(mode="after")
    def _one_form(self) -> MatchRequest:
        if (self.text is None) == (self.texts is None):
            raise ValueError("give exactly one of `text` or `texts`")
        return self


class MatchCandidate(BaseModel):
    """A ranked document with the calibrated probability that it is the right match."""

    model_config = ConfigDict(from_attributes=True)
    id: str
    text: str
    rank: int = Field(description="Its place in the list `rank` serves.")
    score: float = Field(description="The first stage's score (not a probability).")
    probability: float = Field(description="The calibrated probability that it is the right match.")
    metadata: dict[str, Any] | None = Field(None, exclude_if=lambda value: value is None)


class MatchOut(BaseModel):
    """One text's decision: `match` (auto-match, no person needed), `review` or `new`."""

    text: str
    decision: Decision
    match: MatchCandidate | None = Field(description="The auto-matched document (decision `match` only).")
    candidates: list[MatchCandidate] = Field(description="The best candidates, with every decision.")
    policy: dict[str, Any] = Field(description="The corpus's policy and the thresholds it implies now.")
    model: str


class MatchBatchOut(BaseModel):
    """Every text's decision, in request order."""

    results: list[MatchOut]


class MatchPolicyIn(RequestModel):
    """A corpus's match policy; unset fields keep their value (or the default)."""

    match_precision: Precision | None = Field(None, description="Auto-matches are right this often (.95).")
    new_precision: Precision | None = Field(None, description="`new` answers are right this often (.90).")
    absent_share: Annotated[float, Field(ge=0.01, le=0.99)] | None = Field(
        None, description="The share of incoming texts whose claim was never checked, expected (.5)."
    )
    min_words: Annotated[int, Field(ge=0, le=50)] | None = Field(
        None, description="Texts with fewer words never auto-match (they go to review at best)."
    )
    review_candidates: Annotated[int, Field(ge=1, le=10)] | None = Field(
        None, description="Candidates shown with every decision (at most the 10 a decision reads)."
    )
    recency_days: Annotated[int, Field(ge=1, le=36500)] | None = Field(
        None, description="Only documents whose `date_field` is at most this many days old."
    )
    date_field: MetadataKey | None = Field(None, description="An ISO-date metadata field, e.g. `published`.")

    def changes(self) -> dict[str, Any]:
        """The fields the request set: an explicit null turns the recency window off, and keeps any
        other field as it is (those have no "off")."""
        given = self.model_dump(exclude_unset=True)
        return {k: v for k, v in given.items() if v is not None or k in ("recency_days", "date_field")}


class MatchPolicyOut(BaseModel):
    """The stored policy, and the thresholds a calibration chose for it."""

    match_precision: float
    new_precision: float
    absent_share: float
    min_words: int
    review_candidates: int
    recency_days: int | None
    date_field: str | None
    thresholds: dict[str, float] | None = Field(None, description="`match` and `new`: probabilities.")
    calibrated_for: str | None = Field(None, description="The model version the calibration holds for.")


class MatchCalibrationOut(BaseModel):
    """A corpus's match calibration: the decision model chosen, its thresholds, and what forward
    validation promises for them (precision and coverage of each decision, with their spread)."""

    model: str
    kind: str = Field(description="The decision model kept: cosine, logistic or isotonic.")
    thresholds: dict[str, float]
    report: dict[str, Any]
    kinds: dict[str, Any] = Field(description="Every decision model tried, at its own thresholds.")
    reliability: list[dict[str, float]] = Field(description="Predicted vs observed, per probability bin.")
    queries: int
    ranking: str
    policy: dict[str, Any]
    calibrated_at: str
    twin_groups: int
    curves: dict[str, list[float | None]] = Field(
        description="Forward precision and coverage of `match` (and of `new`) at each threshold on the "
        "probability (`threshold`: 0 to 1): what moving a threshold would do."
    )


class TwinsOut(BaseModel):
    """Groups of near-identical documents (the same fact-check stored twice)."""

    groups: list[list[str]]
    found_at: str | None
