"""The re-ranking stage of a corpus ranking, and the checks on a corpus's or a request's re-ranker.

A corpus's ranking may name a registered cross-encoder (`rerank`: model, k, weight); a rank call then
takes the first stage's best max(k, rerank k), lets the cross-encoder score the top rerank k against
the query, and re-orders only those (indexes/rerank.py): by its score, or, when the weight is below 1,
by weight x its score + (1 - weight) x the first stage's (each min-max scaled over the k). Everything
below the rerank k keeps its place and the first stage's score; the response says which stage ran.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, replace
from typing import Any, ClassVar, Protocol, TypeVar

from app.core.errors import ConflictError, NotFoundError
from app.db.repositories.model_versions import ModelRepository
from app.search.ranking_setting import (
    CorpusRankings,
    RerankRequest,
    RerankSetting,
    resolve_rerank,
    served_rerank_record,
)
from app.serving.context import ServiceContext
from indexes.fusion import stage_order
from indexes.rerank import rerank_top_k
from pairank.models import CROSS_ENCODER


class _Ranked(Protocol):
    """A ranked result (app/search/ranked.py's RankedItem): a dataclass with a text and a score."""

    __dataclass_fields__: ClassVar[dict[str, Any]]

    @property
    def text(self) -> str: ...

    @property
    def score(self) -> float: ...


Item = TypeVar("Item", bound=_Ranked)


def check_reranker(service: ServiceContext, version: str, field: str) -> None:
    """404 when `version` is not registered, 409 when it is not a cross-encoder (naming `field`): which
    versions exist and what they are is state, as in every other refusal of a well-formed request."""
    with service.sessions() as session:
        row = ModelRepository(session).get(version)
    if row is None:
        raise NotFoundError(f"{field}: model version {version!r} is not registered", field)
    if row.kind != CROSS_ENCODER:
        raise ConflictError(
            f"{field}: {version} is a {row.kind}; a re-ranking stage needs a cross-encoder "
            "(`pairank train --reranker`, then `pairank models register`)",
            field,
        )


def checked_ranking(
    service: ServiceContext, ranking: Mapping[str, Any] | None, field: str = "rerank.model"
) -> dict[str, Any] | None:
    """A corpus ranking to store, its re-ranking stage's model checked (naming `field`); None stays None."""
    if ranking is None:
        return None
    stage = ranking.get("rerank")
    if not stage:
        return {key: value for key, value in ranking.items() if key != "rerank"}
    check_reranker(service, str(stage["model"]), field)
    return dict(ranking)


def rerank_stage(
    service: ServiceContext,
    requested: RerankRequest | None,
    corpus: CorpusRankings | None,
    model: str,
    field: str = "rerank.model",
) -> RerankSetting | None:
    """The stage a rank call runs with `model` serving: the request's choices over the corpus's (the
    calibration's for `model`, else the default ranking's); a model the request names is checked (404,
    409), a request for one on a corpus without one is a 409 (naming `field`)."""
    try:
        stage = resolve_rerank(requested, served_rerank_record(corpus, model))
    except ValueError as error:
        raise ConflictError(
            f"{field}: this corpus has no re-ranking stage; name a registered cross-encoder (admin key) "
            "or set one on the corpus (PUT /v1/corpora/{name}/ranking)",
            field,
        ) from error
    if stage is not None and requested is not None and requested.model is not None:
        check_reranker(service, requested.model, field)
    return stage


def first_stage_depth(shown: int, stage: RerankSetting | None) -> int:
    """How many results the first stage ranks: those shown, or all the stage re-ranks if more."""
    return max(shown, stage.k) if stage is not None else shown


def reranked(
    service: ServiceContext,
    query: str,
    items: Sequence[Item],
    stage: RerankSetting,
    k: int,
    field: str = "rerank.model",
) -> list[Item]:
    """The first `k` of `items` (the first stage's order) with the top `stage.k` re-ordered by the
    cross-encoder; ranks renumbered."""
    head = list(items[: stage.k])
    if not head:
        return list(items[:k])
    try:
        reranker = service.serving.rerankers.get(stage.model)
    except (NotFoundError, ConflictError) as error:  # the corpus's stage names a model deleted or changed
        raise type(error)(f"{field}: {error.message}", field) from error
    scores = reranker.score(query, [item.text for item in head])
    order = stage_order([item.score for item in head], scores, stage.weight)
    scored = [replace(item, rerank_score=float(s)) for item, s in zip(head, scores, strict=True)]
    ordered = rerank_top_k([*scored, *items[stage.k :]], order, stage.k)
    return [replace(item, rank=rank) for rank, item in enumerate(ordered[:k], start=1)]


def stage_record(stage: RerankSetting | None) -> dict[str, Any] | None:
    """The stage as the response's `ranking.rerank`."""
    return asdict(stage) if stage is not None else None
