"""Decide incoming texts against every corpus an inbox follows: each corpus ranks them as `/match` does
(its calibrated policy turns the best into match / review / new); the most confident corpus decides. A
corpus with no calibration for the serving model still lists its nearest documents, undecided."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from app.search.decisions import Decider
from app.search.ranked import RankedItem
from app.search.ranking_setting import RankingRequest
from app.serving.context import ServiceContext
from app.serving.state import ServingState
from app.usecases.matching import recency_filter
from app.usecases.ranking import RankingService
from evaluation.decisions import DECISION_DEPTH

UNDECIDED_CANDIDATES = 3
DECISION_ORDER = {"match": 3, "review": 2, "new": 1, None: 0}


@dataclass(frozen=True)
class Decided:
    """One text's decision across the corpora, its match and the candidates shown (as records)."""

    decision: str | None
    probability: float | None
    match: dict[str, Any] | None
    candidates: list[dict[str, Any]] = field(default_factory=list)

    def beats(self, other: Decided) -> bool:
        """True when this decision is more confident than `other` (a higher decision, then probability)."""
        mine = (DECISION_ORDER[self.decision], self.probability or 0.0)
        return mine > (DECISION_ORDER[other.decision], other.probability or 0.0)

    def record(self) -> dict[str, Any]:
        """What a cluster or an item stores."""
        return {"decision": self.decision, "probability": self.probability, "match": self.match,
                "candidates": self.candidates}  # fmt: skip


def candidate(corpus: str, item: RankedItem) -> dict[str, Any]:
    """A ranked document as an inbox shows it (the fields of `/match`'s candidates, and its corpus)."""
    probability = None if item.probability is None else round(float(item.probability), 6)
    return {"corpus": corpus, "id": str(item.id), "text": item.text, "rank": item.rank,
            "score": round(float(item.score), 6), "probability": probability}  # fmt: skip


def decide_texts(
    service: ServiceContext,
    state: ServingState,
    corpora: Sequence[str],
    texts: Sequence[str],
    vectors: np.ndarray,
    rejected: Sequence[set[str]] | None = None,
) -> list[Decided]:
    """Each text's decision (vectors: the texts encoded by `state`'s model; `rejected`: per text, the
    `corpus/id` of candidates the desk rejected for it, never matched again)."""
    if not texts:
        return []
    per_text: list[list[tuple[Decided, list[dict[str, Any]]]]] = [[] for _ in texts]
    ranking = RankingService(service)
    for name in corpora:
        opened = state.store.get(name)
        settings = opened.settings
        decider = Decider.of(settings.match_calibration, settings.match_policy, state.model_version)
        window = recency_filter(decider.policy) if decider is not None else None
        lists = ranking.served(
            state, opened, list(texts), DECISION_DEPTH, window, False, RankingRequest(), vectors=vectors
        )[0]
        for position, (text, items) in enumerate(zip(texts, lists, strict=True)):
            refused = rejected[position] if rejected else set()
            items = [item for item in items if f"{name}/{item.id}" not in refused]
            per_text[position].append(_decided(decider, name, text, items))
    return [_best(choices) for choices in per_text]


def _decided(
    decider: Decider | None, corpus: str, text: str, items: list[RankedItem]
) -> tuple[Decided, list[dict[str, Any]]]:
    if decider is None:
        shown = [candidate(corpus, item) for item in items[:UNDECIDED_CANDIDATES]]
        return Decided(None, None, None, shown), shown
    scored = decider.probabilities(text, items)
    decision, best = decider.decide(text, scored)
    shown = [candidate(corpus, item) for item in scored[: decider.policy.review_candidates]]
    probability = float(best.probability or 0.0) if best is not None else 0.0
    chosen = candidate(corpus, best) if decision == "match" and best is not None else None
    return Decided(decision, round(probability, 6), chosen, shown), shown


def _best(choices: list[tuple[Decided, list[dict[str, Any]]]]) -> Decided:
    best = choices[0][0]
    for decided, _ in choices[1:]:
        if decided.beats(best):
            best = decided
    if len(choices) == 1:
        return best
    shown = sorted(
        (c for _, listed in choices for c in listed),
        key=lambda c: (-(c["probability"] or 0.0), -c["score"]),
    )
    return Decided(best.decision, best.probability, best.match, shown[: max(len(c) for _, c in choices)])
