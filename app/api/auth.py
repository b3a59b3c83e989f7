"""Admin authentication: the `X-API-Key` header against PAIRANK_ADMIN_API_KEY, compared in constant time."""

from __future__ import annotations

import hmac

from fastapi import HTTPException, Request, Security
from fastapi.security import APIKeyHeader

from app.api.deps import get_runtime

_api_key_header = APIKeyHeader(name="X-API-Key", auto_error=False)


def require_admin(request: Request, api_key: str | None = Security(_api_key_header)) -> None:  # noqa: B008
    """401 without a key, 403 with a wrong one, 403 when no admin key is configured at all."""
    expected = get_runtime(request).settings.admin_api_key
    if not expected:
        raise HTTPException(403, "admin API disabled: set PAIRANK_ADMIN_API_KEY to enable it")
    if not api_key:
        raise HTTPException(401, "missing X-API-Key header", headers={"WWW-Authenticate": "X-API-Key"})
    if not hmac.compare_digest(api_key.encode(), expected.encode()):
        raise HTTPException(403, "invalid X-API-Key")
