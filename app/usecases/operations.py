"""What operators ask of a worker: is it ready (database included), and what do its metrics say."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from app.db.engine import database_problem
from app.db.repositories.corpora import CorpusRepository
from app.db.repositories.jobs import JobRepository
from app.db.repositories.model_versions import ModelRepository
from app.observability.metrics import ScrapeState
from app.serving.runtime import Runtime


@dataclass(frozen=True)
class Readiness:
    """GET /ready: `ready` only when the database answers and the model and indexes serve."""

    ready: bool
    status: str
    failing: list[str] = field(default_factory=list)
    detail: dict[str, Any] = field(default_factory=dict)


class OperationsService:
    """Readiness and metrics over one runtime."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    def readiness(self) -> Readiness:
        """One database round trip plus the model and index state of this worker."""
        runtime = self.runtime
        problem = database_problem(runtime.engine)
        detail: dict[str, Any] = {
            "database": {"ok": problem is None, **({"error": problem} if problem else {})}
        }
        failing = ["database"] if problem else []
        if runtime.serving.is_ready():
            state = runtime.serving.state()
            encoder = state.encoder
            detail.update(
                model=state.model_version,
                backend=encoder.backend,
                precision=encoder.precision,
                encoder=encoder.describe(),
                encoder_queue=encoder.batcher.queued_texts,
                indexes={opened.name: opened.size() for opened in state.store.opened()},
            )
            failing_checkpoints = runtime.serving.checkpoints.report()
            if failing_checkpoints:
                # Still ready: every change is in the database and served from memory; a restart would
                # replay more of the change log. Operators hear of it here and in /metrics.
                detail["degraded"] = ["checkpoint"]
                detail["checkpoints"] = failing_checkpoints
            status = "unavailable" if problem else "ready"
        else:
            failing.append("model")
            error = runtime.serving.load_error
            detail["model"] = f"loading failed: {error}" if error else "the model and indexes are loading"
            status = "failed" if error else "loading"
        return Readiness(not failing, status, failing, detail)

    def scrape(self) -> ScrapeState:
        """Database counts and this worker's model and index state, for one metrics scrape."""
        runtime = self.runtime
        scrape = ScrapeState(ready=runtime.serving.is_ready())
        with runtime.sessions() as session:
            scrape.documents = {c.name: c.document_count for c in CorpusRepository(session).all()}
            scrape.jobs = JobRepository(session).count_by_state()
            scrape.model_artifact_bytes = {
                m.version: int(m.artifact_bytes) for m in ModelRepository(session).list() if m.artifact_bytes
            }
            scrape.artifact_store_bytes = runtime.serving.registry.artifacts.stored_bytes(session)
        if not scrape.ready:
            return scrape
        state = runtime.serving.state()
        encoder = state.encoder
        scrape.model = {
            "version": encoder.version,
            "backend": encoder.backend,
            "precision": encoder.precision,
        }
        now = datetime.now(UTC)
        for opened in state.store.opened():
            if opened.last_checkpoint is not None:
                age = (now - opened.last_checkpoint).total_seconds()
                scrape.checkpoint_age_seconds[opened.name] = round(age, 3)
            scrape.changes_since_checkpoint[opened.name] = opened.changes_since_checkpoint
            scrape.index_vectors[opened.name] = opened.size()
        scrape.checkpoint_failures = runtime.serving.checkpoints.failures()
        return scrape
