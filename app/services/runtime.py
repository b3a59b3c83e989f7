"""The service's process-wide state: database, the serving model and its indexes, readiness, swaps."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker
from threadpoolctl import threadpool_limits

from app.config import Settings
from app.db.admin_repository import ModelRepository
from app.db.engine import make_engine, make_session_factory, transaction
from app.observability.metrics import ENCODER_METRICS
from app.services.encoder import Encoder
from app.services.errors import NotReadyError
from app.services.follower import ChangeWaiter
from app.services.index_store import IndexStore
from app.services.registry import active_model_spec
from encoders.batcher import BatchingConfig
from encoders.loader import EncoderOptions
from pairank.locks import SharedExclusiveLock
from pairank.models import ModelSpec, resolve_model

log = logging.getLogger(__name__)
_RETIRE_AFTER_SECONDS = 30.0


@dataclass(frozen=True)
class ServingState:
    """One model and the indexes built with it; a request reads it once, so it never mixes two models."""

    encoder: Encoder
    indexes: IndexStore

    @property
    def model_version(self) -> str:
        """The version every response using this state names."""
        return self.encoder.version


class Runtime:
    """Owns the engine and the serving state; loads the model and indexes in the background."""

    def __init__(self, settings: Settings, engine: Engine | None = None) -> None:
        # Searches are small matrix products on many request threads at once: a multi-threaded BLAS
        # spins its threads against each other and the encoder's (measured: 2.4x more requests/s at 32
        # clients with one BLAS thread per call).
        threadpool_limits(limits=1, user_api="blas")
        self.settings = settings
        self.engine = engine or make_engine(settings.resolved_database_url)
        self.sessions: sessionmaker[Session] = make_session_factory(self.engine)
        self._state: ServingState | None = None
        self._ready = threading.Event()
        self._load_error: BaseException | None = None
        self._loader: threading.Thread | None = None
        # Document writes hold it shared; a model swap holds it exclusively to catch up and switch.
        self.write_gate = SharedExclusiveLock()
        self._swap_lock = threading.Lock()
        self._closed = threading.Event()
        self._worker_thread: threading.Thread | None = None

    @property
    def load_error(self) -> BaseException | None:
        """The exception that stopped loading, if any."""
        return self._load_error

    def is_ready(self) -> bool:
        """True once the model and every corpus index are loaded."""
        return self._ready.is_set()

    def state(self) -> ServingState:
        """The current serving state; raises NotReadyError while loading."""
        state = self._state
        if state is None or not self._ready.is_set():
            raise NotReadyError("the model and indexes are still loading; retry shortly (see GET /ready)")
        return state

    def serving_version(self) -> str | None:
        """The model version serving now, None while loading (for logs and metrics)."""
        state = self._state
        return state.model_version if state is not None and self._ready.is_set() else None

    def start_loading(self) -> None:
        """Load the model and the indexes in a background thread (so /health answers meanwhile)."""
        self._loader = threading.Thread(target=self._load, name="pairank-loader", daemon=True)
        self._loader.start()

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Block until ready or the timeout passes; returns readiness."""
        return self._ready.wait(timeout)

    def load_encoder(self, spec: ModelSpec) -> Encoder:
        """Load a model with the service's backend, device and batching settings."""
        settings = self.settings
        log.info("loading model %s from %s", spec.version, spec.path)
        options = EncoderOptions(
            backend=settings.encoder_backend,
            precision=settings.encoder_precision,
            cache_root=settings.export_dir,
            device=settings.device,
            max_seq_length=settings.max_seq_length,
            threads=settings.encoder_threads,
        )
        encoder = Encoder.load(
            spec,
            options,
            batching=BatchingConfig(
                max_batch_texts=settings.encode_batch_size,
                max_batch_tokens=settings.max_batch_tokens,
                wait_ms=settings.batch_wait_ms,
                max_queued_texts=settings.max_queued_texts,
                enabled=settings.micro_batching,
            ),
            observer=ENCODER_METRICS,
        )
        log.info("model %s runs on %s %s", spec.version, encoder.backend, encoder.precision)
        return encoder

    def build_state(
        self,
        spec: ModelSpec,
        encoder: Encoder | None = None,
        on_corpus: Callable[[int, int, str], None] | None = None,
    ) -> ServingState:
        """Open (map and replay, or build) every corpus index for a model; nothing is served yet."""
        encoder = encoder or self.load_encoder(spec)
        store = IndexStore(self.settings.index_dir, encoder, self.sessions)
        store.open_all(on_corpus)
        return ServingState(encoder=encoder, indexes=store)

    def _load(self) -> None:
        try:
            if self.settings.seed_demo:
                from app.services.demo import seed_demo_corpus

                seed_demo_corpus(self.sessions)
            state = self.build_state(active_model_spec(self.sessions, self.settings.model))
            with transaction(self.sessions) as session:
                ModelRepository(session).record_encoder(state.model_version, state.encoder.describe())
            self._state = state
            self._ready.set()
            log.info("ready: model %s", state.model_version)
            if self.settings.sync_seconds > 0:
                threading.Thread(target=self._follow_database, name="pairank-sync", daemon=True).start()
            threading.Thread(target=self._checkpoint_loop, name="pairank-checkpoint", daemon=True).start()
            if self.settings.embedded_worker:
                self.start_job_worker()
        except Exception as error:  # noqa: BLE001 - reported through /ready instead of killing the server
            log.exception("loading failed")
            self._load_error = error

    def start_job_worker(self) -> None:
        """Run queued jobs in a thread of this process until it closes (`PAIRANK_EMBEDDED_WORKER`)."""
        from app.services.jobs.worker import JobWorker

        worker = JobWorker(self)
        self._worker_thread = threading.Thread(
            target=worker.run_forever, args=(self._closed,), name="pairank-job-worker", daemon=True
        )
        self._worker_thread.start()

    def _follow_database(self) -> None:
        # Other workers (uvicorn --workers N, other replicas) write documents and activate models too.
        waiter = ChangeWaiter(self.engine)
        try:
            while not self._closed.is_set():
                waiter.wait(self.settings.sync_seconds, self._closed)
                if self._closed.is_set():
                    return
                try:
                    self.follow_once()
                except Exception:  # noqa: BLE001 - keep serving what we have, try again next tick
                    log.exception("following the database failed")
        finally:
            waiter.close()

    def follow_once(self) -> None:
        """Apply other workers' document writes and a newly activated model (read-only on the registry)."""
        self._follow_registry()
        state = self._state
        if state is not None:
            state.indexes.follow()

    def _follow_registry(self) -> None:
        # The worker that ran a job or got an activation swaps at once and writes the registry; the others
        # notice the registry's new active version here and only switch (its snapshots are on disk).
        with self.sessions() as session:
            active = ModelRepository(session).active()
            target = (active.version, active.path) if active is not None else None
        current = self._state
        if (
            target is None
            or current is None
            or target[0] == current.model_version
            or self._swap_lock.locked()
        ):
            return
        log.info("registry's active model is %s: switching", target[0])
        self.swap(self.build_state(resolve_model(target[1])), activate=False)

    def swap(self, new_state: ServingState, *, activate: bool = True) -> None:
        """Make a fully built state the serving one, atomically for requests.

        `activate` records it as the registry's active model: only the worker performing an activation
        does that; a follower switching to what the registry already says must not write it back.
        """
        with self._swap_lock, self.write_gate.exclusive():
            # Writes made while the new indexes were being built: catch up before switching.
            new_state.indexes.follow()
            with transaction(self.sessions) as session:
                repository = ModelRepository(session)
                if activate:
                    repository.activate(new_state.model_version)
                    repository.record_encoder(new_state.model_version, new_state.encoder.describe())
            old, self._state = self._state, new_state
            self._ready.set()
        log.info("now serving model %s", new_state.model_version)
        if old is not None and old.encoder is not new_state.encoder:
            # Requests that read the old state a moment ago may still be encoding with it.
            retire = threading.Timer(_RETIRE_AFTER_SECONDS, old.encoder.close)
            retire.daemon = True
            retire.start()

    def _checkpoint_loop(self) -> None:
        # Snapshots are written here, never on a request's path.
        settings = self.settings
        while not self._closed.wait(min(5.0, settings.checkpoint_seconds)):
            self.checkpoint_due(settings.checkpoint_changes, settings.checkpoint_seconds)

    def checkpoint_due(self, max_changes: int, max_seconds: float) -> int:
        """Checkpoint every index with enough (or old enough) changes; returns how many were written."""
        state = self._state
        written = 0
        if state is None:
            return 0
        for opened in state.indexes.due(max_changes, max_seconds):
            try:
                written += state.indexes.checkpoint(opened)
            except Exception:  # noqa: BLE001 - the log still holds every change; try again later
                log.exception("checkpoint of %s failed", opened.name)
        return written

    def close(self) -> None:
        """Stop background work, checkpoint what changed (a faster next start), release connections."""
        self._closed.set()
        if self._worker_thread is not None:
            self._worker_thread.join(60)  # a running job is cancelled and recorded before the exit
        if self._state is not None and self._ready.is_set():
            self.checkpoint_due(1, 0.0)
        if self._state is not None:
            self._state.encoder.close()
        self.engine.dispose()
