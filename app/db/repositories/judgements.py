"""SQL for each judge's judgements of a corpus's pairs, and the pairs' aggregate labels."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Row, func, select, true
from sqlalchemy.orm import Session

from app.core.grades import aggregate
from app.core.text_hash import text_sha256
from app.db.admin_models import TrainingPair
from app.db.models import utcnow
from app.db.workbench_models import PairJudgement


@dataclass(frozen=True)
class JudgementFilter:
    """Which judgements a page lists: by one judge, of one query text, of one grade, of disagreed pairs."""

    judged_by: str | None = None
    query: str | None = None
    grade: float | None = None
    unsure: bool | None = None
    disagreement: bool | None = None


class JudgementRepository:
    """The judgements of one corpus."""

    def __init__(self, session: Session, corpus_id: int) -> None:
        self.session = session
        self.corpus_id = corpus_id

    def get(self, judgement_id: int) -> PairJudgement | None:
        """One judgement by id, if it belongs to this corpus."""
        found = self.session.get(PairJudgement, judgement_id)
        return found if found is not None and found.corpus_id == self.corpus_id else None

    def pair_of(self, judgement: PairJudgement) -> TrainingPair:
        """The pair a judgement is of."""
        pair = self.session.get(TrainingPair, judgement.pair_id)
        assert pair is not None  # the foreign key
        return pair

    def of_pair(self, pair_id: int) -> list[PairJudgement]:
        """Every judgement of one pair, oldest first."""
        statement = select(PairJudgement).where(PairJudgement.pair_id == pair_id).order_by(PairJudgement.id)
        return list(self.session.scalars(statement))

    def upsert(
        self, pair: TrainingPair, judged_by: str, grade: float | None, note: str | None
    ) -> tuple[PairJudgement, bool]:
        """This judge's judgement of the pair, changed in place or added; whether it was added."""
        mine = next((j for j in self.of_pair(pair.id) if j.judged_by == judged_by), None)
        if mine is None:
            mine = PairJudgement(
                corpus_id=self.corpus_id, pair_id=pair.id, judged_by=judged_by, grade=grade, note=note
            )
            self.session.add(mine)
            self.session.flush()
            return mine, True
        mine.grade, mine.note, mine.updated_at = grade, note, utcnow()
        self.session.flush()
        return mine, False

    def refresh(self, pair: TrainingPair, judged_by: str | None = None) -> bool:
        """Set the pair's label to its judgements' aggregate (and who last judged it); a pair left with
        no judgement is deleted. True while the pair remains."""
        judgements = self.of_pair(pair.id)
        if not judgements:
            self.session.delete(pair)
            self.session.flush()
            return False
        total = aggregate([j.grade for j in judgements])
        pair.label = total.grade  # type: ignore[assignment]  # None: every judge unsure (see the model)
        pair.disagreement = total.disagreement
        if judged_by is not None:
            pair.judged_by, pair.updated_at = judged_by, utcnow()
        self.session.flush()
        return True

    def delete(self, judgement: PairJudgement) -> None:
        """Delete one judgement (refresh its pair after)."""
        self.session.delete(judgement)
        self.session.flush()

    def page(self, where: JudgementFilter, after: int, limit: int) -> list[Row[PairJudgement, TrainingPair]]:
        """Judgements with their pairs, by id after `after`, at most `limit`, filtered."""
        statement = (
            select(PairJudgement, TrainingPair)
            .join(TrainingPair, TrainingPair.id == PairJudgement.pair_id)
            .where(PairJudgement.corpus_id == self.corpus_id, PairJudgement.id > after)
        )
        if where.judged_by is not None:
            statement = statement.where(PairJudgement.judged_by == where.judged_by)
        if where.query is not None:
            statement = statement.where(
                TrainingPair.query_sha256 == text_sha256(where.query), TrainingPair.query == where.query
            )
        if where.grade is not None:
            statement = statement.where(PairJudgement.grade == where.grade)
        if where.unsure is not None:
            unsure = PairJudgement.grade.is_(None)
            statement = statement.where(unsure if where.unsure else ~unsure)
        if where.disagreement is not None:
            statement = statement.where(TrainingPair.disagreement == where.disagreement)
        return list(self.session.execute(statement.order_by(PairJudgement.id).limit(limit)).all())

    def grades(self) -> list[tuple[int, str, float]]:
        """(pair id, judge, grade) of every judgement that gave a grade: what agreement is computed on."""
        statement = (
            select(PairJudgement.pair_id, PairJudgement.judged_by, PairJudgement.grade)
            .where(PairJudgement.corpus_id == self.corpus_id, PairJudgement.grade.is_not(None))
            .order_by(PairJudgement.id)
        )
        rows = self.session.execute(statement).all()
        return [(pair, judge, float(grade)) for pair, judge, grade in rows if grade is not None]

    def off_scale(self, allowed: tuple[int, ...]) -> int:
        """How many of this corpus's judgements gave a grade outside `allowed`."""
        statement = select(func.count()).where(
            PairJudgement.corpus_id == self.corpus_id,
            PairJudgement.grade.is_not(None),
            PairJudgement.grade.not_in([float(g) for g in allowed]),
        )
        return int(self.session.scalar(statement) or 0)

    def disagreement_count(self) -> int:
        """Pairs of this corpus whose judges gave different grades."""
        statement = select(func.count()).where(
            TrainingPair.corpus_id == self.corpus_id, TrainingPair.disagreement == true()
        )
        return int(self.session.scalar(statement) or 0)
