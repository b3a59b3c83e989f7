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

    def finish(self, evaluation_id: str, status: str, **fields: Any) -> None:
        """Record how an evaluation ended (a no-op for one that was deleted or has ended already)."""
        self.session.execute(
            update(Evaluation)
            .where(Evaluation.id == evaluation_id, Evaluation.status.in_(("queued", "running")))
            .values(status=status, finished_at=utcnow(), **fields)
        )
