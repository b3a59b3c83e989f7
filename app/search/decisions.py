"""Match decisions on a served list: the corpus's calibrated decision model (evaluation/decisions.py)
gives each ranked document the probability that it is the right match, and its thresholds and policy
turn the best one into `match`, `review` or `new` (docs/guides/checked-before.md)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from app.core.errors import ConflictError
from app.core.match_policy import MatchPolicy
from app.search.ranked import RankedItem
from evaluation.decision_features import Candidate, candidate_features
from evaluation.decisions import DecisionModel, Thresholds, decide, top_of


@dataclass(frozen=True)
class Decider:
    """A corpus's calibrated decision: its model, thresholds and policy, for one serving model."""

    model: DecisionModel
    thresholds: Thresholds
    policy: MatchPolicy
    version: str  # the serving model version it was calibrated with

    @classmethod
    def of(
        cls, calibration: Mapping[str, Any] | None, policy: Mapping[str, Any] | None, model: str
    ) -> Decider | None:
        """The corpus's decider for `model`, None when it has no calibration for it."""
        if not calibration or calibration.get("model") != model:
            return None
        thresholds = calibration["thresholds"]
        return cls(
            DecisionModel.from_dict(calibration["decision"]),
            Thresholds(float(thresholds["match"]), float(thresholds["new"])),
            MatchPolicy.of(policy),
            model,
        )

    def probabilities(self, query: str, items: Sequence[RankedItem]) -> list[RankedItem]:
        """The items with their probabilities (features over the list as served)."""
        listed = [
            Candidate(str(item.id), item.text, item.rank, item.cosine, item.lexical_score or 0.0)
            for item in items
        ]
        values = self.model.probabilities(candidate_features(query, listed))
        return [replace(item, probability=float(p)) for item, p in zip(items, values, strict=True)]

    def decide(self, query: str, items: Sequence[RankedItem]) -> tuple[str, RankedItem | None]:
        """(decision, the most probable item) of items that carry their probabilities."""
        best = top_of([item.probability or 0.0 for item in items])
        if best < 0:
            return "new", None
        chosen = items[best]
        long_enough = len(query.split()) >= self.policy.min_words
        return decide(chosen.probability or 0.0, self.thresholds, long_enough), chosen

    def describe(self) -> dict[str, Any]:
        """The policy with the thresholds it implies now (what a match response shows)."""
        return {
            **self.policy.record(),
            "thresholds": {"match": self.thresholds.match, "new": self.thresholds.new},
        }


def required_decider(
    calibration: Mapping[str, Any] | None, policy: Mapping[str, Any] | None, model: str, corpus: str
) -> Decider:
    """The corpus's decider for the serving model; 409 naming what to do when there is none."""
    decider = Decider.of(calibration, policy, model)
    if decider is not None:
        return decider
    if calibration:
        raise ConflictError(
            f"corpus {corpus!r} was calibrated for model {calibration.get('model')}, not the serving "
            f"{model}: calibrate again (POST /v1/corpora/{corpus}/match/calibrate)",
            "calibration",
        )
    raise ConflictError(
        f"corpus {corpus!r} has no match calibration: judge some queries (PUT .../pairs/judgement or POST "
        f".../pairs), then POST /v1/corpora/{corpus}/match/calibrate",
        "calibration",
    )
