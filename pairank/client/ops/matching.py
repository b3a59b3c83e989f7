"""Match decisions ("has this been checked before?"): decide texts, calibrate, a corpus's policy, twins."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Sequence
from typing import Any

import httpx

from app.schemas.matching import (
    MatchBatchOut,
    MatchCalibrationOut,
    MatchOut,
    MatchPolicyIn,
    MatchPolicyOut,
    MatchRequest,
    TwinsOut,
)
from pairank.client.calls import Pause, Steps, call, reads
from pairank.client.errors import NotFoundError
from pairank.client.ops import segment


def match(corpus: str, text: str, **options: Any) -> Steps[MatchOut]:
    """One text's decision (`match`, `review` or `new`) with calibrated probabilities; `options`:
    `filter`, `include_metadata`. A corpus without a calibration for the serving model: ConflictError."""
    request = MatchRequest.model_validate({"text": text, **options})
    path = f"/v1/corpora/{segment(corpus)}/match"
    return (yield call("POST", path, reads(MatchOut), idempotent=True, json=request))


def match_many(corpus: str, texts: Sequence[str], **options: Any) -> Steps[list[MatchOut]]:
    """Several texts' decisions, in order (up to the server's `max_texts_per_request`)."""
    request = MatchRequest.model_validate({"texts": list(texts), **options})
    path = f"/v1/corpora/{segment(corpus)}/match"
    answer = yield call("POST", path, reads(MatchBatchOut), idempotent=True, json=request)
    return list(answer.results)


def _calibration(corpus: str) -> Any:
    return call("GET", f"/v1/corpora/{segment(corpus)}/match/calibration", reads(MatchCalibrationOut),
                idempotent=True)  # fmt: skip


def _accepted_or_report(response: httpx.Response) -> MatchCalibrationOut | None:
    """The report of a calibration made within the request; None when it was queued as a job (202)."""
    return None if response.status_code == 202 else MatchCalibrationOut.model_validate_json(response.content)


def calibrate_match(
    corpus: str, *, timeout: float | None = 1800, poll_interval: float = 2.0, **policy: Any
) -> Steps[MatchCalibrationOut]:
    """Calibrate the corpus's decisions from its judged pairs (`policy`: any match-policy field for this
    calibration and after); a large corpus's calibration runs as a job, which this waits for by reading
    the calibration until a new one is stored (a read key suffices)."""
    before = None
    with contextlib.suppress(NotFoundError):  # not calibrated yet
        before = (yield _calibration(corpus)).calibrated_at
    request = MatchPolicyIn.model_validate(policy)
    path = f"/v1/corpora/{segment(corpus)}/match/calibrate"
    report = yield call("POST", path, _accepted_or_report, idempotent=False, json=request)
    deadline = None if timeout is None else time.monotonic() + timeout
    while report is None:
        with contextlib.suppress(NotFoundError):  # the job has not stored one yet
            found = yield _calibration(corpus)
            if found.calibrated_at != before:
                return found
        if deadline is not None and time.monotonic() > deadline:
            raise TimeoutError(f"no new match calibration of {corpus!r} after {timeout:g} s")
        yield Pause(poll_interval)
    return report


def match_calibration(corpus: str) -> Steps[MatchCalibrationOut]:
    """The corpus's current match calibration (NotFoundError when it has none)."""
    return (yield _calibration(corpus))


def match_policy(corpus: str) -> Steps[MatchPolicyOut]:
    """The corpus's match policy and the thresholds it implies."""
    path = f"/v1/corpora/{segment(corpus)}/match-policy"
    return (yield call("GET", path, reads(MatchPolicyOut), idempotent=True))


def set_match_policy(corpus: str, **changes: Any) -> Steps[MatchPolicyOut]:
    """Change policy fields (the others keep their value); calibrated thresholds follow at once."""
    request = MatchPolicyIn.model_validate(changes)  # an explicit None (recency_days) turns it off
    path = f"/v1/corpora/{segment(corpus)}/match-policy"
    return (yield call("PUT", path, reads(MatchPolicyOut), idempotent=True, json=request))


def twins(corpus: str) -> Steps[TwinsOut]:
    """The corpus's groups of near-identical documents, as its last calibration found them."""
    path = f"/v1/corpora/{segment(corpus)}/twins"
    return (yield call("GET", path, reads(TwinsOut), idempotent=True))
