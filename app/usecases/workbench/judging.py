"""Storing one judge's judgement of a (query, stored document) pair, inside a caller's transaction."""

from __future__ import annotations

from sqlalchemy.orm import Session

from app.db.admin_models import TrainingPair
from app.db.repositories.judgements import JudgementRepository
from app.db.repositories.pairs import PairRepository
from app.db.workbench_models import PairJudgement


def judge_pair(
    session: Session,
    corpus_id: int,
    pair_key: tuple[str, str],
    judged_by: str,
    grade: float | None,
    note: str | None,
) -> tuple[TrainingPair, PairJudgement, bool]:
    """The pair of (query, document id), found or added; this judge's judgement of it, changed or added;
    the pair's label refreshed to the aggregate. Returns (pair, judgement, whether the pair is new)."""
    query, document_id = pair_key
    pairs = PairRepository(session, corpus_id)
    judgements = JudgementRepository(session, corpus_id)
    pair = pairs.find(query, document_id)
    created = pair is None
    if pair is None:
        row = {"query": query, "document_id": document_id, "document": None, "label": grade,
               "split": None, "judged_by": judged_by}  # fmt: skip
        pair = pairs.add_many([row])[0]
    mine, _ = judgements.upsert(pair, judged_by, grade, note)
    judgements.refresh(pair, None if created else judged_by)
    return pair, mine, created
