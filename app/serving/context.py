"""What a use case or a job handler may reach of its process: the settings, database sessions, serving.

`Runtime` is one such context; use cases and job handlers name this protocol instead, so they never
depend on how a process starts its threads (and tests may hand them any object with these three).
"""

from __future__ import annotations

from typing import Protocol

from sqlalchemy.orm import Session, sessionmaker

from app.config import Settings
from app.serving.state import Serving


class ServiceContext(Protocol):
    """The narrow view of a process that use cases and job handlers are given."""

    @property
    def settings(self) -> Settings:
        """The process's settings."""

    @property
    def sessions(self) -> sessionmaker[Session]:
        """Database sessions (the only way to the database)."""

    @property
    def serving(self) -> Serving:
        """The model and indexes requests read, and the only place that swaps them."""
