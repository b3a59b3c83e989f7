"""The service's process-wide state: database, the serving model and its indexes, readiness."""

from __future__ import annotations

import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from app.config import Settings
from app.db.engine import make_engine, make_session_factory
from app.services.encoder import Encoder
from app.services.errors import NotReadyError
from app.services.index_store import IndexStore
from pairank.models import resolve_model

log = logging.getLogger(__name__)


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
        self.settings = settings
        self.engine = engine or make_engine(settings.resolved_database_url)
        self.sessions: sessionmaker[Session] = make_session_factory(self.engine)
        self._state: ServingState | None = None
        self._ready = threading.Event()
        self._load_error: BaseException | None = None
        self._loader: threading.Thread | None = None
        # Background work (evaluations) runs one at a time off the request threads.
        self.jobs = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pairank-job")

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

    def start_loading(self) -> None:
        """Load the model and the indexes in a background thread (so /health answers meanwhile)."""
        self._loader = threading.Thread(target=self._load, name="pairank-loader", daemon=True)
        self._loader.start()

    def load_now(self) -> None:
        """Load synchronously (tests, command-line tools)."""
        self._load()
        if self._load_error is not None:
            raise self._load_error

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Block until ready or the timeout passes; returns readiness."""
        return self._ready.wait(timeout)

    def _load(self) -> None:
        try:
            spec = resolve_model(self.settings.model)
            log.info("loading model %s from %s", spec.version, spec.path)
            encoder = Encoder.load(
                spec,
                device=self.settings.device,
                batch_size=self.settings.encode_batch_size,
                max_seq_length=self.settings.max_seq_length,
            )
            store = IndexStore(self.settings.index_dir, encoder, self.settings.index_factory)
            if self.settings.seed_demo:
                from app.services.demo import seed_demo_corpus

                seed_demo_corpus(self.sessions)
            store.open_all(self.sessions)
            self._state = ServingState(encoder=encoder, indexes=store)
            self._ready.set()
            log.info("ready: model %s", spec.version)
        except Exception as error:  # noqa: BLE001 - reported through /ready instead of killing the server
            log.exception("loading failed")
            self._load_error = error

    def close(self) -> None:
        """Stop background work and release database connections."""
        self.jobs.shutdown(wait=True, cancel_futures=True)
        self.engine.dispose()
