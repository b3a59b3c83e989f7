"""What both adapters share: their opened corpora (each opened once), and when upkeep is due."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime
from typing import Generic

from sqlalchemy.orm import Session, sessionmaker

from app.db.repositories.corpora import CorpusRepository
from app.stores.port import CorpusVectors, Handle


def checkpoint_due(opened: CorpusVectors, max_changes: int, max_seconds: float, now: datetime) -> bool:
    """True when a corpus has enough unsaved changes, or changes older than `max_seconds`."""
    pending = opened.changes_since_checkpoint
    if pending >= max_changes:
        return True
    last = opened.last_checkpoint
    return pending > 0 and (last is None or (now - last).total_seconds() >= max_seconds)


class OpenedCorpora(Generic[Handle]):
    """A store's opened corpora by database id; a corpus is opened once even when requests race."""

    def __init__(self) -> None:
        self._by_id: dict[int, Handle] = {}
        self._guard = threading.Lock()
        self._opening: dict[int, threading.Lock] = {}

    def find(self, corpus_id: int) -> Handle | None:
        """The opened corpus, or None."""
        with self._guard:
            return self._by_id.get(corpus_id)

    def named(self, name: str) -> Handle | None:
        """The opened corpus with this name, or None (no database query)."""
        with self._guard:
            return next((opened for opened in self._by_id.values() if opened.name == name), None)

    def all(self) -> list[Handle]:
        """Every opened corpus."""
        with self._guard:
            return list(self._by_id.values())

    def open(self, corpus_id: int, load: Callable[[int], Handle]) -> Handle:
        """The opened corpus, or `load(corpus_id)` kept: two requests for it load it once."""
        with self._guard:
            gate = self._opening.setdefault(corpus_id, threading.Lock())
        with gate:
            opened = self.find(corpus_id)
            if opened is None:
                opened = load(corpus_id)
                with self._guard:
                    self._by_id[corpus_id] = opened
            return opened

    def open_all(
        self,
        sessions: sessionmaker[Session],
        load: Callable[[int], Handle],
        on_corpus: Callable[[int, int, str], None] | None = None,
    ) -> None:
        """Open every corpus of the database; `on_corpus(done, total, name)` before each."""
        with sessions() as session:
            marks = CorpusRepository(session).marks()
        for done, mark in enumerate(marks):
            if on_corpus is not None:
                on_corpus(done, len(marks), mark.name)
            self.open(mark.id, load)

    def forget(self, corpus_id: int) -> None:
        """Drop a corpus (deleted, or to be reopened)."""
        with self._guard:
            self._by_id.pop(corpus_id, None)
