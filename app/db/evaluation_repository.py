"""SQL for evaluation records."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from app.db.models import Evaluation, utcnow


class EvaluationRepository:
    """Queries on the evaluations table."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def add(
        self, evaluation_id: str, name: str | None, corpus: str | None, mode: str, request: dict[str, Any]
    ) -> Evaluation:
        """Record a queued evaluation."""
        row = Evaluation(
            id=evaluation_id, name=name, status="queued", corpus_name=corpus, mode=mode, request=request
        )
        self.session.add(row)
        self.session.flush()
        return row

    def get(self, evaluation_id: str) -> Evaluation | None:
        """One evaluation by id."""
        return self.session.get(Evaluation, evaluation_id)

    def list_recent(self, limit: int) -> list[Evaluation]:
        """The newest evaluations first."""
        return list(
            self.session.scalars(select(Evaluation).order_by(Evaluation.created_at.desc()).limit(limit))
        )

    def fail_unfinished(self, reason: str) -> int:
        """Mark evaluations a previous process left queued or running as failed; returns how many."""
        result = self.session.execute(
            update(Evaluation)
            .where(Evaluation.status.in_(("queued", "running")))
            .values(status="failed", error=reason, finished_at=utcnow())
        )
        return int(result.rowcount or 0)  # type: ignore[attr-defined]
