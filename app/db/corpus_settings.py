"""A corpus's serving settings (rankings, duplicate threshold, language) as requests read them, and their
changes.

A request must not read the corpus row just for its rankings and duplicate threshold: the opened corpus
keeps a copy (`CorpusSettings`). Every commit that changes them (a calibration, an adopted gate
calibration) or deletes a corpus calls this process's listeners at once (`watch_corpus_settings`), and
NOTIFYs other processes on PostgreSQL (app/db/notifications.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import event, inspect
from sqlalchemy.orm import Session, sessionmaker

from app.db.models import Corpus
from app.db.notifications import notify_changes

SERVING_COLUMNS = (
    "default_ranking",
    "ranking_calibration",
    "duplicate_threshold",
    "threshold_model",
    "match_policy",
    "match_calibration",
    "language",
)
_PENDING = "pairank_corpus_settings"  # Session.info key: changes flushed, not yet committed


@dataclass(frozen=True)
class CorpusSettings:
    """A corpus's ranking default, calibrations and match policy: what a rank, duplicates or match
    request needs of its row (fields in SERVING_COLUMNS order)."""

    default_ranking: dict[str, Any] | None = None
    ranking_calibration: dict[str, Any] | None = None
    duplicate_threshold: float | None = None
    threshold_model: str | None = None
    match_policy: dict[str, Any] | None = None
    match_calibration: dict[str, Any] | None = None
    language: str = "en"  # its lexical index's language: a process that serves another one rebuilds it

    @classmethod
    def of(cls, corpus: Corpus) -> CorpusSettings:
        """The settings of a loaded corpus row."""
        return cls(*(getattr(corpus, column) for column in SERVING_COLUMNS))


SettingsChanges = dict[int, CorpusSettings | None]  # corpus id -> new settings, None when deleted
Listener = Callable[[SettingsChanges], None]


def _changed(corpus: Corpus) -> bool:
    state = inspect(corpus)
    return any(state.attrs[column].history.has_changes() for column in SERVING_COLUMNS)


def watch_corpus_settings(sessions: sessionmaker[Session], listener: Listener) -> None:
    """Call `listener` after each commit (of this factory's sessions) that changed or deleted corpora's
    settings."""

    def after_flush(session: Session, _context: Any) -> None:
        changes: SettingsChanges = {}
        for item in session.dirty:
            if isinstance(item, Corpus) and _changed(item):
                changes[int(item.id)] = CorpusSettings.of(item)
        changes.update({int(item.id): None for item in session.deleted if isinstance(item, Corpus)})
        if changes:
            session.info.setdefault(_PENDING, {}).update(changes)
            notify_changes(session, ",".join(str(corpus_id) for corpus_id in changes))

    def after_commit(session: Session) -> None:
        changes = session.info.pop(_PENDING, None)
        if changes:
            listener(changes)

    def after_rollback(session: Session) -> None:
        session.info.pop(_PENDING, None)

    event.listen(sessions, "after_flush", after_flush)
    event.listen(sessions, "after_commit", after_commit)
    event.listen(sessions, "after_soft_rollback", lambda session, _previous: after_rollback(session))
