"""Activation as a job: build a registered version's indexes while the current model serves, then switch.

`POST /admin/models/{version}/activate` (and a retraining job whose candidate passes its gate) only
enqueue an `activate` job; a worker runs it. The worker writes the registry's active version once the
new snapshots are on disk; serving processes follow the registry (the one holding the worker switches
at once), so a rollback is the same job for an older version.
"""

from __future__ import annotations

import logging
import uuid

from sqlalchemy.orm import Session, sessionmaker

from app.control import job_kinds
from app.control.job_context import FollowUp, JobContext, Outcome
from app.core.errors import ConflictError, NotFoundError
from app.db.admin_models import Job
from app.db.engine import transaction
from app.db.repositories.corpora import CorpusRepository
from app.db.repositories.jobs import MODEL_SLOT, JobRepository
from app.db.repositories.model_versions import ModelRepository
from app.db.repositories.query_sets import QuerySetRepository
from app.serving.context import ServiceContext
from pairank.models import BI_ENCODER

log = logging.getLogger(__name__)
KIND = job_kinds.ACTIVATE


def activation_job(version: str, requested_by: str | None = None) -> FollowUp:
    """The job that activates `version` (holding the one model-changing slot)."""
    params = {"version": version, **({"requested_by": requested_by} if requested_by else {})}
    return FollowUp(KIND, None, params, exclusive=MODEL_SLOT)


def enqueue_activation(sessions: sessionmaker[Session], version: str) -> Job:
    """Queue the activation of a registered version; 404 unknown, 409 for a cross-encoder (it re-ranks,
    it cannot serve) and while a model job is unfinished."""
    with transaction(sessions) as session:
        model = ModelRepository(session).get(version)
        if model is None:
            raise NotFoundError(f"model version {version!r} is not registered", field="version")
        if model.kind != BI_ENCODER:
            raise ConflictError(
                f"{version} is a {model.kind} (a re-ranker): only a bi-encoder can be activated; set it on a "
                "corpus's ranking instead (PUT /v1/corpora/{name}/ranking)",
                "version",
            )
        job = activation_job(version)
        row = JobRepository(session).add(
            str(uuid.uuid4()), job.kind, None, job.params, exclusive=job.exclusive
        )
        return row


def run_activation(service: ServiceContext, context: JobContext) -> Outcome:
    """Build every corpus's index with the version (progress per corpus), then switch and record it."""
    version = str(context.params["version"])
    context.progress("loading", version=version)
    # The version's files, verified, from any machine's registration (fetched here if need be).
    spec = service.serving.registry.spec(version, BI_ENCODER)
    serving = service.serving.current()
    current = serving.model_version if serving is not None else None
    if current == version:
        context.progress("done", version=version, note="already serving")
        return Outcome({"model_version": version})

    def indexed(done: int, total: int, corpus: str) -> None:
        context.progress("indexing", version=version, corpus=corpus, done=done, total=total)
        context.check_cancel()

    state = service.serving.build_state(spec, on_corpus=indexed)
    context.check_cancel()
    context.progress("swapping", version=version)
    service.serving.swap(state)  # writes the registry's active version: every other process follows it
    adopt_gate_calibration(service.sessions, version)
    context.progress("done", version=version, previous=current, corpora=len(state.store.opened()))
    log.info("activation job %s: %s is active (was %s)", context.job_id, version, current)
    # A match calibration holds for the model it was made with: calibrate those corpora again.
    recalibrate = [
        FollowUp(job_kinds.CALIBRATE_MATCH, opened.name, {"corpus": opened.name, "model": version})
        for opened in state.store.opened()
        if opened.settings.match_calibration
    ]
    # Query sets first: a few queries each, what the desk looks at right after a change; the match
    # calibrations (each ranks every judged query twice) after them.
    return Outcome({"model_version": version}, [*rescore_query_sets(service.sessions), *recalibrate])


def rescore_query_sets(sessions: sessionmaker[Session]) -> list[FollowUp]:
    """A scoring of every saved query set, after the ranking of every corpus changed."""
    with sessions() as session:
        repository = QuerySetRepository(session)
        found = [(query_set.id, repository.corpus_of(query_set).name) for query_set in repository.all()]
    params = {"trigger": "activation"}
    return [FollowUp(job_kinds.QUERY_SET, corpus, {**params, "query_set_id": i}) for i, corpus in found]


def adopt_gate_calibration(sessions: sessionmaker[Session], version: str) -> str | None:
    """The ranking mode a retrained model's gate chose on its corpus's dev pairs becomes that corpus's
    calibration (unless the corpus already holds one for this version); returns the corpus's name."""
    with transaction(sessions) as session:
        row = ModelRepository(session).get(version)
        gate = ((row.dev_metrics or {}).get("gate") or {}) if row is not None else {}
        calibration = gate.get("calibration")
        if not calibration or calibration.get("model") != version:
            return None
        corpus = CorpusRepository(session).get(str(calibration.get("corpus")))
        current = corpus.ranking_calibration if corpus is not None else None
        if corpus is None or (current and current.get("model") == version):
            return None
        corpus.ranking_calibration = {k: v for k, v in calibration.items() if k != "corpus"}
        return str(corpus.name)
