"""Ranking, duplicate detection and similarity endpoints."""

from __future__ import annotations

from fastapi import APIRouter

from app.api.deps import DuplicateServiceDep, RankingServiceDep
from app.api.params import CorpusNameParam
from app.api.ranking_io import (
    language_request,
    language_used,
    rank_response,
    ranked_items,
    ranking_request,
    ranking_used,
)
from app.api.security import READ, ReadAccess
from app.schemas.errors import COMMON_ERRORS, CONFLICT, NOT_FOUND, error_responses
from app.schemas.ranking import (
    CorpusRankRequest,
    DuplicateResult,
    DuplicatesRequest,
    DuplicatesResponse,
    DuplicateText,
    RankResponse,
    SimilarityRequest,
    SimilarityResponse,
    TextRankRequest,
)
from app.schemas.requests import filter_conditions

router = APIRouter(tags=["ranking"], responses=error_responses(*COMMON_ERRORS, 429))


@router.post("/v1/corpora/{name}/rank", response_model=RankResponse, responses={**NOT_FOUND, **CONFLICT})
def rank_corpus(
    name: CorpusNameParam, body: CorpusRankRequest, service: RankingServiceDep, principal: ReadAccess
) -> RankResponse:
    """Rank the corpus (or only the given candidates) for a query; a re-ranking stage (the corpus's, or
    the request's) re-orders the top k with a cross-encoder (409: `rerank` asked of a corpus without a
    stage and no model named, or a model that is not a cross-encoder)."""
    conditions = filter_conditions(body.filter)
    how = ranking_request(body, body.rerank, principal)
    ranking = service.rank_corpus(
        name,
        body.query,
        body.k,
        body.candidates,
        conditions,
        body.include_metadata,
        how,
        language_request(body),
    )
    return rank_response(ranking)


@router.post("/v1/rank", response_model=RankResponse, dependencies=[READ])
def rank_texts(body: TextRankRequest, service: RankingServiceDep) -> RankResponse:
    """Rank texts given inline; ids are positions in the request."""
    return rank_response(service.rank_texts(body.query, body.documents, body.k))


@router.post(
    "/v1/corpora/{name}/duplicates",
    response_model=DuplicatesResponse,
    responses=error_responses(404),
    dependencies=[READ],
)
def find_duplicates(
    name: CorpusNameParam, body: DuplicatesRequest, service: DuplicateServiceDep
) -> DuplicatesResponse:
    """Corpus documents at or above the duplicate threshold for each input."""
    if body.ids is not None:
        inputs = service.document_texts(name, body.ids)
    elif body.text is not None:
        inputs = [(None, body.text)]
    else:
        inputs = [(t.id, t.text) if isinstance(t, DuplicateText) else (None, t) for t in body.texts or []]
    conditions = filter_conditions(body.filter)
    how, languages = ranking_request(body), language_request(body)
    report = service.find_duplicates(
        name, inputs, body.threshold, body.k, conditions, body.include_metadata, how, languages
    )
    results = [
        DuplicateResult(
            text=r.text, id=r.id, duplicates=ranked_items(r.duplicates), language=language_used(r.language)
        )
        for r in report.results
    ]
    return DuplicatesResponse(
        results=results,
        threshold=report.threshold,
        threshold_source=report.threshold_source,
        threshold_on=report.threshold_on,
        model=report.model,
        ranking=ranking_used(report.ranking),
    )


@router.post("/v1/similarity", response_model=SimilarityResponse, dependencies=[READ])
def similarity(body: SimilarityRequest, service: RankingServiceDep) -> SimilarityResponse:
    """Cosine similarity of pairs, or of a source against targets."""
    if body.pairs is not None:
        scores, model = service.similarity([(p.a, p.b) for p in body.pairs])
    else:
        scores, model = service.similarity_to_targets(body.source or "", body.targets or [])
    return SimilarityResponse(scores=scores, model=model)
