"""Match decisions ("has this been checked before?"), their calibration, a corpus's policy and twins."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse, Response

from app.api.deps import MatchServiceDep, RuntimeDep
from app.api.params import CorpusNameParam
from app.api.security import READ, WRITE
from app.db.admin_models import Job
from app.schemas.admin import JobOut
from app.schemas.errors import COMMON_ERRORS, CONFLICT, NOT_FOUND, error_responses
from app.schemas.matching import (
    MatchBatchOut,
    MatchCalibrationOut,
    MatchCandidate,
    MatchOut,
    MatchPolicyIn,
    MatchPolicyOut,
    MatchRequest,
    TwinsOut,
)
from app.schemas.requests import filter_conditions
from app.search.ranked import RankedItem
from app.usecases.calibration.match import request_calibration
from app.usecases.matching import MatchResult

router = APIRouter(
    prefix="/v1/corpora/{name}",
    tags=["match decisions"],
    responses={**error_responses(*COMMON_ERRORS, 429), **NOT_FOUND, **CONFLICT},
)


def _candidate(item: RankedItem) -> MatchCandidate:
    return MatchCandidate(id=str(item.id), text=item.text, rank=item.rank, score=item.score,
                          probability=float(item.probability or 0.0), metadata=item.metadata)  # fmt: skip


def _result(result: MatchResult) -> MatchOut:
    return MatchOut(
        text=result.text,
        decision=result.decision,  # type: ignore[arg-type]
        match=_candidate(result.match) if result.match is not None else None,
        candidates=[_candidate(item) for item in result.candidates],
        policy=result.policy,
        model=result.model,
    )


@router.post("/match", response_model=MatchOut | MatchBatchOut, dependencies=[READ])
def match(name: CorpusNameParam, body: MatchRequest, service: MatchServiceDep) -> MatchOut | MatchBatchOut:
    """Decide whether each text's claim was checked before: `match` (auto-match, at the policy's
    precision), `review` (candidates for a person) or `new` (no earlier check is likely); every result
    carries a calibrated probability. 409 for a corpus not calibrated for the serving model."""
    texts = [body.text] if body.text is not None else list(body.texts or [])
    results = service.match(name, texts, filter_conditions(body.filter), body.include_metadata)
    if body.text is not None:
        return _result(results[0])
    return MatchBatchOut(results=[_result(r) for r in results])


@router.post(
    "/match/calibrate",
    response_model=MatchCalibrationOut,
    responses={202: {"model": JobOut, "description": "Queued: a larger corpus calibrates in a job."}},
    dependencies=[WRITE],
)
def calibrate(name: CorpusNameParam, body: MatchPolicyIn, runtime: RuntimeDep) -> Any:
    """Learn the corpus's match decisions from its judged pairs, open-world and forward in time, for the
    body's policy fields over the stored policy (`{}`: the stored policy); 200 with the report, or 202
    with a job to follow at GET /admin/jobs/{id} when the corpus has many judged queries."""
    outcome = request_calibration(runtime, name, body.changes())
    if isinstance(outcome, Job):
        return JSONResponse(JobOut.model_validate(outcome).model_dump(mode="json"), status_code=202)
    return MatchCalibrationOut.model_validate(outcome)


@router.get("/match/calibration", response_model=MatchCalibrationOut, dependencies=[READ])
def calibration(name: CorpusNameParam, service: MatchServiceDep) -> MatchCalibrationOut:
    """The corpus's current match calibration (404 when it has none)."""
    return MatchCalibrationOut.model_validate(service.calibration(name))


@router.get(
    "/match/calibration.png",
    response_class=Response,
    responses={200: {"content": {"image/png": {}}, "description": "The reliability and threshold curves."}},
    dependencies=[READ],
)
def calibration_plot(name: CorpusNameParam, service: MatchServiceDep) -> Response:
    """The calibration as a picture: predicted against observed, and precision and coverage by threshold."""
    return Response(service.calibration_plot(name), media_type="image/png")


@router.get("/match-policy", response_model=MatchPolicyOut, dependencies=[READ])
def get_policy(name: CorpusNameParam, service: MatchServiceDep) -> MatchPolicyOut:
    """The corpus's match policy (defaults where unset) and its calibrated thresholds."""
    return MatchPolicyOut.model_validate(service.policy(name))


@router.put("/match-policy", response_model=MatchPolicyOut, dependencies=[WRITE])
def set_policy(name: CorpusNameParam, body: MatchPolicyIn, service: MatchServiceDep) -> MatchPolicyOut:
    """Change the policy (unset fields keep their value); calibrated thresholds follow the new targets."""
    return MatchPolicyOut.model_validate(service.set_policy(name, body.changes()))


@router.get("/twins", response_model=TwinsOut, dependencies=[READ])
def twins(name: CorpusNameParam, service: MatchServiceDep) -> TwinsOut:
    """Groups of near-identical documents, as the last match calibration found them."""
    return TwinsOut.model_validate(service.twins(name))
