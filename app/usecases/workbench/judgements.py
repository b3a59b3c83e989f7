"""Judgements by several judges: a page of them, editing or deleting your own, and their agreement."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from app.core.errors import ConflictError, ForbiddenError, InvalidInputError, NotFoundError
from app.core.grades import SCALES
from app.db.admin_models import TrainingPair
from app.db.corpus_lookup import require_corpus
from app.db.engine import transaction
from app.db.repositories.judgements import JudgementFilter, JudgementRepository
from app.db.workbench_models import PairJudgement
from app.serving.context import ServiceContext
from app.usecases.pairs import checked_grade
from evaluation.agreement import AgreementReport, agreement

MAX_PAGE = 500


@dataclass(frozen=True)
class JudgementView:
    """One judgement with what a reviewer reads beside it: the pair's query, document and aggregate."""

    id: int
    pair_id: int
    query: str
    document_id: str | None
    judged_by: str
    grade: float | None
    unsure: bool
    note: str | None
    aggregate: float | None
    disagreement: bool
    created_at: datetime
    updated_at: datetime | None


def view(judgement: PairJudgement, pair: TrainingPair) -> JudgementView:
    """The view of a judgement of a pair."""
    return JudgementView(
        judgement.id, pair.id, pair.query, pair.document_id, judgement.judged_by, judgement.grade,
        judgement.grade is None, judgement.note, pair.label, pair.disagreement, judgement.created_at,
        judgement.updated_at,
    )  # fmt: skip


@dataclass(frozen=True)
class Agreement:
    """The corpus's scale, its judges' agreement and how many pairs they disagree on."""

    scale: str
    report: AgreementReport
    disagreements: int


def parse_cursor(cursor: str | None) -> int:
    """The last id a page ended on (0: from the start), or a 422 naming `cursor`."""
    if cursor is None:
        return 0
    if not cursor.isdigit() or len(cursor) > 18:
        raise InvalidInputError(f"cursor: {cursor!r} is not a cursor this API returned", "cursor")
    return int(cursor)


class JudgementService:
    """Use cases on a corpus's judgements."""

    def __init__(self, service: ServiceContext) -> None:
        self.service = service

    def page(
        self, name: str, where: JudgementFilter, cursor: str | None, limit: int
    ) -> tuple[list[JudgementView], str | None]:
        """Up to `limit` judgements after the cursor, oldest first, and the next page's cursor."""
        after = parse_cursor(cursor)
        with self.service.sessions() as session:
            corpus = require_corpus(session, name)
            rows = JudgementRepository(session, corpus.id).page(where, after, limit + 1)
            views = [view(judgement, pair) for judgement, pair in rows[:limit]]
        return views, (str(views[-1].id) if len(rows) > limit else None)

    def _own(self, repository: JudgementRepository, judgement_id: int, judge: str) -> PairJudgement:
        found = repository.get(judgement_id)
        if found is None:
            raise NotFoundError(f"judgement {judgement_id} does not exist in this corpus", field="id")
        if found.judged_by != judge:
            raise ForbiddenError(
                f"judgement {judgement_id} is {found.judged_by}'s: you ({judge}) may change only your own",
                "judged_by",
            )
        return found

    def edit(
        self, name: str, judgement_id: int, judge: str, label: float | None, unsure: bool, note: str | None
    ) -> JudgementView:
        """Change your own judgement (grade on the corpus's scale, or unsure; its note)."""
        with transaction(self.service.sessions) as session:
            corpus = require_corpus(session, name)
            grade = checked_grade(corpus.judgement_scale, label, unsure)
            repository = JudgementRepository(session, corpus.id)
            mine = self._own(repository, judgement_id, judge)
            pair = repository.pair_of(mine)
            repository.upsert(pair, judge, grade, note)
            repository.refresh(pair, judge)
            return view(mine, pair)

    def delete(self, name: str, judgement_id: int, judge: str) -> None:
        """Delete your own judgement; a pair left with no judgement goes with it."""
        with transaction(self.service.sessions) as session:
            repository = JudgementRepository(session, require_corpus(session, name).id)
            mine = self._own(repository, judgement_id, judge)
            pair = repository.pair_of(mine)
            repository.delete(mine)
            repository.refresh(pair)

    def set_scale(self, name: str, scale: str) -> str:
        """Change the corpus's judging scale; 409 naming `judgement_scale` while judgements are off it."""
        with transaction(self.service.sessions) as session:
            corpus = require_corpus(session, name)
            off = JudgementRepository(session, corpus.id).off_scale(SCALES[scale])
            if off:
                raise ConflictError(
                    f"judgement_scale: {off} judgements of corpus {name!r} are not on scale {scale!r}: "
                    "change or delete them first",
                    "judgement_scale",
                )
            corpus.judgement_scale = scale
            return scale

    def agreement(self, name: str) -> Agreement:
        """Cohen's kappa per pair of judges and Krippendorff's alpha over all, on the corpus's grades."""
        with self.service.sessions() as session:
            corpus = require_corpus(session, name)
            repository = JudgementRepository(session, corpus.id)
            grades = repository.grades()
            disagreements = repository.disagreement_count()
            scale = corpus.judgement_scale
        return Agreement(scale, agreement(grades, ordinal=scale == "graded"), disagreements)
