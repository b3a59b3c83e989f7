"""Admin operations (an admin key): retraining, jobs, the model registry, API keys; and `whoami`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

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
    WhoAmI,
)
from app.schemas.retraining import RetrainRequest
from pairank.client.calls import Steps, call, reads
from pairank.client.errors import ConflictError
from pairank.client.ops import given, segment


def retrain(corpus: str, **options: Any) -> Steps[JobOut]:
    """Queue a retraining of the corpus's model from its pairs; `options` as `POST /admin/retrain` takes
    them (`epochs`, `batch_size`, `learning_rate`, `cross_validation`, `auto_activate`, ...)."""
    request = RetrainRequest.model_validate({"corpus": corpus, **options})
    created: JobCreated = yield call(
        "POST", "/admin/retrain", reads(JobCreated), idempotent=False, json=request
    )
    return (yield from get_job(created.job_id))


def get_job(job_id: str) -> Steps[JobOut]:
    """A job by id (any kind)."""
    return (yield call("GET", f"/admin/jobs/{segment(job_id)}", reads(JobOut), idempotent=True))


def list_jobs(*, limit: int = 100) -> Steps[list[JobOut]]:
    """The newest jobs first (retraining, activation, evaluation and import jobs)."""
    listed: JobList = yield call(
        "GET", "/admin/jobs", reads(JobList), idempotent=True, params={"limit": limit}
    )
    return listed.jobs


def list_models() -> Steps[ModelList]:
    """Registered model versions (which one is active, their training and stored files)."""
    return (yield call("GET", "/admin/models", reads(ModelList), idempotent=True))


def activate(version: str) -> Steps[JobOut]:
    """Queue the activation of a registered version: its job builds the indexes, then serving switches."""
    path = f"/admin/models/{segment(version)}/activate"
    return (yield call("POST", path, reads(JobOut), idempotent=False))


def rollback() -> Steps[JobOut]:
    """Activate the version that was active before the active one (what the console's Roll back does)."""
    registered = yield from list_models()
    earlier = [(m.activated_at, m.version) for m in registered.models if not m.is_active and m.activated_at]
    if not earlier:
        raise ConflictError("no version was active before the active one: nothing to roll back to")
    return (yield from activate(max(earlier)[1]))


def delete_model(version: str) -> Steps[ModelDeleted]:
    """Forget a registered version and free the stored files no other model uses (409 for the active one
    and the rollback target)."""
    path = f"/admin/models/{segment(version)}"
    return (yield call("DELETE", path, reads(ModelDeleted), idempotent=True))


def create_key(
    scope: str, *, corpora: Sequence[str] | None = None, name: str | None = None
) -> Steps[ApiKeyCreated]:
    """Create a key (`read`, `write` or `admin`, optionally limited to corpora); its `key` is shown once."""
    listed = list(corpora) if corpora is not None else None
    request = ApiKeyCreate.model_validate({"scope": scope, **given(corpora=listed, name=name)})
    return (yield call("POST", "/admin/keys", reads(ApiKeyCreated), idempotent=False, json=request))


def list_keys() -> Steps[list[ApiKeyOut]]:
    """Every key, newest first (never the keys themselves)."""
    listed: ApiKeyList = yield call("GET", "/admin/keys", reads(ApiKeyList), idempotent=True)
    return listed.keys


def revoke_key(key_id: str) -> Steps[ApiKeyOut]:
    """Revoke a key: refused from the next request on."""
    return (yield call("DELETE", f"/admin/keys/{segment(key_id)}", reads(ApiKeyOut), idempotent=True))


def whoami() -> Steps[WhoAmI]:
    """The presented key's id, scope and corpora (never the key)."""
    return (yield call("GET", "/v1/whoami", reads(WhoAmI), idempotent=True))
