"""Offline evaluation endpoints and corpus threshold calibration."""

from __future__ import annotations

from fastapi import APIRouter, Query

from app.api.deps import CalibrationServiceDep, EvaluationServiceDep, RankingCalibrationServiceDep
from app.api.params import CorpusNameParam, RecordIdParam
from app.api.ranking_io import rerank_request
from app.api.security import WRITE, ReadAccess, WriteAccess, check_corpus_access
from app.schemas.errors import COMMON_ERRORS, CONFLICT, NOT_FOUND, error_responses
from app.schemas.evaluations import (
    CalibrationOut,
    CalibrationRequest,
    EvaluationCreate,
    EvaluationList,
    EvaluationOut,
    RankingCalibrationOut,
    RankingCalibrationRequest,
)
from app.usecases.calibration.threshold import CalibrationInput
from app.usecases.evaluation_report import EvaluationSpec

router = APIRouter(tags=["evaluation"], responses=error_responses(*COMMON_ERRORS))


@router.post(
    "/v1/evaluations",
    status_code=202,
    response_model=EvaluationOut,
    responses={**NOT_FOUND, **CONFLICT},
)
def create_evaluation(
    body: EvaluationCreate, service: EvaluationServiceDep, caller: WriteAccess
) -> EvaluationOut:
    """Queue an evaluation of the serving model (and of a re-ranking stage: the corpus's, or the
    request's); poll GET /v1/evaluations/{id} for the result."""
    if body.corpus is not None:
        check_corpus_access(caller, body.corpus)
    rerank_request(body.rerank, caller)  # naming a re-ranker needs an admin key (403)
    spec = EvaluationSpec.from_request(body.model_dump(mode="json"))
    return EvaluationOut.model_validate(service.submit(spec, body.name))


@router.get("/v1/evaluations", response_model=EvaluationList)
def list_evaluations(
    service: EvaluationServiceDep, caller: ReadAccess, limit: int = Query(100, ge=1, le=1000)
) -> EvaluationList:
    """The newest evaluations (of corpora the key may see), without per-query details."""
    visible = [e for e in service.list(limit) if e.corpus_name is None or caller.allows_corpus(e.corpus_name)]
    # Listings leave the per-query breakdown out (it can be large); GET one evaluation for it.
    return EvaluationList(
        evaluations=[EvaluationOut.model_validate(e).model_copy(update={"per_query": None}) for e in visible]
    )


@router.get("/v1/evaluations/{evaluation_id}", response_model=EvaluationOut, responses=NOT_FOUND)
def get_evaluation(
    evaluation_id: RecordIdParam, service: EvaluationServiceDep, caller: ReadAccess
) -> EvaluationOut:
    """Status, metrics, per-query breakdown, model version and timing of one evaluation."""
    evaluation = service.get(evaluation_id)
    if evaluation.corpus_name is not None:
        check_corpus_access(caller, evaluation.corpus_name)
    return EvaluationOut.model_validate(evaluation)


@router.post(
    "/v1/corpora/{name}/calibrate", response_model=CalibrationOut, responses=NOT_FOUND, dependencies=[WRITE]
)
def calibrate(
    name: CorpusNameParam, body: CalibrationRequest, service: CalibrationServiceDep
) -> CalibrationOut:
    """Store the F1-optimal duplicate threshold for this corpus and the active model."""
    pairs = [CalibrationInput(p.text, p.document_id, p.document, p.label) for p in body.pairs]
    return CalibrationOut.model_validate(service.calibrate(name, pairs))


@router.post(
    "/v1/corpora/{name}/calibrate-ranking",
    response_model=RankingCalibrationOut,
    responses=error_responses(404, 409),
    dependencies=[WRITE],
)
def calibrate_ranking(
    name: CorpusNameParam, body: RankingCalibrationRequest, service: RankingCalibrationServiceDep
) -> RankingCalibrationOut:
    """Choose dense, lexical or hybrid ranking (alpha, fusion) on the corpus's stored pairs and store it."""
    return RankingCalibrationOut.model_validate(service.calibrate(name, body.metric, body.folds))
