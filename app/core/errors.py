"""Domain errors raised below the API (use cases, stores, jobs); the API layer maps each to an HTTP status."""

from __future__ import annotations


class ServiceError(Exception):
    """Base class: carries a human-readable message naming the field involved."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


class NotFoundError(ServiceError):
    """An addressed corpus, document or job does not exist (404)."""


class ConflictError(ServiceError):
    """The request collides with existing state, e.g. a taken corpus name (409)."""


class InvalidInputError(ServiceError):
    """The request is well-formed JSON but semantically invalid (422)."""


class LimitExceededError(ServiceError):
    """The request exceeds a configured size limit (413)."""

    def __init__(self, field: str, limit: int, actual: int, unit: str) -> None:
        super().__init__(f"{field}: {actual} {unit} exceeds the limit of {limit} {unit}", field)
        self.limit = limit
        self.actual = actual


class ConfigurationError(ServiceError):
    """The settings and the environment disagree (raised at start-up, with what to change)."""


class NotReadyError(ServiceError):
    """The model or the indexes are still loading (503)."""


class RetryLaterError(ServiceError):
    """The request may succeed later: 429 with Retry-After (seconds) and the limit that was hit."""

    def __init__(self, message: str, retry_after: int, limit: int, field: str | None = None) -> None:
        super().__init__(message, field=field)
        self.retry_after = retry_after
        self.limit = limit


class OverloadedError(RetryLaterError):
    """Too much work is queued for the encoder."""

    def __init__(self, message: str, retry_after: int, limit: int) -> None:
        super().__init__(message, retry_after, limit, field="PAIRANK_MAX_QUEUED_TEXTS")


class RateLimitedError(RetryLaterError):
    """The caller sent more requests than its rate limit allows."""

    def __init__(self, message: str, retry_after: int, limit: int) -> None:
        super().__init__(message, retry_after, limit, field="PAIRANK_RATE_LIMIT")


class UnauthorizedError(ServiceError):
    """No valid credentials (401)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, field="Authorization")


class ForbiddenError(ServiceError):
    """Valid credentials without the permission the request needs (403)."""
