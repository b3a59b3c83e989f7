"""Offline evaluation endpoints and corpus threshold calibration."""

from __future__ import annotations

from dataclasses import asdict

from fastapi import APIRouter, Query

from app.api.deps import CalibrationServiceDep, EvaluationServiceDep
from app.schemas.evaluations import (
    CalibrationOut,
    CalibrationRequest,
    EvaluationCreate,
    EvaluationList,
    EvaluationOut,
)
from app.services.calibration import CalibrationInput

router = APIRouter(tags=["evaluation"])


@router.post("/v1/evaluations", status_code=202, response_model=EvaluationOut)
def create_evaluation(body: EvaluationCreate, service: EvaluationServiceDep) -> EvaluationOut:
    """Queue an evaluation of the serving model; poll GET /v1/evaluations/{id} for the result."""
    return EvaluationOut(**asdict(service.submit(body.model_dump(mode="json"))))


@router.get("/v1/evaluations", response_model=EvaluationList)
def list_evaluations(service: EvaluationServiceDep, limit: int = Query(100, ge=1, le=1000)) -> EvaluationList:
    """The newest evaluations, without per-query details."""
    return EvaluationList(evaluations=[EvaluationOut(**asdict(e)) for e in service.list(limit)])


@router.get("/v1/evaluations/{evaluation_id}", response_model=EvaluationOut)
def get_evaluation(evaluation_id: str, service: EvaluationServiceDep) -> EvaluationOut:
    """Status, metrics, per-query breakdown, model version and timing of one evaluation."""
    return EvaluationOut(**asdict(service.get(evaluation_id)))


@router.post("/v1/corpora/{name}/calibrate", response_model=CalibrationOut)
def calibrate(name: str, body: CalibrationRequest, service: CalibrationServiceDep) -> CalibrationOut:
    """Store the F1-optimal duplicate threshold for this corpus and the active model."""
    pairs = [CalibrationInput(p.text, p.document_id, p.document, p.label) for p in body.pairs]
    return CalibrationOut(**asdict(service.calibrate(name, pairs)))
