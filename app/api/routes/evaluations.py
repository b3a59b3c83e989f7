"""Offline evaluation endpoints and corpus threshold calibration."""

from __future__ import annotations

from dataclasses import asdict

from fastapi import APIRouter, Query

from app.api.deps import CalibrationServiceDep, EvaluationServiceDep
from app.api.params import CorpusNameParam, RecordIdParam
from app.schemas.errors import COMMON_ERRORS, NOT_FOUND, error_responses
from app.schemas.evaluations import (
    CalibrationOut,
    CalibrationRequest,
    EvaluationCreate,
    EvaluationList,
    EvaluationOut,
)
from app.services.calibration import CalibrationInput

router = APIRouter(tags=["evaluation"], responses=error_responses(*COMMON_ERRORS))


@router.post("/v1/evaluations", status_code=202, response_model=EvaluationOut, responses=NOT_FOUND)
def create_evaluation(body: EvaluationCreate, service: EvaluationServiceDep) -> EvaluationOut:
    """Queue an evaluation of the serving model; poll GET /v1/evaluations/{id} for the result."""
    return EvaluationOut(**asdict(service.submit(body.model_dump(mode="json"))))


@router.get("/v1/evaluations", response_model=EvaluationList)
def list_evaluations(service: EvaluationServiceDep, limit: int = Query(100, ge=1, le=1000)) -> EvaluationList:
    """The newest evaluations, without per-query details."""
    return EvaluationList(evaluations=[EvaluationOut(**asdict(e)) for e in service.list(limit)])


@router.get("/v1/evaluations/{evaluation_id}", response_model=EvaluationOut, responses=NOT_FOUND)
def get_evaluation(evaluation_id: RecordIdParam, service: EvaluationServiceDep) -> EvaluationOut:
    """Status, metrics, per-query breakdown, model version and timing of one evaluation."""
    return EvaluationOut(**asdict(service.get(evaluation_id)))


@router.post("/v1/corpora/{name}/calibrate", response_model=CalibrationOut, responses=NOT_FOUND)
def calibrate(
    name: CorpusNameParam, body: CalibrationRequest, service: CalibrationServiceDep
) -> CalibrationOut:
    """Store the F1-optimal duplicate threshold for this corpus and the active model."""
    pairs = [CalibrationInput(p.text, p.document_id, p.document, p.label) for p in body.pairs]
    return CalibrationOut(**asdict(service.calibrate(name, pairs)))
