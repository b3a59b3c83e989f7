"""Who the caller is: the presented key's scope and corpora (what the console shows and hides by)."""

from __future__ import annotations

from fastapi import APIRouter, Request

from app.api.deps import get_runtime
from app.api.security import Identity
from app.schemas.admin import WhoAmI
from app.schemas.errors import error_responses

router = APIRouter(tags=["keys"], responses=error_responses(401, 403, 429, 503))


@router.get("/v1/whoami", response_model=WhoAmI)
def whoami(principal: Identity, request: Request) -> WhoAmI:
    """The presented key's id, name, scope and corpora (401 for a wrong key, even with auth disabled)."""
    return WhoAmI.model_validate(
        {
            "key_id": principal.id,
            "name": principal.name,
            "scope": principal.scope,
            "corpora": sorted(principal.corpora) if principal.corpora is not None else None,
            "auth": get_runtime(request).settings.auth,
        }
    )
