"""Keep a process in step with the others: new writes from the change log, activations from the registry.

Every `PAIRANK_SYNC_SECONDS` (and, on PostgreSQL, as soon as a writer's NOTIFY arrives) the follower
reads each corpus's change mark (one query) and applies the log after its own mark to the corpora that
moved, then checks the registry's active model. A follower only reads the registry: the worker that
performs an activation is the only one that writes it.
"""

from __future__ import annotations

import logging
import threading

from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from app.db.notifications import ChangeWaiter
from app.db.repositories.corpora import CorpusMark, CorpusRepository
from app.db.repositories.model_versions import ModelRepository
from app.serving.state import Serving

log = logging.getLogger(__name__)


class DatabaseFollower:
    """Applies other workers' document writes and model activations; never writes the registry."""

    def __init__(self, serving: Serving, sessions: sessionmaker[Session], engine: Engine) -> None:
        self.serving = serving
        self.sessions = sessions
        self.engine = engine

    def run(self, interval: float, closed: threading.Event) -> None:
        """Follow every `interval` seconds (or at once when PostgreSQL notifies a write) until `closed`."""
        waiter = ChangeWaiter(self.engine)
        try:
            while not closed.is_set():
                waiter.wait(interval, closed)
                if closed.is_set():
                    return
                try:
                    self.follow_once()
                except Exception:  # noqa: BLE001 - keep serving what we have, try again next tick
                    log.exception("following the database failed")
        finally:
            waiter.close()

    def follow_once(self) -> None:
        """Switch to a newly activated model, then apply document changes past each index's mark (the
        registry and every corpus's mark and settings come from one transaction)."""
        read_at = self.serving.swaps()  # before the read: a swap after it makes the read stale
        with self.sessions() as session:
            active = ModelRepository(session).active()
            target = active.version if active is not None else None
            marks: list[CorpusMark] | None = CorpusRepository(session).marks()
        if self.follow_registry(target, read_at) or self.serving.swaps() != read_at:
            marks = None  # a swap caught the new state up (and the marks read may predate it): read again
        state = self.serving.current()
        if state is not None:
            state.store.follow(marks)

    def follow_registry(self, target: str | None, read_at: int) -> bool:
        """Switch to `target`, the registry's active version as read after `read_at` swaps; True if done."""
        # The worker that ran an activation swaps and writes the registry; the others notice the
        # registry's new active version here and only switch (its snapshots are on disk by then; its
        # files come from the artifact store when this machine has no verified copy). A read older
        # than this process's latest swap (its own worker's activation committed after it) is stale.
        current = self.serving.current()
        if target is None or current is None or target == current.model_version:
            return False
        if self.serving.swapping() or self.serving.swaps() != read_at:
            return False
        log.info("registry's active model is %s: switching", target)
        state = self.serving.build_state(self.serving.registry.spec(target))
        swapped = False
        try:
            swapped = self.serving.swap(state, activate=False, unless_swapped_since=read_at)
        finally:
            if not swapped:  # refused (an activation swapped meanwhile; next tick re-reads) or failed
                state.encoder.close()
        return swapped
