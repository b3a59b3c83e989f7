"""Judgements by several judges: list, edit and delete your own, agreement, export and import."""

from __future__ import annotations

from typing import Literal

from app.schemas.workbench import (
    Agreement,
    JudgementEdit,
    JudgementPage,
    JudgementRecord,
    JudgementScaleIn,
    JudgementScaleOut,
    JudgementsImport,
    JudgementsImported,
)
from pairank.client.calls import Pages, Steps, call, reads, reads_nothing
from pairank.client.ops import given, segment


def _text(response: object) -> str:
    return str(getattr(response, "text", ""))


def list_judgements(
    corpus: str,
    *,
    judged_by: str | None = None,
    query: str | None = None,
    grade: float | None = None,
    unsure: bool | None = None,
    disagreement: bool | None = None,
    cursor: str | None = None,
    limit: int = 100,
) -> Steps[JudgementPage]:
    """A page of every judge's judgements (oldest first), filtered; pass `next_cursor` for the next."""
    params = {"limit": limit, **given(judged_by=judged_by, query=query, grade=grade, cursor=cursor)}
    params.update(given(unsure=unsure, disagreement=disagreement))
    path = f"/v1/corpora/{segment(corpus)}/judgements"
    return (yield call("GET", path, reads(JudgementPage), idempotent=True, params=params))


def iter_judgements(corpus: str, *, page_size: int = 500) -> Pages[JudgementRecord]:
    """Every judgement of the corpus, page by page."""

    def fetch(cursor: str) -> Steps[tuple[list[JudgementRecord], str | None]]:
        page = yield from list_judgements(corpus, cursor=cursor, limit=page_size)
        return page.judgements, page.next_cursor

    return Pages(fetch, start="0")


def edit_judgement(
    corpus: str,
    judgement_id: int,
    label: float | None = None,
    *,
    unsure: bool = False,
    note: str | None = None,
) -> Steps[JudgementRecord]:
    """Change your own judgement (403 for another judge's)."""
    fields = {"label": label, "unsure": unsure, "note": note}
    request = JudgementEdit.model_validate({k: v for k, v in fields.items() if v is not None})
    path = f"/v1/corpora/{segment(corpus)}/judgements/{judgement_id}"
    return (yield call("PATCH", path, reads(JudgementRecord), idempotent=True, json=request))


def delete_judgement(corpus: str, judgement_id: int) -> Steps[None]:
    """Delete your own judgement (a pair left unjudged goes with it)."""
    path = f"/v1/corpora/{segment(corpus)}/judgements/{judgement_id}"
    return (yield call("DELETE", path, reads_nothing, idempotent=True))


def agreement(corpus: str) -> Steps[Agreement]:
    """Cohen's kappa per pair of judges and Krippendorff's alpha over all."""
    path = f"/v1/corpora/{segment(corpus)}/judgements/agreement"
    return (yield call("GET", path, reads(Agreement), idempotent=True))


def export_judgements(corpus: str, format: Literal["trec", "jsonl", "csv"] = "trec") -> Steps[str]:  # noqa: A002
    """The judgements as TREC qrels (aggregate grades), the judged queries as JSON lines, or CSV rows."""
    path = f"/v1/corpora/{segment(corpus)}/judgements/export"
    return (yield call("GET", path, _text, idempotent=True, params={"format": format}))


def import_judgements(
    corpus: str, text: str, format: Literal["jsonl", "csv"] = "jsonl"
) -> Steps[JudgementsImported]:  # noqa: A002
    """Store a file's judged pairs as your judgements (all or nothing; a broken line: 422 with its number).
    Retried safely: a second send changes your judgements to the same grades."""
    request = JudgementsImport.model_validate({"format": format, "text": text})
    path = f"/v1/corpora/{segment(corpus)}/judgements/import"
    return (yield call("POST", path, reads(JudgementsImported), idempotent=True, json=request))


def set_judgement_scale(corpus: str, scale: Literal["binary", "graded"]) -> Steps[JudgementScaleOut]:
    """Change the corpus's judging scale (409 while judgements are off the new one)."""
    request = JudgementScaleIn.model_validate({"judgement_scale": scale})
    path = f"/v1/corpora/{segment(corpus)}/judgements/scale"
    return (yield call("PUT", path, reads(JudgementScaleOut), idempotent=True, json=request))
