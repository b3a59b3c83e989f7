"""Who may call what: scoped API keys on every route, and a token-bucket rate limit per caller.

Every route declares the scope it needs with `READ`, `WRITE` or `ADMIN` (public routes use none); the
scope appears in the OpenAPI schema as the operation's security requirement, so `/docs` offers an
Authorize button and a test can check that no route was left undeclared. Keys come as
`Authorization: Bearer <key>` or `X-API-Key: <key>`. With `PAIRANK_AUTH=disabled` read and write routes
are open (admin routes still need an admin key); a corpus-limited key is refused any other corpus.
"""

from __future__ import annotations

import hmac
import math
import threading
import time
from typing import Annotated

from fastapi import Depends, Request, Security
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer, SecurityScopes

from app.api.deps import RequestSessionsDep, get_key_cache, get_runtime
from app.core.errors import ForbiddenError, RateLimitedError, UnauthorizedError
from app.db.engine import RequestSessions
from app.observability.metrics import RATE_LIMITED
from app.usecases.api_keys import ApiKeyService, Principal

_bearer = HTTPBearer(auto_error=False, description="`Authorization: Bearer prk_...`")
_header = APIKeyHeader(name="X-API-Key", auto_error=False, description="`X-API-Key: prk_...`")
ANONYMOUS = Principal(None, "write", None)


class TokenBuckets:
    """Per-caller token buckets: `rate` requests per second on average, up to `burst` at once."""

    def __init__(self) -> None:
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def take(self, caller: str, rate: float, burst: float) -> float:
        """0 when the request may go ahead; otherwise the seconds until a token is back."""
        now = time.monotonic()
        with self._lock:
            tokens, stamp = self._buckets.get(caller, (burst, now))
            tokens = min(burst, tokens + (now - stamp) * rate)
            if tokens >= 1:
                self._buckets[caller] = (tokens - 1, now)
                return 0.0
            self._buckets[caller] = (tokens, now)
            return (1 - tokens) / rate


def _principal(request: Request, sessions: RequestSessions, presented: str | None, needed: str) -> Principal:
    if get_runtime(request).settings.auth == "disabled" and needed != "admin":
        # Open to anyone; an admin key is still recognised (it may name model versions, and the pairs
        # it judges say so), any other key or none is the anonymous writer.
        known = _known(request, sessions, presented) if presented else None
        return known if known is not None and known.allows("admin") else ANONYMOUS
    return _verified(request, sessions, presented)


def _known(request: Request, sessions: RequestSessions, presented: str) -> Principal | None:
    """The principal of a presented key, or None when it is unknown or revoked."""
    configured = get_runtime(request).settings.admin_api_key
    if configured and hmac.compare_digest(presented.encode(), configured.encode()):
        return Principal(None, "admin", None)
    return ApiKeyService(sessions, get_key_cache(request)).verify(presented)


def _verified(request: Request, sessions: RequestSessions, presented: str | None) -> Principal:
    """The principal of the presented key; 401 when there is none or it is unknown or revoked."""
    if not presented:
        raise UnauthorizedError("missing API key: send `Authorization: Bearer <key>` or `X-API-Key: <key>`")
    principal = _known(request, sessions, presented)
    if principal is None:
        raise UnauthorizedError("invalid or revoked API key")
    return principal


def authorize(
    security: SecurityScopes,
    request: Request,
    sessions: RequestSessionsDep,
    bearer: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    header: Annotated[str | None, Depends(_header)],
) -> Principal:
    """The caller's principal, when it has the route's scope (and corpus); else 401/403/429."""
    needed = security.scopes[0]
    principal = _principal(request, sessions, bearer.credentials if bearer else header, needed)
    if not principal.allows(needed):
        who = f"key {principal.id}" if principal.id else "this key"
        raise ForbiddenError(f"{who} has scope {principal.scope!r}; this route needs {needed!r}", "scope")
    corpus = request.path_params.get("name")
    if isinstance(corpus, str):
        check_corpus_access(principal, corpus)
    request.state.principal = principal
    _rate_limit(request, principal)
    return principal


def identify(
    request: Request,
    sessions: RequestSessionsDep,
    bearer: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    header: Annotated[str | None, Depends(_header)],
) -> Principal:
    """Who the caller is: a presented key is always checked (401 when wrong, even with auth disabled, so
    a sign-in with a mistyped key fails); no key is the anonymous writer when auth is disabled."""
    presented = bearer.credentials if bearer else header
    if not presented and get_runtime(request).settings.auth == "disabled":
        principal = ANONYMOUS
    else:
        principal = _verified(request, sessions, presented)
    request.state.principal = principal
    _rate_limit(request, principal)
    return principal


def judge_name(principal: Principal) -> str:
    """How a pair records who judged it: the key id, `admin-key` or `anonymous` (never a secret)."""
    if principal.id is not None:
        return principal.id
    return "admin-key" if principal.scope == "admin" else "anonymous"


def check_corpus_access(principal: Principal, corpus: str) -> None:
    """403 when a corpus-limited key names another corpus."""
    if not principal.allows_corpus(corpus):
        allowed = sorted(principal.corpora or ())
        raise ForbiddenError(f"key {principal.id} is limited to corpora {allowed}; not {corpus!r}", "corpus")


def _rate_limit(request: Request, principal: Principal) -> None:
    settings = get_runtime(request).settings
    if settings.rate_limit <= 0:
        return
    address = request.client.host if request.client else "-"
    caller = f"key:{principal.id}" if principal.id else f"addr:{address}"
    buckets: TokenBuckets = request.app.state.rate_buckets
    wait = buckets.take(caller, settings.rate_limit, max(settings.rate_burst, 1))
    if wait > 0:
        RATE_LIMITED.inc()
        raise RateLimitedError(
            f"rate limit of {settings.rate_limit:g} requests/s (burst {settings.rate_burst}) exceeded for "
            f"this {'key' if principal.id else 'address'}; retry after the Retry-After seconds",
            retry_after=max(1, math.ceil(wait)),
            limit=settings.rate_burst,
        )


READ = Security(authorize, scopes=["read"])
WRITE = Security(authorize, scopes=["write"])
ADMIN = Security(authorize, scopes=["admin"])
ReadAccess = Annotated[Principal, READ]
WriteAccess = Annotated[Principal, WRITE]
AdminAccess = Annotated[Principal, ADMIN]
# Any valid key (scope `read` or above) names itself; see `identify`.
Identity = Annotated[Principal, Security(identify, scopes=["read"])]
