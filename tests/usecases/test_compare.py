"""Which queries a comparison scores: those with a relevant stored document, graded by the one rule,
the most recently judged first (a re-judged query counts as judged when it was last changed)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from app.db.admin_models import TrainingPair
from app.usecases.compare import judged_queries

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def pair(query: str, doc: str | None, label: float, minute: int, changed: int | None = None) -> TrainingPair:
    """A stored pair judged at minute `minute` (and changed at `changed`)."""
    return TrainingPair(
        query=query, document_id=doc, document=None if doc else "inline text", label=label,
        created_at=T0 + timedelta(minutes=minute),
        updated_at=T0 + timedelta(minutes=changed) if changed is not None else None,
    )  # fmt: skip


def test_judged_queries() -> None:
    pairs = [
        pair("a", "d1", 1, 0),
        pair("a", "d2", 0.4, 1),  # rounds to 0: not relevant
        pair("b", "d2", 2, 2),  # graded: keeps its grade
        pair("c", "d3", 0, 3),  # no relevant document
        pair("d", None, 1, 4),  # an inline document: not in the corpus
        pair("e", "gone", 1, 5),  # a document since deleted
        pair("f", "d1", 1, 6),
        pair("a", "d3", 1, 2, changed=9),  # re-judged last: `a` is the most recent query
    ]
    judged = judged_queries(pairs, {"d1", "d2", "d3"})
    assert list(judged) == ["a", "f", "b"]
    assert judged["a"] == {"d1": 1, "d2": 0, "d3": 1} and judged["b"] == {"d2": 2}
