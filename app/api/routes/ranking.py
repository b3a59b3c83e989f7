"""Ranking, duplicate detection and similarity endpoints."""

from __future__ import annotations

from fastapi import APIRouter

from app.api.deps import RankingServiceDep
from app.schemas.ranking import (
    CorpusRankRequest,
    DuplicateResult,
    DuplicatesRequest,
    DuplicatesResponse,
    DuplicateText,
    RankedOut,
    RankResponse,
    SimilarityRequest,
    SimilarityResponse,
    TextRankRequest,
)
from app.services.ranking import RankedItem, Ranking

router = APIRouter(tags=["ranking"])


def _items(items: list[RankedItem]) -> list[RankedOut]:
    return [RankedOut(id=i.id, text=i.text, score=i.score, rank=i.rank) for i in items]


def _response(ranking: Ranking) -> RankResponse:
    return RankResponse(results=_items(ranking.results), model=ranking.model)


@router.post("/v1/corpora/{name}/rank", response_model=RankResponse)
def rank_corpus(name: str, body: CorpusRankRequest, service: RankingServiceDep) -> RankResponse:
    """Rank the corpus (or only the given candidates) for a query."""
    return _response(service.rank_corpus(name, body.query, body.k, body.candidates))


@router.post("/v1/rank", response_model=RankResponse)
def rank_texts(body: TextRankRequest, service: RankingServiceDep) -> RankResponse:
    """Rank texts given inline; ids are positions in the request."""
    return _response(service.rank_texts(body.query, body.documents, body.k))


@router.post("/v1/corpora/{name}/duplicates", response_model=DuplicatesResponse)
def find_duplicates(name: str, body: DuplicatesRequest, service: RankingServiceDep) -> DuplicatesResponse:
    """Corpus documents at or above the duplicate threshold for each input."""
    if body.ids is not None:
        inputs = service.document_texts(name, body.ids)
    elif body.text is not None:
        inputs = [(None, body.text)]
    else:
        inputs = [(t.id, t.text) if isinstance(t, DuplicateText) else (None, t) for t in body.texts or []]
    report = service.find_duplicates(name, inputs, body.threshold, body.k)
    results = [DuplicateResult(text=r.text, id=r.id, duplicates=_items(r.duplicates)) for r in report.results]
    return DuplicatesResponse(
        results=results,
        threshold=report.threshold,
        threshold_source=report.threshold_source,
        model=report.model,
    )


@router.post("/v1/similarity", response_model=SimilarityResponse)
def similarity(body: SimilarityRequest, service: RankingServiceDep) -> SimilarityResponse:
    """Cosine similarity of pairs, or of a source against targets."""
    if body.pairs is not None:
        scores, model = service.similarity([(p.a, p.b) for p in body.pairs])
    else:
        scores, model = service.similarity_to_targets(body.source or "", body.targets or [])
    return SimilarityResponse(scores=scores, model=model)
