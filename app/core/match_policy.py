"""A corpus's match policy: how sure each decision must be, and the desk's rules around it.

`PUT /v1/corpora/{name}/match-policy` stores it (docs/guides/checked-before.md); unset fields keep these
defaults. The target precisions choose the calibrated thresholds (evaluation/decisions.py); the other
fields are rules applied at decision time.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any

from app.core.errors import InvalidInputError

# Texts shorter than this never auto-match (Meedan's Check rule): measured on the PFCC-S tweets
# (benchmarks/match_decisions.md), where auto-matches of 1-3 word queries were the ones that went wrong
# and every tweet is longer.
MIN_WORDS = 4


@dataclass(frozen=True)
class MatchPolicy:
    """The policy fields with their defaults."""

    match_precision: float = 0.95  # auto-matches must be right this often
    new_precision: float = 0.90  # "no earlier check" must be right this often
    absent_share: float = 0.5  # the share of incoming texts whose claim was never checked, expected
    min_words: int = MIN_WORDS  # shorter texts go to review at best
    review_candidates: int = 10  # candidates shown with every decision (all a decision reads)
    recency_days: int | None = None  # only documents whose `date_field` is this recent (off: None)
    date_field: str | None = None  # an ISO-date metadata field, e.g. "published"

    @classmethod
    def of(cls, stored: Mapping[str, Any] | None) -> MatchPolicy:
        """The stored policy over the defaults (keys it does not know are ignored)."""
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in (stored or {}).items() if k in known})

    def check(self) -> None:
        """InvalidInputError for a policy whose fields contradict each other."""
        if self.recency_days is not None and not self.date_field:
            raise InvalidInputError("recency_days: a recency window needs `date_field`", "recency_days")
        if self.new_precision > 0 and self.match_precision <= 0:
            raise InvalidInputError("match_precision: must be above 0", "match_precision")

    def record(self) -> dict[str, Any]:
        """The policy as stored and shown."""
        return asdict(self)
