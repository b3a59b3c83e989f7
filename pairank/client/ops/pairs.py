"""Labeled pairs of a corpus (what retraining learns from) and judgements."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from app.schemas.admin import (
    JudgementIn,
    JudgementOut,
    PairCounts,
    PairIn,
    PairList,
    PairsAdded,
    PairsCreate,
    SplitRequest,
)
from pairank.client.calls import Steps, call, reads, reads_nothing
from pairank.client.ops import given, segment


def add_pairs(corpus: str, pairs: Sequence[PairIn | Mapping[str, Any]]) -> Steps[PairsAdded]:
    """Store labeled pairs (`query`, `document_id` or `document`, `label`, `split`?), all or nothing.
    Not retried: the API appends what it is given, so a second send would store them twice."""
    request = PairsCreate.model_validate({"pairs": list(pairs)})
    path = f"/v1/corpora/{segment(corpus)}/pairs"
    return (yield call("POST", path, reads(PairsAdded), idempotent=False, json=request))


def list_pairs(
    corpus: str, *, split: str | None = None, query: str | None = None, offset: int = 0, limit: int = 100
) -> Steps[PairList]:
    """A page of pairs (of one split, or of one exact query text) with the corpus's counts."""
    params = {"offset": offset, "limit": limit, **given(split=split, query=query)}
    path = f"/v1/corpora/{segment(corpus)}/pairs"
    return (yield call("GET", path, reads(PairList), idempotent=True, params=params))


def judge(
    corpus: str,
    query: str,
    document_id: str,
    label: float | None = None,
    *,
    unsure: bool = False,
    note: str | None = None,
) -> Steps[JudgementOut]:
    """Judge a stored document for a query as this key (a grade on the corpus's scale, or `unsure`): your
    judgement of the pair is changed in place, else added; the pair's label is every judge's aggregate."""
    fields = {"query": query, "document_id": document_id, "label": label, "unsure": unsure, "note": note}
    request = JudgementIn.model_validate({k: v for k, v in fields.items() if v is not None})
    path = f"/v1/corpora/{segment(corpus)}/pairs/judgement"
    return (yield call("PUT", path, reads(JudgementOut), idempotent=True, json=request))


def split_pairs(corpus: str, *, dev_fraction: float = 0.2, seed: int = 0) -> Steps[PairCounts]:
    """Assign every pair to train or dev, deterministically by query text."""
    request = SplitRequest.model_validate({"dev_fraction": dev_fraction, "seed": seed})
    path = f"/v1/corpora/{segment(corpus)}/pairs/split"
    return (yield call("POST", path, reads(PairCounts), idempotent=True, json=request))


def delete_pair(corpus: str, pair_id: int) -> Steps[None]:
    """Delete one pair."""
    path = f"/v1/corpora/{segment(corpus)}/pairs/{pair_id}"
    return (yield call("DELETE", path, reads_nothing, idempotent=True))
