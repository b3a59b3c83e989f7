"""pairank's Python client: `Client` (blocking) and `AsyncClient` (asyncio), typed with the API's own
pydantic models (`app.schemas`), with retries and typed errors. It needs httpx and pydantic only: importing
it loads no model, index or database code. How-to: docs/guides/python-client.md.
"""

from __future__ import annotations

from pairank.client.aio import AsyncClient
from pairank.client.errors import (
    AuthError,
    ConflictError,
    ConnectionFailedError,
    ForbiddenError,
    InvalidRequestError,
    JobCancelledError,
    JobFailedError,
    NotFoundError,
    OverloadedError,
    PairankError,
    ServerError,
    UnauthorizedError,
    UnavailableError,
    WaitTimeoutError,
)
from pairank.client.handles import AsyncJob, Job
from pairank.client.retry import NO_RETRIES, RetryPolicy
from pairank.client.sync import Client

__all__ = [
    "NO_RETRIES",
    "AsyncClient",
    "AsyncJob",
    "AuthError",
    "Client",
    "ConflictError",
    "ConnectionFailedError",
    "ForbiddenError",
    "InvalidRequestError",
    "Job",
    "JobCancelledError",
    "JobFailedError",
    "NotFoundError",
    "OverloadedError",
    "PairankError",
    "RetryPolicy",
    "ServerError",
    "UnauthorizedError",
    "UnavailableError",
    "WaitTimeoutError",
]
