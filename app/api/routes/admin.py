"""Admin API (an admin key): retraining jobs, the model registry and API keys."""

from __future__ import annotations

from fastapi import APIRouter, Query

from app.api.deps import ApiKeyServiceDep, JobServiceDep, ModelAdminServiceDep, RetrainServiceDep
from app.api.params import KeyIdParam, ModelVersionParam, RecordIdParam
from app.api.security import ADMIN
from app.schemas.admin import (
    ApiKeyCreate,
    ApiKeyCreated,
    ApiKeyList,
    ApiKeyOut,
    JobCreated,
    JobList,
    JobOut,
    ModelDeleted,
    ModelList,
    ModelOut,
)
from app.schemas.errors import COMMON_ERRORS, CONFLICT, error_responses
from app.schemas.retraining import RetrainRequest
from app.usecases.pairs import PairInput
from app.usecases.retraining import RetrainCommand

router = APIRouter(
    prefix="/admin",
    tags=["admin"],
    dependencies=[ADMIN],
    responses=error_responses(*COMMON_ERRORS, 401, 403, 404),
)


@router.post("/retrain", status_code=202, response_model=JobCreated, responses=CONFLICT)
def retrain(body: RetrainRequest, service: RetrainServiceDep) -> JobCreated:
    """Queue a retraining job; 409 while a retraining or activation job is unfinished, or when the corpus's
    pairs cannot train and gate a model (fewer than 2 training pairs, no positive pair to gate on)."""
    choices = body.model_dump(mode="json", exclude_unset=True, exclude={"corpus", "dev"})
    dev = body.dev
    pairs = [PairInput(p.query, p.document_id, p.document, p.label) for p in (dev.pairs or [])] if dev else []
    command = RetrainCommand(body.corpus, choices, tuple(pairs), dev.fraction if dev else None)
    job = service.submit(command)
    return JobCreated(job_id=job.id, status=job.status)


@router.get("/jobs", response_model=JobList)
def list_jobs(service: JobServiceDep, limit: int = Query(100, ge=1, le=1000)) -> JobList:
    """Newest jobs first (retraining, activation, evaluation and import jobs)."""
    return JobList(jobs=[JobOut.model_validate(job) for job in service.list(limit)])


@router.get("/jobs/{job_id}", response_model=JobOut)
def get_job(job_id: RecordIdParam, service: JobServiceDep) -> JobOut:
    """Status, progress, timings, error and log tail of a job."""
    return JobOut.model_validate(service.get(job_id))


@router.post("/jobs/{job_id}/cancel", status_code=202, response_model=JobOut, responses=CONFLICT)
def cancel_job(job_id: RecordIdParam, service: JobServiceDep) -> JobOut:
    """Cancel a queued job, or ask the worker running it to stop (it does within a second); 409 for a
    job already finished."""
    return JobOut.model_validate(service.cancel(job_id))


@router.get("/models", response_model=ModelList)
def list_models(service: ModelAdminServiceDep) -> ModelList:
    """Registered versions with their training config, dev metrics, stored files and which one is active."""
    registered = service.list_models()
    return ModelList(
        models=[ModelOut.model_validate(m) for m in registered.models],
        artifact_store=registered.artifact_store,
        stored_bytes=registered.stored_bytes,
    )


@router.post("/models/{version:path}/activate", status_code=202, response_model=JobOut, responses=CONFLICT)
def activate_model(version: ModelVersionParam, service: ModelAdminServiceDep) -> JobOut:
    """Queue the activation of a registered version (also the rollback): its job builds the indexes."""
    return JobOut.model_validate(service.activate(version))


@router.delete("/models/{version:model_version}", response_model=ModelDeleted, responses=CONFLICT)
def delete_model(version: ModelVersionParam, service: ModelAdminServiceDep) -> ModelDeleted:
    """Delete a registered version and the stored files no other model or job uses (409 for the active
    and the previous version, the rollback target, and for one an unfinished job uses)."""
    return ModelDeleted.model_validate(service.delete(version))


@router.get("/keys", response_model=ApiKeyList)
def list_keys(service: ApiKeyServiceDep) -> ApiKeyList:
    """Every API key, newest first (ids, scopes and corpora; never the keys)."""
    return ApiKeyList(keys=[ApiKeyOut.model_validate(key) for key in service.list()])


@router.post("/keys", status_code=201, response_model=ApiKeyCreated)
def create_key(body: ApiKeyCreate, service: ApiKeyServiceDep) -> ApiKeyCreated:
    """Create a key; the response is the only place the key itself ever appears."""
    row, key = service.create(body.scope, body.corpora, body.name)
    return ApiKeyCreated(**ApiKeyOut.model_validate(row).model_dump(), key=key)


@router.delete("/keys/{key_id}", response_model=ApiKeyOut)
def revoke_key(key_id: KeyIdParam, service: ApiKeyServiceDep) -> ApiKeyOut:
    """Revoke a key: every worker refuses it from the next request on."""
    return ApiKeyOut.model_validate(service.revoke(key_id))
