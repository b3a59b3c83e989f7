"""Map domain errors and validation failures to JSON error responses naming the field."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from app.core.errors import (
    ConflictError,
    ForbiddenError,
    InvalidInputError,
    LimitExceededError,
    NotFoundError,
    NotReadyError,
    RetryLaterError,
    ServiceError,
    UnauthorizedError,
)
from app.db.engine import DATABASE_UNAVAILABLE
from app.schemas.errors import validation_error_body

log = logging.getLogger(__name__)

STATUS_OF: dict[type[ServiceError], int] = {
    NotFoundError: 404,
    ConflictError: 409,
    LimitExceededError: 413,
    InvalidInputError: 422,
    UnauthorizedError: 401,
    ForbiddenError: 403,
    RetryLaterError: 429,
    NotReadyError: 503,
}


async def _on_validation_error(_: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, RequestValidationError)
    return JSONResponse(status_code=422, content=validation_error_body(error.errors()))


async def _on_service_error(_: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, ServiceError)
    status = next((code for kind, code in STATUS_OF.items() if isinstance(error, kind)), 500)
    content: dict[str, Any] = {"detail": error.message}
    if error.field:
        content["field"] = error.field
    if isinstance(error, LimitExceededError | RetryLaterError):
        content["limit"] = error.limit
    headers: dict[str, str] = {}
    if isinstance(error, RetryLaterError):
        headers["Retry-After"] = str(error.retry_after)
    if isinstance(error, UnauthorizedError):
        headers["WWW-Authenticate"] = 'Bearer, ApiKey header="X-API-Key"'
    return JSONResponse(status_code=status, content=content, headers=headers or None)


async def _on_database_unavailable(_: Request, error: Exception) -> JSONResponse:
    log.error("database unavailable: %s", error)
    content = {"detail": "database: unavailable, retry after the Retry-After seconds", "field": "database"}
    return JSONResponse(status_code=503, content=content, headers={"Retry-After": "5"})


async def _on_unexpected(_: Request, error: Exception) -> JSONResponse:
    log.exception("unhandled error", exc_info=error)
    return JSONResponse(status_code=500, content={"detail": "internal server error"})


def install_error_handlers(app: FastAPI) -> None:
    """Register the JSON error handlers on an app."""
    app.add_exception_handler(RequestValidationError, _on_validation_error)
    app.add_exception_handler(ServiceError, _on_service_error)
    for kind in DATABASE_UNAVAILABLE:
        app.add_exception_handler(kind, _on_database_unavailable)
    app.add_exception_handler(Exception, _on_unexpected)
