"""Progress of long operations: a callback of the caller's, or a tqdm bar (`progress=True`).

tqdm is imported only when a bar is asked for: the client itself needs httpx and pydantic alone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from app.schemas.admin import JobOut
from app.schemas.evaluations import EvaluationOut

CountProgress = bool | Callable[[int, int | None], None] | None
"""`upsert`'s progress: True (a tqdm bar), `callback(done, total)` (total None for an iterator), or None."""
Record = JobOut | EvaluationOut
RecordProgress = bool | Callable[[Any], None] | None
"""A wait's progress: True (a tqdm bar), `callback(record)` after every poll, or None."""


SHOWN = ("stage", "epoch", "step", "dev_metric")  # what a bar shows of a job's progress


class Reporter(Protocol):
    """Where progress goes while an operation runs."""

    def counted(self, done: int, total: int | None) -> None:
        """Documents done so far."""

    def polled(self, record: Record) -> None:
        """The latest state of a job or evaluation."""

    def close(self) -> None:
        """The operation ended."""


class _Silent:
    def counted(self, done: int, total: int | None) -> None:
        pass

    def polled(self, record: Record) -> None:
        pass

    def close(self) -> None:
        pass


class _Callback(_Silent):
    def __init__(self, callback: Callable[..., None]) -> None:
        self.callback = callback

    def counted(self, done: int, total: int | None) -> None:
        self.callback(done, total)

    def polled(self, record: Record) -> None:
        self.callback(record)


class _Bar:
    def __init__(self, description: str, unit: str) -> None:
        try:
            from tqdm.auto import tqdm
        except ImportError as missing:  # pragma: no cover - tqdm comes with the full package
            raise ImportError("progress=True draws a tqdm bar: `pip install tqdm`") from missing
        self.bar = tqdm(desc=description, unit=unit)

    def counted(self, done: int, total: int | None) -> None:
        self.bar.total = total
        self.bar.n = done
        self.bar.refresh()

    def polled(self, record: Record) -> None:
        progress: dict[str, Any] = getattr(record, "progress", None) or {}
        if "total" in progress:  # an import: documents written of all
            self.counted(int(progress.get("done", 0)), progress["total"])
        shown: dict[str, Any] = {"status": record.status}
        shown.update((key, progress[key]) for key in SHOWN if key in progress)
        self.bar.set_postfix(shown, refresh=True)

    def close(self) -> None:
        self.bar.close()


def reporter(progress: CountProgress | RecordProgress, description: str, unit: str = "doc") -> Reporter:
    """The reporter a `progress` argument asks for."""
    if progress is True:
        return _Bar(description, unit)
    if callable(progress):
        return _Callback(progress)
    return _Silent()
