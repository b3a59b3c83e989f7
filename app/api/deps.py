"""FastAPI dependencies: the runtime, the request's sessions, and the use cases built on them."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request

from app.config import Settings
from app.control.job_queue import JobService
from app.db.engine import RequestSessions
from app.serving.runtime import Runtime
from app.serving.state import Serving
from app.usecases.api_keys import ApiKeyService, KeyCache
from app.usecases.calibration.ranking import RankingCalibrationService
from app.usecases.calibration.threshold import CalibrationService
from app.usecases.compare import CompareService
from app.usecases.corpora import CorpusService
from app.usecases.duplicates import DuplicateService
from app.usecases.evaluations import EvaluationService
from app.usecases.imports import ImportService
from app.usecases.matching import MatchService
from app.usecases.model_admin import ModelAdminService
from app.usecases.pairs import PairService
from app.usecases.ranking import RankingService
from app.usecases.retraining import RetrainService


def get_runtime(request: Request) -> Runtime:
    """The runtime created by the app's lifespan."""
    runtime: Runtime = request.app.state.runtime
    return runtime


def get_request_sessions(request: Request) -> Iterator[RequestSessions]:
    """One database session for the whole request, shared by the key check and the handler."""
    sessions = RequestSessions(get_runtime(request).sessions)
    try:
        yield sessions
    finally:
        sessions.close()


RequestSessionsDep = Annotated[RequestSessions, Depends(get_request_sessions)]


@dataclass(frozen=True)
class RequestContext:
    """The runtime as a use case sees it, with the request's sessions (a `ServiceContext`)."""

    settings: Settings
    sessions: RequestSessions
    serving: Serving


def get_key_cache(request: Request) -> KeyCache:
    """This app's remembered key checks (app/main.py makes it)."""
    cache: KeyCache = request.app.state.key_cache
    return cache


def get_corpus_service(request: Request) -> CorpusService:
    """Corpus use cases on this app's runtime."""
    return CorpusService(get_runtime(request))


def get_ranking_service(request: Request, sessions: RequestSessionsDep) -> RankingService:
    """Ranking use cases on this app's runtime, reading through the request's session."""
    runtime = get_runtime(request)
    return RankingService(RequestContext(runtime.settings, sessions, runtime.serving))


def get_compare_service(request: Request) -> CompareService:
    """Side-by-side rankings on this app's runtime."""
    return CompareService(get_runtime(request))


def get_evaluation_service(request: Request) -> EvaluationService:
    """Evaluation use cases on this app's runtime."""
    return EvaluationService(get_runtime(request))


def get_calibration_service(request: Request) -> CalibrationService:
    """Calibration use cases on this app's runtime."""
    return CalibrationService(get_runtime(request))


def get_ranking_calibration_service(request: Request) -> RankingCalibrationService:
    """Ranking calibration on this app's runtime."""
    return RankingCalibrationService(get_runtime(request))


def get_pair_service(request: Request) -> PairService:
    """Training-pair use cases on this app's runtime."""
    return PairService(get_runtime(request))


def get_retrain_service(request: Request) -> RetrainService:
    """Retraining job use cases on this app's runtime."""
    return RetrainService(get_runtime(request))


def get_model_admin_service(request: Request) -> ModelAdminService:
    """Model registry use cases on this app's runtime."""
    return ModelAdminService(get_runtime(request))


def get_import_service(request: Request) -> ImportService:
    """Bulk-import use cases on this app's runtime."""
    return ImportService(get_runtime(request))


def get_api_key_service(request: Request) -> ApiKeyService:
    """API key management on this app's database."""
    return ApiKeyService(get_runtime(request).sessions, get_key_cache(request))


def get_duplicate_service(request: Request, sessions: RequestSessionsDep) -> DuplicateService:
    """Duplicates on this app's runtime, reading through the request's session."""
    runtime = get_runtime(request)
    return DuplicateService(RequestContext(runtime.settings, sessions, runtime.serving))


def get_match_service(request: Request) -> MatchService:
    """Match decisions and policies on this app's runtime (its sessions: a policy change reaches this
    process's opened corpora through their commit listener, which request sessions bypass)."""
    return MatchService(get_runtime(request))


def get_job_service(request: Request) -> JobService:
    """Jobs of every kind on this app's database."""
    return JobService(get_runtime(request).sessions)


RuntimeDep = Annotated[Runtime, Depends(get_runtime)]
CorpusServiceDep = Annotated[CorpusService, Depends(get_corpus_service)]
RankingServiceDep = Annotated[RankingService, Depends(get_ranking_service)]
CompareServiceDep = Annotated[CompareService, Depends(get_compare_service)]
EvaluationServiceDep = Annotated[EvaluationService, Depends(get_evaluation_service)]
CalibrationServiceDep = Annotated[CalibrationService, Depends(get_calibration_service)]
PairServiceDep = Annotated[PairService, Depends(get_pair_service)]
RankingCalibrationServiceDep = Annotated[RankingCalibrationService, Depends(get_ranking_calibration_service)]
RetrainServiceDep = Annotated[RetrainService, Depends(get_retrain_service)]
ModelAdminServiceDep = Annotated[ModelAdminService, Depends(get_model_admin_service)]
ImportServiceDep = Annotated[ImportService, Depends(get_import_service)]
JobServiceDep = Annotated[JobService, Depends(get_job_service)]
MatchServiceDep = Annotated[MatchService, Depends(get_match_service)]
DuplicateServiceDep = Annotated[DuplicateService, Depends(get_duplicate_service)]
ApiKeyServiceDep = Annotated[ApiKeyService, Depends(get_api_key_service)]
