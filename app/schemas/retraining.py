"""POST /admin/retrain's body: the training choices, the dev set, hard negatives and the re-ranker the job
may train beside the bi-encoder (docs/guides/fine-tuning.md)."""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field, JsonValue, StrictBool, model_validator

from app.schemas.admin import PairIn
from app.schemas.common import CorpusName, JsonObject
from app.schemas.evaluations import MetricName
from app.schemas.ranking import RerankDepth, RerankWeight
from app.schemas.requests import RequestModel
from indexes.rerank import DEFAULT_RERANK_K

DEFAULT_STACK_WEIGHT = 0.5  # benchmarks/forward.md: the cross-encoder blended half and half beat it alone


class RetrainRerankerIn(RequestModel):
    """Train a cross-encoder re-ranker beside the bi-encoder; the gate compares the active pipeline, the
    new bi-encoder and the new bi-encoder with the new re-ranker, and activates the best as one unit."""

    enabled: StrictBool = Field(True, description="`false`: train the bi-encoder alone.")
    base_model: str | None = Field(
        None,
        min_length=1,
        max_length=1000,
        description="The weights the cross-encoder starts from (a registered version, a folder or a hub "
        "name; a pre-trained cross-encoder is the better start where one is at hand). Default: the "
        "bi-encoder's base model, with a new scoring head.",
    )
    epochs: int | None = Field(None, ge=1, le=20, description="Default 2.")
    learning_rate: float | None = Field(None, gt=0.0, le=1.0, description="Default 2e-5.")
    negatives: int | None = Field(
        None,
        ge=1,
        le=32,
        description="Per positive: its judged non-relevant documents first, then mined ones (default 7).",
    )
    k: RerankDepth = Field(DEFAULT_RERANK_K, description="How many of the first stage's best it re-orders.")
    weight: RerankWeight = Field(
        DEFAULT_STACK_WEIGHT,
        description="The cross-encoder's share of the blend with the first stage (1: its order alone).",
    )


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
# A re-ranker is gated on the dev set: with one trained, `cross_validation` is not `always`.
_RETRAIN_RULES: dict[str, JsonValue] = {
    "allOf": [
        {
            "if": {"required": ["loss"], "properties": {"loss": {"not": {"enum": ["bsc", None]}}}},
            "then": {"properties": {"hard_negatives": {"type": "null"}}},
        },
        {
            "if": {
                "required": ["reranker"],
                "properties": {"reranker": {"type": "object", "properties": {"enabled": {"const": True}}}},
            },
            "then": {"properties": {"cross_validation": {"not": {"const": "always"}}}},
        },
    ]
}


class RetrainRequest(RequestModel):
    """POST /admin/retrain body; everything has a default (docs/guides/fine-tuning.md)."""

    model_config = ConfigDict(json_schema_extra=_RETRAIN_RULES)
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
        "(default) when the dev set has fewer than 200 queries, the fold models' training stays within "
        "20,000 pair-epochs (a few thousand pairs: larger corpora have dev sets of hundreds of pairs) and "
        "the pairs hold at least 2 judged queries per block; only when the base model is the active one.",
    )
    folds: int | None = Field(
        None, ge=2, le=10, description="Forward blocks (cut points) of a cross-validated gate (default 5)."
    )
    hard_negatives: HardNegativesIn | None = Field(
        None,
        description="BSC only: mine hard negatives from the corpus's documents (default: one per pair, "
        "mined once, for claim corpora; off for other kinds; null: off).",
    )
    reranker: RetrainRerankerIn | None = Field(
        None,
        description="Also train a cross-encoder re-ranker on the same pairs; the gate then compares the "
        "active pipeline, the new bi-encoder and the new bi-encoder re-ranked by the new cross-encoder on "
        "the dev queries, and activates the best beyond the noise band as one unit (a rollback takes "
        "both back). Omitted: the defaults table's choice for the corpus's pairs; null: off.",
    )
