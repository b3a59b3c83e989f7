"""One service process: the database, its serving state, and the threads that keep it current.

The parts each have one job and are tested without HTTP (tests/serving/): `Serving` (the model and
indexes requests read, and swaps) and `DatabaseFollower` (other processes' writes and activations).
`Runtime` only wires them together and starts and stops the threads (callers read the parts directly:
`runtime.serving.state()`); the composition root (app/process.py) hands it the loops that run once
loading is done (the embedded job worker, `PAIRANK_EMBEDDED_WORKER`).
"""

from __future__ import annotations

import gc
import logging
import threading
from collections.abc import Callable

from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from app.config import Settings
from app.db.corpus_settings import watch_corpus_settings
from app.db.engine import make_engine, make_session_factory
from app.serving.demo import seed_demo_corpus
from app.serving.follower import DatabaseFollower
from app.serving.priority import lower_thread_priority
from app.serving.state import Serving, ServingState

__all__ = ["Runtime", "ServingState"]

log = logging.getLogger(__name__)
Loop = Callable[[threading.Event], None]  # runs until the event (the runtime closing) is set


_frozen = threading.Event()


def freeze_loaded_heap() -> None:
    """Move what the first loading left out of the cyclic collector's sight, once per process."""
    # The modules, the model's runtime and the indexes' objects live as long as the process: a full
    # collection walked them all (held a request 195-295 ms on a 2-core box: benchmarks/upsert_latency.md).
    # Once per process: a test process starts many runtimes, and each freeze would keep the reference
    # cycles of those still open from ever being collected once they close.
    if not _frozen.is_set():
        _frozen.set()
        gc.freeze()


class Runtime:
    """Owns the engine and the parts; loads the model and indexes in the background."""

    def __init__(self, settings: Settings, engine: Engine | None = None) -> None:
        self.settings = settings
        self.engine = engine or make_engine(settings.resolved_database_url)
        self.sessions: sessionmaker[Session] = make_session_factory(self.engine)
        self.serving = Serving(settings, self.sessions)
        # Requests read a corpus's rankings from its opened index: this process's own changes reach it here.
        watch_corpus_settings(self.sessions, self.serving.corpus_settings_changed)
        self.follower = DatabaseFollower(self.serving, self.sessions, self.engine)
        self._closed = threading.Event()
        self._after_loading: list[tuple[str, Loop]] = []
        self._loop_threads: list[threading.Thread] = []

    def start_loading(self) -> None:
        """Load the model and the indexes in a background thread (so /health answers meanwhile)."""
        threading.Thread(target=self._load, name="pairank-loader", daemon=True).start()

    def _load(self) -> None:
        settings = self.settings
        try:
            if settings.seed_demo:
                seed_demo_corpus(self.sessions)
            registry = self.serving.registry
            registry.store_unstored()  # models registered before their files were stored (an upgrade)
            registry.prune_cache()  # copies of models deleted through other machines
            self.serving.start(self.serving.build_state(registry.active_at_start(settings.model)))
            freeze_loaded_heap()
            if settings.sync_seconds > 0:
                self._thread("pairank-sync", self.follower.run, settings.sync_seconds, self._closed)
            self._thread("pairank-checkpoint", self._checkpoint_loop)
            for name, loop in self._after_loading:
                self._loop_threads.append(self._thread(name, loop, self._closed))
        except Exception as error:  # noqa: BLE001 - reported through /ready instead of killing the server
            log.exception("loading failed")
            self.serving.failed(error)

    def _thread(self, name: str, target: Callable[..., None], *args: object) -> threading.Thread:
        thread = threading.Thread(target=target, args=args, name=name, daemon=True)
        thread.start()
        return thread

    def run_after_loading(self, name: str, loop: Loop) -> None:
        """Run `loop(closed)` in a thread named `name` once loading is done (call before `start_loading`)."""
        self._after_loading.append((name, loop))

    def _checkpoint_loop(self) -> None:
        # Snapshots are written here, never on a request's path, and at a lower priority: at 10M rows a
        # checkpoint is minutes of CPU that would otherwise take a core from the searches.
        settings = self.settings
        lower_thread_priority(settings.checkpoint_nice)
        while not self._closed.wait(min(5.0, settings.checkpoint_seconds)):
            self.serving.write_due_checkpoints(settings.checkpoint_changes, settings.checkpoint_seconds)

    def close(self) -> None:
        """Stop background work, checkpoint what changed (a faster next start), release connections."""
        self._closed.set()
        for thread in self._loop_threads:
            thread.join(60)  # a running job is cancelled and recorded before the exit
        self.serving.close()
        self.engine.dispose()
