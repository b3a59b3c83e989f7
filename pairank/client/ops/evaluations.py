"""Offline evaluations of the serving model: queue one, read them, wait for one to end."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from app.schemas.evaluations import EvaluationCreate, EvaluationList, EvaluationOut, LabeledText
from pairank.client.calls import Call, Steps, call, reads
from pairank.client.ops import given, segment
from pairank.client.ops.jobs import poll
from pairank.client.progress import RecordProgress

Labeled = LabeledText | Mapping[str, Any]


def create_evaluation(
    queries: Sequence[Labeled],
    qrels: Sequence[Mapping[str, Any]],
    *,
    corpus: str | None = None,
    documents: Sequence[Labeled] | None = None,
    **options: Any,
) -> Steps[EvaluationOut]:
    """Queue an evaluation of labeled queries against a corpus or inline `documents`; `options`: `name`,
    `mode`, `metrics`, `cutoffs`, `top_k`, `ranking`, `alpha`, `fusion`, `relevance_level`. Retried like
    a read: it changes nothing the service serves (a repeat at worst leaves a second report)."""
    inline = list(documents) if documents is not None else None
    fields = {"queries": list(queries), "qrels": list(qrels), **given(corpus=corpus, documents=inline)}
    request = EvaluationCreate.model_validate({**fields, **options})
    return (yield call("POST", "/v1/evaluations", reads(EvaluationOut), idempotent=True, json=request))


def list_evaluations(*, limit: int = 100) -> Steps[list[EvaluationOut]]:
    """The newest evaluations (without per-query values)."""
    read = reads(EvaluationList)
    listed = yield call("GET", "/v1/evaluations", read, idempotent=True, params={"limit": limit})
    return list(listed.evaluations)


def _read(evaluation_id: str) -> Call[EvaluationOut]:
    path = f"/v1/evaluations/{segment(evaluation_id)}"
    return call("GET", path, reads(EvaluationOut), idempotent=True)


def get_evaluation(evaluation_id: str) -> Steps[EvaluationOut]:
    """One evaluation: status, metrics, per-query values, model version and timing."""
    return (yield _read(evaluation_id))


def wait_evaluation(
    evaluation_id: str,
    timeout: float | None = None,
    *,
    poll_interval: float = 0.5,
    progress: RecordProgress = None,
) -> Steps[EvaluationOut]:
    """Poll an evaluation until it ends: the finished report; `JobFailedError` if it failed,
    `WaitTimeoutError` after `timeout` seconds (see `Job.wait`)."""
    description = f"evaluation {evaluation_id[:8]}"
    return (yield from poll(lambda: _read(evaluation_id), timeout, poll_interval, progress, description))
