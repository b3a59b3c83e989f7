"""Logging: plain text for a terminal, or one JSON object per line (`PAIRANK_LOG_FORMAT=json`).

Every line logged while a request is served carries its request id (a context variable set by the
request middleware), so one call can be followed through the logs of every layer.
"""

from __future__ import annotations

import json
import logging
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any

REQUEST_ID: ContextVar[str | None] = ContextVar("pairank_request_id", default=None)
ACCESS = logging.getLogger("pairank.access")
# Attributes every LogRecord has; anything else was passed with `extra=` and belongs in the JSON.
_STANDARD = set(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {"message", "asctime"}
_TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class JsonFormatter(logging.Formatter):
    """One JSON object per record: time, level, logger, message, request id and the `extra` fields."""

    def format(self, record: logging.LogRecord) -> str:
        """The record as a single line of JSON."""
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "pid": record.process,
            "message": record.getMessage(),
        }
        request_id = REQUEST_ID.get()
        if request_id is not None:
            entry["request_id"] = request_id
        entry.update(
            {k: v for k, v in record.__dict__.items() if k not in _STANDARD and not k.startswith("_")}
        )
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str, ensure_ascii=False)


class _TextFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        request_id = REQUEST_ID.get()
        return f"{line} [request {request_id}]" if request_id else line


def configure_logging(log_format: str) -> None:
    """Send every logger (uvicorn's included) to stderr in the chosen format, INFO and up."""
    formatter = JsonFormatter() if log_format == "json" else _TextFormatter(_TEXT_FORMAT)
    handler = logging.StreamHandler()
    handler.setFormatter(formatter)
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)
    for name in ("uvicorn", "uvicorn.error"):
        logger = logging.getLogger(name)
        logger.handlers.clear()
        logger.propagate = True
    # The request middleware writes one access line per request with its id, key and timing instead.
    logging.getLogger("uvicorn.access").disabled = True
    logging.getLogger("alembic.runtime.plugins").setLevel(logging.WARNING)
