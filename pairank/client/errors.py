"""The client's typed errors: one class per kind of failure, carrying the API's error body as it was sent.

Every error the API answers has one shape (`app.schemas.errors.ErrorResponse`: `detail`, `field`?,
`limit`?, `errors`?); the client raises it as the subclass of `PairankError` its status names. Requests the
API's own models reject before anything is sent get the body the server would have answered (422).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from pydantic import ValidationError

from app.schemas.admin import JobOut
from app.schemas.errors import ErrorItem, ErrorResponse, validation_error_body
from app.schemas.evaluations import EvaluationOut


class PairankError(Exception):
    """Base of every client error: the HTTP status (None when no answer came) and the API's error body."""

    def __init__(
        self,
        detail: str,
        *,
        status: int | None = None,
        field: str | None = None,
        limit: int | None = None,
        errors: list[ErrorItem] | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(f"{status}: {detail}" if status is not None else detail)
        self.status = status
        self.detail = detail
        self.field = field
        self.limit = limit
        self.errors = errors or []
        self.retry_after = retry_after


class InvalidRequestError(PairankError):
    """The request itself is wrong: 400, 413 (over a limit, named in `limit`), 415, 422 (every problem in
    `errors`), or refused by the API's request models before it was sent (status None)."""


class AuthError(PairankError):
    """The key cannot call this: 401 or 403."""


class UnauthorizedError(AuthError):
    """401: no key, or an unknown or revoked one."""


class ForbiddenError(AuthError):
    """403: the key lacks the route's scope (`field` "scope") or its corpus (`field` "corpus")."""


class NotFoundError(PairankError):
    """404: an unknown corpus, document, pair, evaluation, job, model or key."""


class ConflictError(PairankError):
    """409: the request conflicts with the state of things (a taken name, an unfinished job, ...)."""


class OverloadedError(PairankError):
    """429: the key's rate limit or the encoder queue is full; `retry_after` says when to come back."""


class UnavailableError(PairankError):
    """503: the service is loading, or its database is unreachable."""


class ServerError(PairankError):
    """Any other answer the client cannot take: a 5xx other than 503, or a body of an unexpected shape."""


class ConnectionFailedError(PairankError):
    """No answer came: the connection failed or timed out (status None; the httpx error is the cause)."""


class JobFailedError(PairankError):
    """A waited-for job or evaluation ended without succeeding; `record` is its last state."""

    def __init__(self, record: JobOut | EvaluationOut) -> None:
        kind = record.kind if isinstance(record, JobOut) else "evaluation"
        super().__init__(f"{kind} {record.id} {record.status}: {record.error or 'no error recorded'}")
        self.record = record


class JobCancelledError(JobFailedError):
    """A waited-for job was cancelled."""


class WaitTimeoutError(PairankError, TimeoutError):
    """A job or evaluation still unfinished when the wait's timeout ran out; `record` is its last state."""

    def __init__(self, record: JobOut | EvaluationOut, timeout: float) -> None:
        super().__init__(f"{record.id} still {record.status} after {timeout:g} s")
        self.record = record


E = TypeVar("E", bound=PairankError)
_STATUS_ERRORS: dict[int, type[PairankError]] = {
    400: InvalidRequestError,
    401: UnauthorizedError,
    403: ForbiddenError,
    404: NotFoundError,
    409: ConflictError,
    413: InvalidRequestError,
    415: InvalidRequestError,
    422: InvalidRequestError,
    429: OverloadedError,
    503: UnavailableError,
}


def retry_after_seconds(headers: Mapping[str, str]) -> float | None:
    """The `Retry-After` header in seconds (the API sends whole seconds); None when absent or not a number."""
    try:
        return max(0.0, float(headers["retry-after"]))
    except (KeyError, ValueError):
        return None


def error_from_response(status: int, content: bytes, headers: Mapping[str, str]) -> PairankError:
    """The typed error of a non-2xx answer: its class from the status, its fields from the error body."""
    kind = _STATUS_ERRORS.get(status, ServerError)
    try:
        body = ErrorResponse.model_validate_json(content)
    except ValidationError:
        text = content.decode("utf-8", errors="replace").strip()
        return kind(text or f"HTTP {status}", status=status, retry_after=retry_after_seconds(headers))
    return _from_body(kind, body, status, retry_after_seconds(headers))


def invalid_request(problems: Sequence[Mapping[str, Any]]) -> InvalidRequestError:
    """A request the API's models refused before sending (pydantic's `ValidationError.errors()`): the 422
    the server would have answered, naming the same fields."""
    # The server's problems are located in the body: named the same way (`documents[3].text`).
    located = [{**problem, "loc": ("body", *problem["loc"])} for problem in problems]
    body = ErrorResponse.model_validate(validation_error_body(located))
    return _from_body(InvalidRequestError, body, None, None)


def _from_body(kind: type[E], body: ErrorResponse, status: int | None, retry_after: float | None) -> E:
    # A 422 names its fields per problem only: the first one stands for the error.
    field = body.field or (body.errors[0].field if body.errors else None)
    return kind(
        body.detail, status=status, field=field, limit=body.limit, errors=body.errors, retry_after=retry_after
    )


def unexpected_body(status: int, error: ValidationError) -> ServerError:
    """A success answer whose body does not have the documented shape (client and server disagree)."""
    return ServerError(f"the response did not have the documented shape: {error}", status=status)
