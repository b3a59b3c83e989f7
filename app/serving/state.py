"""The serving state of one process: one model and its indexes, readiness, and atomic swaps."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy.orm import Session, sessionmaker

from app.config import Settings
from app.core.errors import NotReadyError
from app.db.corpus_settings import SettingsChanges
from app.db.engine import transaction
from app.db.repositories.model_versions import ModelRepository
from app.observability.metrics import ENCODER_METRICS
from app.serving.checkpoints import CheckpointHealth
from app.serving.encoder import Encoder, batching_config, encoder_options
from app.serving.other_models import OtherModels
from app.serving.registry import ModelRegistry
from app.serving.reranker import Rerankers
from app.stores.artifacts.factory import open_artifact_store
from app.stores.factory import open_store
from app.stores.port import VectorStore
from pairank.locks import SharedExclusiveLock
from pairank.models import ModelSpec

log = logging.getLogger(__name__)
_RETIRE_AFTER_SECONDS = 30.0
BUSY_CHANGES_FACTOR = 10


@dataclass(frozen=True)
class ServingState:
    """One model and the indexes built with it; a request reads it once, so it never mixes two models."""

    encoder: Encoder
    store: VectorStore

    @property
    def model_version(self) -> str:
        """The version every response using this state names."""
        return self.encoder.version


class Serving:
    """What this process answers with, and the only place that switches it."""

    def __init__(self, settings: Settings, sessions: sessionmaker[Session]) -> None:
        self.settings = settings
        self.sessions = sessions
        # Registered models and their files (PAIRANK_ARTIFACT_STORE), loadable on any machine.
        self.registry = ModelRegistry(sessions, open_artifact_store(settings, sessions), settings.export_dir)
        # Registered cross-encoders that corpora re-rank with (or a request names), loaded on first use.
        self.rerankers = Rerankers(settings, self.registry)
        self._state: ServingState | None = None
        self._ready = threading.Event()
        self._load_error: BaseException | None = None
        # Document writes hold it shared; a model swap holds it exclusively to catch up and switch.
        self.write_gate = SharedExclusiveLock()
        self._swap_lock = threading.Lock()
        # Swaps made so far: a registry read taken before the latest swap is stale (see `swap`).
        self._swaps = 0
        # Registered versions other than the serving one, loaded for comparisons (`compare`).
        self.other_models = OtherModels(self.load_encoder)
        # Failed checkpoints (a full disk): reported by /ready and /metrics, retried with backoff.
        self.checkpoints = CheckpointHealth()

    @property
    def load_error(self) -> BaseException | None:
        """The exception that stopped loading, if any."""
        return self._load_error

    def failed(self, error: BaseException) -> None:
        """Record why loading stopped (reported by /ready)."""
        self._load_error = error

    def is_ready(self) -> bool:
        """True once the model and every corpus index are loaded."""
        return self._ready.is_set()

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Block until ready or the timeout passes; returns readiness."""
        return self._ready.wait(timeout)

    def current(self) -> ServingState | None:
        """The state serving now, or None before the first one (never raises)."""
        return self._state if self._ready.is_set() else None

    def version(self) -> str | None:
        """The model version serving now, None while loading (for logs and metrics)."""
        state = self.current()
        return state.model_version if state is not None else None

    def state(self) -> ServingState:
        """The current serving state; raises NotReadyError while loading."""
        state = self.current()
        if state is None:
            raise NotReadyError("the model and indexes are still loading; retry shortly (see GET /ready)")
        return state

    def swapping(self) -> bool:
        """True while a swap is under way (a follower then leaves the registry to it)."""
        return self._swap_lock.locked()

    def swaps(self) -> int:
        """How many swaps this process has made (taken before reading the registry, see `swap`)."""
        return self._swaps

    def load_encoder(self, spec: ModelSpec) -> Encoder:
        """Load a model with the service's backend, device and batching settings."""
        settings = self.settings
        log.info("loading model %s from %s", spec.version, spec.path)
        options = encoder_options(settings, settings.max_seq_length)
        batching = batching_config(settings)
        encoder = Encoder.load(spec, options, batching=batching, observer=ENCODER_METRICS)
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
        store = open_store(self.settings, encoder, self.sessions)
        store.open_all(on_corpus)
        return ServingState(encoder=encoder, store=store)

    def start(self, state: ServingState) -> None:
        """Serve the first state (the registry's active model at start-up) and record its encoder."""
        with transaction(self.sessions) as session:
            ModelRepository(session).record_encoder(state.model_version, state.encoder.describe())
        self._state = state
        self._ready.set()
        log.info("ready: model %s", state.model_version)

    def swap(
        self, new_state: ServingState, *, activate: bool = True, unless_swapped_since: int | None = None
    ) -> bool:
        """Make a fully built state the serving one, atomically for requests; False if refused.

        `activate` records it as the registry's active model: only the worker performing an activation
        does that; a follower switching to what the registry already says must not write it back.
        `unless_swapped_since` (a follower's `swaps()` from before its registry read) refuses the
        swap when this process swapped since: that read may predate this process's own activation, and
        following it would switch back to the model the activation just replaced.
        """
        with self._swap_lock:
            if unless_swapped_since is not None and unless_swapped_since != self._swaps:
                log.info("not switching to %s: this process swapped since the registry was read",
                         new_state.model_version)  # fmt: skip
                return False  # refused before the write gate: document writes never wait for it
            with self.write_gate.exclusive():
                # Writes made while the new indexes were being built: catch up before switching.
                new_state.store.follow()
                with transaction(self.sessions) as session:
                    repository = ModelRepository(session)
                    if activate:
                        repository.activate(new_state.model_version)
                        repository.record_encoder(new_state.model_version, new_state.encoder.describe())
                old, self._state = self._state, new_state
                self._swaps += 1
                self._ready.set()
        log.info("now serving model %s", new_state.model_version)
        if activate:
            new_state.store.activated(old.model_version if old is not None else None)
        if old is not None and old.encoder is not new_state.encoder:
            # Requests that read the old state a moment ago may still be encoding with it.
            retire = threading.Timer(_RETIRE_AFTER_SECONDS, old.encoder.close)
            retire.daemon = True
            retire.start()
        return True

    def corpus_settings_changed(self, changes: SettingsChanges) -> None:
        """A commit of this process changed corpora's rankings or threshold: serve the new ones at once."""
        state = self._state
        if state is None:
            return
        for opened in state.store.opened():
            settings = changes.get(opened.corpus_id)
            if settings is not None:
                opened.settings = settings

    def write_due_checkpoints(self, max_changes: int, max_seconds: float, *, force: bool = False) -> int:
        """Checkpoint every index with enough (or old enough) changes; returns how many were written.

        A corpus whose last checkpoint failed waits out its backoff unless `force` (the exit's own).
        """
        state = self._state
        if state is None:
            return 0
        if not force and state.encoder.batcher.interactive_recently():
            # Queries are being served: a checkpoint rewrites the whole index, so while they last it
            # comes by age (max_seconds), or after 10x the changes, not after every max_changes.
            max_changes *= BUSY_CHANGES_FACTOR
        written = 0
        for opened in state.store.due(max_changes, max_seconds):
            if not (force or self.checkpoints.may_try(opened.name)):
                continue
            try:
                written += state.store.checkpoint(opened)
            except Exception as error:  # noqa: BLE001 - the log still holds every change; retried later
                failure = self.checkpoints.failed(opened.name, error)
                log.error("checkpoint of %s failed (%d in a row; the previous snapshot stays current): %s",
                          opened.name, failure.count, failure.error)  # fmt: skip
            else:
                self.checkpoints.succeeded(opened.name)
        return written

    def close(self) -> None:
        """Checkpoint what changed (a faster next start) and stop the encoder."""
        if self._state is not None and self._ready.is_set():
            self.write_due_checkpoints(1, 0.0, force=True)
        if self._state is not None:
            self._state.encoder.close()
        self.other_models.close()
        self.rerankers.close()
