"""SQL for a corpus's training pairs (judged query-document pairs)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import case, func, select
from sqlalchemy.orm import Session

from app.core.text_hash import text_sha256
from app.db.admin_models import TrainingPair
from app.db.models import Corpus, utcnow
from app.db.repositories.corpora import writer_turn
from app.db.workbench_models import PairJudgement


class PairRepository:
    """Training pairs of one corpus."""

    def __init__(self, session: Session, corpus_id: int) -> None:
        self.session = session
        self.corpus_id = corpus_id

    def add_many(self, rows: Sequence[dict[str, Any]]) -> list[TrainingPair]:
        """Insert pairs ({query, document_id | document, label, split, judged_by}), each with its one
        judgement (by `judged_by`, `unknown` if none); returns them with ids."""
        pairs = [
            TrainingPair(corpus_id=self.corpus_id, query_sha256=text_sha256(r["query"]), **r) for r in rows
        ]
        self.session.add_all(pairs)
        self.session.flush()
        self.session.add_all(
            PairJudgement(
                corpus_id=self.corpus_id,
                pair_id=pair.id,
                judged_by=pair.judged_by or "unknown",
                grade=pair.label,
                created_at=pair.created_at or utcnow(),
            )
            for pair in pairs
        )
        self.session.flush()
        return pairs

    def list(
        self, split: str | None = None, offset: int = 0, limit: int | None = None, query: str | None = None
    ) -> list[TrainingPair]:
        """Labeled pairs (not those every judge was unsure of) in insertion order, optionally of one split,
        or of one query text."""
        statement = select(TrainingPair).where(
            TrainingPair.corpus_id == self.corpus_id, TrainingPair.label.is_not(None)
        )
        if split is not None:
            statement = statement.where(TrainingPair.split == split)
        if query is not None:
            statement = statement.where(
                TrainingPair.query_sha256 == text_sha256(query), TrainingPair.query == query
            )
        statement = statement.order_by(TrainingPair.id).offset(offset)
        if limit is not None:
            statement = statement.limit(limit)
        return list(self.session.scalars(statement))

    def take_writer_turn(self) -> None:
        """Make this transaction the corpus's one writer until it ends, before it reads: a no-op UPDATE of
        the corpus row takes SQLite's write lock (whose driver begins a transaction only at a write) and
        the row lock on PostgreSQL, so a read-then-write (a judgement's upsert) never races another."""
        self.session.execute(writer_turn(Corpus.id == self.corpus_id))

    def find(self, query: str, document_id: str) -> TrainingPair | None:
        """The first stored pair of this query and stored document, if any."""
        return self.session.scalar(
            select(TrainingPair)
            .where(
                TrainingPair.corpus_id == self.corpus_id,
                TrainingPair.query_sha256 == text_sha256(query),
                TrainingPair.query == query,
                TrainingPair.document_id == document_id,
            )
            .order_by(TrainingPair.id)
            .limit(1)
        )

    def counts(self) -> dict[str, int]:
        """Pair counts: total, positives (label > 0), per split, and distinct judged queries."""
        positives = func.sum(case((TrainingPair.label > 0, 1), else_=0))
        mine = (TrainingPair.corpus_id == self.corpus_id) & TrainingPair.label.is_not(None)
        rows = self.session.execute(
            select(TrainingPair.split, positives, func.count()).where(mine).group_by(TrainingPair.split)
        ).all()
        counts = {"total": 0, "positive": 0, "negative": 0, "train": 0, "dev": 0, "unsplit": 0}
        for split, positive, count in rows:
            counts["total"] += count
            counts["positive"] += int(positive)
            counts["negative"] += count - int(positive)
            counts[split or "unsplit"] += count
        # Distinct by hash: the index answers it; two texts with one SHA-256 do not happen.
        queries = select(func.count(func.distinct(TrainingPair.query_sha256))).where(mine)
        counts["queries"] = int(self.session.scalar(queries) or 0)
        return counts

    def judged_query_count(self) -> int:
        """Distinct queries with a positive pair (what a match calibration learns from)."""
        mine = TrainingPair.corpus_id == self.corpus_id
        query = select(func.count(func.distinct(TrainingPair.query_sha256))).where(
            mine, TrainingPair.label > 0
        )
        return int(self.session.scalar(query) or 0)

    def get(self, pair_id: int) -> TrainingPair | None:
        """One pair by id, if it belongs to this corpus."""
        pair = self.session.get(TrainingPair, pair_id)
        return pair if pair is not None and pair.corpus_id == self.corpus_id else None

    def delete(self, pair: TrainingPair) -> None:
        """Delete one pair."""
        self.session.delete(pair)
