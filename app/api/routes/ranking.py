"""Ranking, duplicate detection and similarity endpoints."""

from __future__ import annotations

from fastapi import APIRouter

from app.api.deps import RankingServiceDep
from app.api.params import CorpusNameParam
from app.api.security import READ
from app.schemas.errors import COMMON_ERRORS, NOT_FOUND, error_responses
from app.schemas.ranking import (
    CorpusRankRequest,
    DuplicateResult,
    DuplicatesRequest,
    DuplicatesResponse,
    DuplicateText,
    RankedOut,
    RankingOptions,
    RankingUsed,
    RankResponse,
    SimilarityRequest,
    SimilarityResponse,
    TextRankRequest,
    filter_conditions,
)
from app.search.ranking_setting import RankingRequest
from app.usecases.ranking import RankedItem, Ranking

router = APIRouter(tags=["ranking"], responses=error_responses(*COMMON_ERRORS, 429))


def _items(items: list[RankedItem]) -> list[RankedOut]:
    return [RankedOut.model_validate(item, from_attributes=True) for item in items]


def _how(body: RankingOptions) -> RankingRequest:
    return RankingRequest(body.mode, body.alpha, body.fusion)


def _response(ranking: Ranking) -> RankResponse:
    used = RankingUsed.model_validate(ranking.ranking) if ranking.ranking is not None else None
    return RankResponse(results=_items(ranking.results), model=ranking.model, ranking=used)


@router.post("/v1/corpora/{name}/rank", response_model=RankResponse, responses=NOT_FOUND, dependencies=[READ])
def rank_corpus(name: CorpusNameParam, body: CorpusRankRequest, service: RankingServiceDep) -> RankResponse:
    """Rank the corpus (or only the given candidates) for a query."""
    conditions = filter_conditions(body.filter)
    ranking = service.rank_corpus(
        name, body.query, body.k, body.candidates, conditions, body.include_metadata, _how(body)
    )
    return _response(ranking)


@router.post("/v1/rank", response_model=RankResponse, dependencies=[READ])
def rank_texts(body: TextRankRequest, service: RankingServiceDep) -> RankResponse:
    """Rank texts given inline; ids are positions in the request."""
    return _response(service.rank_texts(body.query, body.documents, body.k))


@router.post(
    "/v1/corpora/{name}/duplicates",
    response_model=DuplicatesResponse,
    responses=error_responses(404),
    dependencies=[READ],
)
def find_duplicates(
    name: CorpusNameParam, body: DuplicatesRequest, service: RankingServiceDep
) -> DuplicatesResponse:
    """Corpus documents at or above the duplicate threshold for each input."""
    if body.ids is not None:
        inputs = service.document_texts(name, body.ids)
    elif body.text is not None:
        inputs = [(None, body.text)]
    else:
        inputs = [(t.id, t.text) if isinstance(t, DuplicateText) else (None, t) for t in body.texts or []]
    conditions = filter_conditions(body.filter)
    report = service.find_duplicates(
        name, inputs, body.threshold, body.k, conditions, body.include_metadata, _how(body)
    )
    results = [DuplicateResult(text=r.text, id=r.id, duplicates=_items(r.duplicates)) for r in report.results]
    return DuplicatesResponse(
        results=results,
        threshold=report.threshold,
        threshold_source=report.threshold_source,
        model=report.model,
        ranking=RankingUsed.model_validate(report.ranking),
    )


@router.post("/v1/similarity", response_model=SimilarityResponse, dependencies=[READ])
def similarity(body: SimilarityRequest, service: RankingServiceDep) -> SimilarityResponse:
    """Cosine similarity of pairs, or of a source against targets."""
    if body.pairs is not None:
        scores, model = service.similarity([(p.a, p.b) for p in body.pairs])
    else:
        scores, model = service.similarity_to_targets(body.source or "", body.targets or [])
    return SimilarityResponse(scores=scores, model=model)
