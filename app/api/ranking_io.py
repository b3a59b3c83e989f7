"""The ranking options of a request as the use cases' typed request, and a ranking as its response
(shared by `rank`, `duplicates` and `compare`, which accept and answer the same shapes)."""

from __future__ import annotations

from dataclasses import asdict

from app.core.errors import ForbiddenError
from app.schemas.ranking import (
    LanguageOptions,
    QueryLanguageOut,
    RankedOut,
    RankingOptions,
    RankingUsed,
    RankResponse,
    RerankOptions,
)
from app.search.languages import LanguageRequest, QueryLanguage
from app.search.ranked import RankedItem, Ranking
from app.search.ranking_setting import RankingRequest, RankingSetting, RerankRequest, RerankSetting
from app.usecases.api_keys import Principal


def ranked_items(items: list[RankedItem]) -> list[RankedOut]:
    """Ranked documents as response records."""
    return [RankedOut.model_validate(item, from_attributes=True) for item in items]


def rerank_request(
    body: RerankOptions | None, principal: Principal, field: str = "rerank"
) -> RerankRequest | None:
    """A request's re-ranking options; naming a model (admin information, GET /admin/models) needs an
    admin key (403 naming `field`.model)."""
    if body is None:
        return None
    if body.model is not None and not principal.allows("admin"):
        raise ForbiddenError(f"{field}.model: naming a re-ranker needs an admin key", f"{field}.model")
    return RerankRequest(body.enabled, body.model, body.k, body.weight)


def ranking_request(
    body: RankingOptions,
    rerank: RerankOptions | None = None,
    principal: Principal | None = None,
    field: str = "rerank",
) -> RankingRequest:
    """The first stage's options, and the re-ranking stage's when given (checked against `principal`)."""
    stage = rerank_request(rerank, principal, field) if principal is not None else None
    return RankingRequest(body.mode, body.alpha, body.fusion, stage)


def ranking_used(setting: RankingSetting, rerank: RerankSetting | None = None) -> RankingUsed:
    """The ranking a response reports: the first stage's setting and the re-ranking stage that ran."""
    return RankingUsed.model_validate({**asdict(setting), "rerank": asdict(rerank) if rerank else None})


def language_request(body: LanguageOptions) -> LanguageRequest:
    """A request's language options as the use cases take them."""
    return LanguageRequest(body.language, body.same_language)


def language_used(language: QueryLanguage | None) -> QueryLanguageOut | None:
    """The language a response reports (None: a ranking of no corpus)."""
    return QueryLanguageOut.model_validate(language) if language is not None else None


def rank_response(ranking: Ranking) -> RankResponse:
    """A ranking as the response of `rank` and of each side of `compare`."""
    used = ranking_used(ranking.ranking, ranking.rerank) if ranking.ranking is not None else None
    return RankResponse(
        results=ranked_items(ranking.results),
        model=ranking.model,
        ranking=used,
        language=language_used(ranking.language),
    )
