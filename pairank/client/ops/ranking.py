"""Ranking, duplicates, similarity and comparisons: POSTs that only read, so they are retried."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from app.schemas.compare import (
    CompareMetricsRequest,
    CompareMetricsResponse,
    CompareRequest,
    CompareResponse,
    CompareSide,
)
from app.schemas.ranking import (
    CorpusRankRequest,
    DuplicatesRequest,
    DuplicatesResponse,
    DuplicateText,
    RankResponse,
    SimilarityRequest,
    SimilarityResponse,
    TextPair,
    TextRankRequest,
)
from pairank.client.calls import Steps, call, reads
from pairank.client.ops import given, segment

Side = CompareSide | Mapping[str, Any]


def rank(corpus: str, query: str, k: int = 10, **ranking: Any) -> Steps[RankResponse]:
    """Rank a corpus for a query; `ranking`: `mode`, `alpha`, `fusion`, `filter`, `candidates`,
    `include_metadata`, `language`, `same_language` (as `POST /v1/corpora/{name}/rank` takes them); the
    response's `language` says which one the query was analysed in."""
    request = CorpusRankRequest.model_validate({"query": query, "k": k, **ranking})
    path = f"/v1/corpora/{segment(corpus)}/rank"
    return (yield call("POST", path, reads(RankResponse), idempotent=True, json=request))


def rank_texts(query: str, documents: Sequence[str], k: int = 10) -> Steps[RankResponse]:
    """Rank texts given inline (no corpus); a result's `id` is the text's position."""
    request = TextRankRequest.model_validate({"query": query, "documents": list(documents), "k": k})
    return (yield call("POST", "/v1/rank", reads(RankResponse), idempotent=True, json=request))


def duplicates(
    corpus: str,
    text: str | None = None,
    *,
    texts: Sequence[str | DuplicateText | Mapping[str, Any]] | None = None,
    ids: Sequence[str] | None = None,
    **options: Any,
) -> Steps[DuplicatesResponse]:
    """Stored documents at or above the duplicate threshold for one text, several (`texts`), or stored
    documents (`ids`); `options`: `threshold`, `k`, `filter`, `include_metadata`, `mode`, `alpha`,
    `fusion`, `language`, `same_language`."""
    inputs = given(text=text, texts=list(texts) if texts is not None else None, ids=ids)
    request = DuplicatesRequest.model_validate({**inputs, **options})
    path = f"/v1/corpora/{segment(corpus)}/duplicates"
    return (yield call("POST", path, reads(DuplicatesResponse), idempotent=True, json=request))


def similarity(
    pairs: Sequence[tuple[str, str] | TextPair | Mapping[str, Any]] | None = None,
    *,
    source: str | None = None,
    targets: Sequence[str] | None = None,
) -> Steps[SimilarityResponse]:
    """Cosine similarity of text pairs (`(a, b)` tuples), or of `source` against each of `targets`."""
    listed = [{"a": p[0], "b": p[1]} if isinstance(p, tuple) else p for p in pairs] if pairs else pairs
    fields = given(pairs=listed, source=source, targets=list(targets) if targets is not None else None)
    request = SimilarityRequest.model_validate(fields)
    return (yield call("POST", "/v1/similarity", reads(SimilarityResponse), idempotent=True, json=request))


def compare(
    corpus: str, query: str, right: Side, *, left: Side | None = None, k: int = 10
) -> Steps[CompareResponse]:
    """The query ranked two ways (a side: `model`, `mode`, `alpha`, `fusion`; `left` unset: as `rank`)."""
    request = CompareRequest.model_validate({"query": query, "k": k, "right": right, **given(left=left)})
    path = f"/v1/corpora/{segment(corpus)}/compare"
    return (yield call("POST", path, reads(CompareResponse), idempotent=True, json=request))


def compare_metrics(
    corpus: str,
    right: Side,
    *,
    left: Side | None = None,
    metrics: Sequence[str] | None = None,
    limit: int | None = None,
) -> Steps[CompareMetricsResponse]:
    """Both sides scored over the corpus's judged queries (MRR, HasPositive@1, ... by default)."""
    fields = given(left=left, metrics=list(metrics) if metrics is not None else None, limit=limit)
    request = CompareMetricsRequest.model_validate({"right": right, **fields})
    path = f"/v1/corpora/{segment(corpus)}/compare/metrics"
    return (yield call("POST", path, reads(CompareMetricsResponse), idempotent=True, json=request))
