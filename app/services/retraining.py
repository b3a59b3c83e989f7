"""Admin use cases: start, list, inspect and cancel retraining jobs (one at a time)."""

from __future__ import annotations

import threading
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from app.db.admin_models import Job
from app.db.admin_repository import JobRepository, ModelRepository
from app.db.engine import transaction
from app.db.repository import CorpusRepository
from app.services.corpora import corpus_not_found
from app.services.errors import ConflictError, InvalidInputError, NotFoundError
from app.services.gating import default_gate_metric
from app.services.pairs import PairInput, PairService
from app.services.retrain_job import RetrainJob, RetrainParams
from app.services.runtime import Runtime
from evaluation.metrics import parse_metric

# Defaults for a retraining request: BSC with example-based shuffling, the paper's settings (section 5.2).
RETRAIN_DEFAULTS: dict[str, Any] = {
    "loss": "bsc",
    "loss_params": {"normalization": "l2_rows", "temperature": 0.05, "symmetric": True},
    "shuffling": "example",
    "shuffle_params": {"group_size": 8},
    "epochs": 3,
    "batch_size": 30,
    "learning_rate": 2e-5,
    "max_seq_length": 90,
    "seed": 42,
    "auto_activate": True,
    "min_improvement": 0.0,
    "dev_fraction": 0.2,
}

_PASSTHROUGH = (
    "loss", "loss_params", "shuffling", "shuffle_params", "epochs", "batch_size", "learning_rate",
    "max_seq_length", "seed", "auto_activate", "min_improvement",
)  # fmt: skip


@dataclass(frozen=True)
class JobInfo:
    """A job as the admin API shows it."""

    id: str
    kind: str
    status: str
    corpus: str | None
    params: dict[str, Any]
    progress: dict[str, Any] | None
    error: str | None
    log_tail: str | None
    model_version: str | None
    gate: dict[str, Any] | None
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None


def job_info(job: Job) -> JobInfo:
    """Shape a job row for the API."""
    return JobInfo(
        job.id, job.kind, job.status, job.corpus_name, job.params, job.progress, job.error, job.log_tail,
        job.model_version, job.gate, job.created_at, job.started_at, job.finished_at,
    )  # fmt: skip


class RetrainService:
    """Starts retraining jobs and tracks the one running in this process."""

    _lock = threading.Lock()

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    def _params(self, request: dict[str, Any]) -> RetrainParams:
        values = {**RETRAIN_DEFAULTS, **{k: v for k, v in request.items() if v is not None}}
        with self.runtime.sessions() as session:
            corpus = CorpusRepository(session).get(values["corpus"])
            if corpus is None:
                raise corpus_not_found(values["corpus"])
            kind = corpus.kind
            active = ModelRepository(session).active()
        gate_metric = values.get("gate_metric") or default_gate_metric(kind)
        try:
            parse_metric(gate_metric)
        except ValueError as error:
            raise InvalidInputError(f"gate_metric: {error}", "gate_metric") from error
        dev = values.get("dev") or {}
        dev_pairs = [
            PairInput(p["query"], p.get("document_id"), p.get("document"), p["label"])
            for p in dev.get("pairs") or []
        ]
        base = values.get("base_model") or (
            active.path if active is not None else self.runtime.settings.model
        )
        passthrough = {key: values[key] for key in _PASSTHROUGH}
        return RetrainParams(
            corpus=values["corpus"],
            kind=kind,
            base_model=base,
            gate_metric=gate_metric,
            dev_fraction=float(dev.get("fraction", values["dev_fraction"])),
            dev_pairs=dev_pairs or None,
            **passthrough,
        )

    def submit(self, request: dict[str, Any]) -> JobInfo:
        """Validate and start a retraining job; ConflictError while another job is unfinished."""
        params = self._params(request)
        train, dev = PairService(self.runtime).export(
            params.corpus, params.dev_pairs, params.dev_fraction, params.seed
        )
        if len(train) < 2:
            raise InvalidInputError(
                f"corpus {params.corpus!r} has {len(train)} training pairs; need at least 2", "corpus"
            )
        if not any(p.label > 0 for p in dev):
            raise InvalidInputError("dev: the dev set has no positive pair to evaluate the gate on", "dev")
        self.runtime.state()  # the gate compares against the serving model: 503 while loading
        with self._lock:
            with transaction(self.runtime.sessions) as session:
                repository = JobRepository(session)
                running = repository.unfinished("retrain")
                if running is not None:
                    raise ConflictError(
                        f"job {running.id} is {running.status}; one job runs at a time", "job"
                    )
                job_id = str(uuid.uuid4())
                public = {k: v for k, v in request.items() if k != "dev"} | {
                    "dev_pairs": len(dev),
                    "train_pairs": len(train),
                }
                info = job_info(repository.add(job_id, "retrain", params.corpus, public))
            job = RetrainJob(self.runtime, job_id, params)
            self.runtime.current_job = job
            threading.Thread(target=job.run, name=f"pairank-retrain-{job_id[:8]}", daemon=True).start()
        return info

    def get(self, job_id: str) -> JobInfo:
        """One job."""
        with self.runtime.sessions() as session:
            job = JobRepository(session).get(job_id)
            if job is None:
                raise NotFoundError(f"job {job_id!r} does not exist", field="id")
            return job_info(job)

    def list(self, limit: int = 100) -> list[JobInfo]:
        """Newest jobs first."""
        with self.runtime.sessions() as session:
            return [job_info(job) for job in JobRepository(session).list_recent(limit)]

    def cancel(self, job_id: str) -> JobInfo:
        """Cancel a queued or running job of this process."""
        info = self.get(job_id)
        if info.status not in ("queued", "running"):
            raise ConflictError(f"job {job_id} is already {info.status}", "id")
        job = self.runtime.current_job
        if not isinstance(job, RetrainJob) or job.job_id != job_id:
            raise ConflictError(f"job {job_id} is not running in this process", "id")
        job.cancel()
        return info
