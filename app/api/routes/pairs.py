"""Labeled training pairs of a corpus (what retraining learns from)."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Query, Response

from app.api.deps import PairServiceDep
from app.api.params import CorpusNameParam, Offset, PairIdParam, QueryTextParam
from app.api.security import READ, WRITE, WriteAccess, judge_name
from app.schemas.admin import (
    JudgementIn,
    JudgementOut,
    PairCounts,
    PairList,
    PairOut,
    PairsAdded,
    PairsCreate,
    SplitRequest,
)
from app.schemas.errors import COMMON_ERRORS, error_responses
from app.schemas.workbench import JudgementRecord
from app.usecases.pairs import Judgement, PairInput
from app.usecases.workbench.judgements import view

router = APIRouter(
    prefix="/v1/corpora/{name}/pairs", tags=["training pairs"], responses=error_responses(*COMMON_ERRORS, 404)
)


@router.post("", status_code=201, response_model=PairsAdded)
def add_pairs(
    name: CorpusNameParam, body: PairsCreate, service: PairServiceDep, principal: WriteAccess
) -> PairsAdded:
    """Store labeled pairs (all or nothing), recording the key that sent them."""
    pairs = [PairInput(p.query, p.document_id, p.document, p.label, p.split) for p in body.pairs]
    return PairsAdded(**service.add_pairs(name, pairs, judge_name(principal)))


@router.put("/judgement", response_model=JudgementOut)
def judge(
    name: CorpusNameParam, body: JudgementIn, service: PairServiceDep, principal: WriteAccess
) -> JudgementOut:
    """Judge a stored document for a query as the sending key: that key's judgement of the pair of that
    (query, document) is changed or added (the pair too), and the pair's label is every judge's aggregate."""
    judgement = Judgement(
        body.query, body.document_id, body.label, judge_name(principal), body.unsure, body.note or None
    )
    judged = service.judge(name, judgement)
    return JudgementOut(
        pair=PairOut.model_validate(judged.pair),
        created=judged.created,
        judgement=JudgementRecord(**vars(view(judged.judgement, judged.pair))),
        counts=PairCounts(**judged.counts),
    )


@router.get("", response_model=PairList, dependencies=[READ])
def list_pairs(
    name: CorpusNameParam,
    service: PairServiceDep,
    split: Literal["train", "dev"] | None = None,
    query: QueryTextParam = None,
    offset: Offset = 0,
    limit: int = Query(100, ge=1, le=1000),
) -> PairList:
    """A page of pairs with the corpus's counts."""
    pairs, counts = service.list_pairs(name, split, offset, limit, query)
    return PairList(pairs=[PairOut.model_validate(p) for p in pairs], counts=PairCounts(**counts))


@router.post("/split", response_model=PairCounts, dependencies=[WRITE])
def split_pairs(name: CorpusNameParam, body: SplitRequest, service: PairServiceDep) -> PairCounts:
    """Assign every pair to train or dev, deterministically by query text."""
    return PairCounts(**service.split_pairs(name, body.dev_fraction, body.seed))


@router.delete("/{pair_id:int}", status_code=204, dependencies=[WRITE])
def delete_pair(name: CorpusNameParam, pair_id: PairIdParam, service: PairServiceDep) -> Response:
    """Delete one pair."""
    service.delete_pair(name, pair_id)
    return Response(status_code=204)
