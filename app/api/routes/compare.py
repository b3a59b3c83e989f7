"""Two rankings of a corpus side by side, and their metrics over its judged queries."""

from __future__ import annotations

from fastapi import APIRouter

from app.api.deps import CompareServiceDep
from app.api.params import CorpusNameParam
from app.api.ranking_io import rank_response, ranking_request, ranking_used
from app.api.security import ReadAccess
from app.core.errors import ForbiddenError
from app.schemas.compare import (
    CompareMetricsRequest,
    CompareMetricsResponse,
    CompareRequest,
    CompareResponse,
    CompareSide,
    QueryMetricsOut,
    SideMetricsOut,
)
from app.schemas.errors import COMMON_ERRORS, CONFLICT, NOT_FOUND, error_responses
from app.schemas.requests import filter_conditions
from app.usecases.api_keys import Principal
from app.usecases.compare import Side

router = APIRouter(
    prefix="/v1/corpora/{name}/compare",
    tags=["ranking"],
    responses={**error_responses(*COMMON_ERRORS, 429), **NOT_FOUND, **CONFLICT},
)


def _side(body: CompareSide, field: str, principal: Principal) -> Side:
    # Model versions are admin information (GET /admin/models): naming one needs an admin key.
    if body.model is not None and not principal.allows("admin"):
        raise ForbiddenError(f"{field}.model: comparing model versions needs an admin key", f"{field}.model")
    return Side(body.model, ranking_request(body, body.rerank, principal, f"{field}.rerank"))


@router.post("", response_model=CompareResponse)
def compare(
    name: CorpusNameParam, body: CompareRequest, service: CompareServiceDep, principal: ReadAccess
) -> CompareResponse:
    """Rank one query by two settings, or by the serving model and a registered one, side by side."""
    left, right = service.compare_query(
        name,
        body.query,
        body.k,
        _side(body.left, "left", principal),
        _side(body.right, "right", principal),
        filter_conditions(body.filter),
    )
    return CompareResponse(left=rank_response(left), right=rank_response(right))


@router.post("/metrics", response_model=CompareMetricsResponse)
def compare_metrics(
    name: CorpusNameParam, body: CompareMetricsRequest, service: CompareServiceDep, principal: ReadAccess
) -> CompareMetricsResponse:
    """Both sides over the corpus's judged queries: mean and per-query metrics (409 with none judged)."""
    report = service.compare_metrics(
        name,
        _side(body.left, "left", principal),
        _side(body.right, "right", principal),
        body.metrics,
        body.limit,
        filter_conditions(body.filter),
    )
    sides = [
        SideMetricsOut(model=s.model, ranking=ranking_used(s.ranking, s.rerank), means=s.means)
        for s in (report.left, report.right)
    ]
    rows = [
        QueryMetricsOut(query=query, relevant=relevant, left=left, right=right)
        for query, relevant, left, right in zip(
            report.queries, report.relevant, report.left.per_query, report.right.per_query, strict=True
        )
    ]
    return CompareMetricsResponse(
        metrics=report.metrics,
        queries=len(report.queries),
        judged_queries=report.judged_queries,
        left=sides[0],
        right=sides[1],
        per_query=rows,
    )
