"""Match decisions: "has this been checked before?" answered yes (`match`), maybe (`review`) or no (`new`).

A text is ranked exactly as `rank` serves it; the corpus's calibrated decision model
(app/usecases/calibration/match.py) gives each of the top DECISION_DEPTH results the probability that it
is the right match, and the corpus's policy turns the most probable one into a decision: an auto-match
when it reaches the threshold chosen for the policy's match precision (and the text is long enough),
`new` below the threshold chosen for its new precision, `review` between. The candidates come back with
every decision. A corpus without a calibration for the serving model is a 409 naming what to do.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from app.core.errors import InvalidInputError, NotFoundError
from app.core.limits import check_count, check_text
from app.core.match_policy import MatchPolicy
from app.db.corpus_lookup import require_corpus
from app.db.engine import transaction
from app.search.decisions import Decider, required_decider
from app.search.ranked import RankedItem
from app.search.ranking_setting import RankingRequest
from app.serving.context import ServiceContext
from app.usecases.calibration.match import calibration_png, public_report, rederived
from app.usecases.ranking import RankingService
from evaluation.decisions import DECISION_DEPTH


@dataclass(frozen=True)
class MatchResult:
    """One text's decision, its most probable candidate when it is a match, and the candidates shown."""

    text: str
    decision: str
    match: RankedItem | None
    candidates: list[RankedItem]
    policy: dict[str, Any]
    model: str


def recency_filter(policy: MatchPolicy, now: datetime | None = None) -> dict[str, Any] | None:
    """The policy's recency window as a metadata range filter, None when it is off."""
    if policy.recency_days is None or not policy.date_field:
        return None
    since = (now or datetime.now(UTC)) - timedelta(days=policy.recency_days)
    return {policy.date_field: {"gte": since.date().isoformat()}}


class MatchService:
    """Decide texts against a corpus, and keep its match policy."""

    def __init__(self, service: ServiceContext) -> None:
        self.service = service
        self.settings = service.settings

    def match(
        self,
        corpus_name: str,
        texts: Sequence[str],
        conditions: dict[str, Any] | None = None,
        include_metadata: bool = True,
    ) -> list[MatchResult]:
        """Each text's decision (at most `max_texts_per_request` texts)."""
        check_count("texts", texts, self.settings.max_texts_per_request, "texts")
        for position, text in enumerate(texts):
            check_text(self.settings, f"texts[{position}]" if len(texts) > 1 else "text", text)
        state = self.service.serving.state()
        opened = state.store.get(corpus_name)
        corpus = opened.settings
        decider = required_decider(
            corpus.match_calibration, corpus.match_policy, state.model_version, corpus_name
        )
        window = recency_filter(decider.policy)
        if window and conditions and set(window) & set(conditions):
            raise InvalidInputError(
                f"filter.{decider.policy.date_field}: the corpus's recency window already filters it",
                "filter",
            )
        merged = {**(conditions or {}), **(window or {})} or None
        ranking = RankingService(self.service)
        lists, _, _, _ = ranking.served(
            state, opened, list(texts), DECISION_DEPTH, merged, include_metadata, RankingRequest()
        )
        return [
            self._decided(decider, text, items, state.model_version)
            for text, items in zip(texts, lists, strict=True)
        ]

    @staticmethod
    def _decided(decider: Decider, text: str, items: list[RankedItem], model: str) -> MatchResult:
        scored = decider.probabilities(text, items)
        decision, best = decider.decide(text, scored)
        shown = scored[: decider.policy.review_candidates]
        return MatchResult(
            text, decision, best if decision == "match" else None, shown, decider.describe(), model
        )

    def policy(self, corpus_name: str) -> dict[str, Any]:
        """The corpus's policy (defaults where unset) and, when calibrated, its thresholds."""
        with self.service.sessions() as session:
            corpus = require_corpus(session, corpus_name)
            policy = MatchPolicy.of(corpus.match_policy).record()
            calibration = corpus.match_calibration
        if calibration:
            policy["thresholds"] = calibration["thresholds"]
            policy["calibrated_for"] = calibration.get("model")
        return policy

    def set_policy(self, corpus_name: str, changes: dict[str, Any]) -> dict[str, Any]:
        """Store the policy (unset fields keep their values); a calibrated corpus's thresholds follow the
        new targets at once (re-chosen on its stored forward outcomes, no recalibration)."""
        with transaction(self.service.sessions) as session:
            corpus = require_corpus(session, corpus_name, lock=True)
            policy = MatchPolicy.of({**(corpus.match_policy or {}), **changes})
            policy.check()
            corpus.match_policy = policy.record()
            if corpus.match_calibration:
                corpus.match_calibration = rederived(corpus.match_calibration, policy)
        return self.policy(corpus_name)

    def _stored(self, corpus_name: str) -> dict[str, Any]:
        """The corpus's stored match calibration; NotFoundError when it has none."""
        with self.service.sessions() as session:
            stored = require_corpus(session, corpus_name).match_calibration
        if not stored:
            raise NotFoundError(
                f"corpus {corpus_name!r} has no match calibration: POST .../match/calibrate", "calibration"
            )
        return stored

    def calibration(self, corpus_name: str) -> dict[str, Any]:
        """The corpus's match calibration as the API shows it; NotFoundError when it has none."""
        return public_report(self._stored(corpus_name))

    def calibration_plot(self, corpus_name: str) -> bytes:
        """The calibration's reliability and threshold curves as a PNG."""
        return calibration_png(self._stored(corpus_name))

    def twins(self, corpus_name: str) -> dict[str, Any]:
        """The corpus's groups of near-identical documents, as its last calibration found them."""
        with self.service.sessions() as session:
            calibration = require_corpus(session, corpus_name).match_calibration or {}
        return {"groups": calibration.get("twins", []), "found_at": calibration.get("calibrated_at")}
