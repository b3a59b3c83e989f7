"""Bulk imports: upload JSON lines of documents or ClaimReview fact-checks, follow the job, cancel or
resume it."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from app.api.deps import ImportServiceDep
from app.api.params import CorpusNameParam, RecordIdParam
from app.api.security import READ, WRITE
from app.schemas.admin import JobOut
from app.schemas.errors import COMMON_ERRORS, CONFLICT, error_responses

IMPORTS_PATH = r"^/v1/corpora/[^/]+/imports$"
JSONL_TYPES = ("application/x-ndjson", "application/jsonl", "application/json-lines")
# ClaimReview: a page's JSON-LD, a JSON document (object, array, @graph), or JSON lines of them.
CLAIMREVIEW_TYPES = ("application/ld+json", "application/json", "text/html")
UPLOAD_TYPES = JSONL_TYPES + CLAIMREVIEW_TYPES
router = APIRouter(
    prefix="/v1/corpora/{name}/imports", tags=["imports"], responses=error_responses(*COMMON_ERRORS, 404)
)
_JSONL = {
    "required": True,
    # Any bytes are taken (a file); the job validates every line before writing anything.
    "content": {
        "application/x-ndjson": {
            "schema": {"type": "string", "format": "binary"},
            "example": '{"id": "c6", "text": "5G towers spread the virus.", "metadata": {"lang": "en"}}\n'
            '{"id": "c7", "text": "Onions in socks cure the flu."}\n',
        }
    },
    "description": 'One document per line: `{"id", "text", "metadata"?, "language"?}` (what '
    "`GET .../export` writes); or schema.org ClaimReview fact-checks, sent as `text/html` (a fact-check "
    "page: its `application/ld+json` scripts), `application/ld+json` or `application/json` (an object, an "
    "array, an `@graph`, JSON lines of them, or an answer of Google's Fact Check Tools API). The format is "
    "told from the content.",
}
OnError = Annotated[
    Literal["refuse", "skip"],
    Query(
        description="A malformed record (a line, a ClaimReview without `claimReviewed`): `refuse` fails the "
        "import before anything is written, naming it; `skip` leaves it out and lists it in the job's "
        "`progress.problems`."
    ),
]


@router.post(
    "",
    status_code=202,
    response_model=JobOut,
    openapi_extra={"requestBody": _JSONL},
    responses=error_responses(415),
    dependencies=[WRITE],
)
async def start_import(
    name: CorpusNameParam, request: Request, service: ImportServiceDep, on_error: OnError = "refuse"
) -> JobOut | JSONResponse:
    """Upload documents as JSON lines, or ClaimReview fact-checks (up to PAIRANK_MAX_IMPORT_BYTES), and
    import them in the background."""
    media = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media not in UPLOAD_TYPES:
        detail = f"content-type: send one of {', '.join(UPLOAD_TYPES)} (got {media or 'none'})"
        return JSONResponse({"detail": detail, "field": "content-type"}, status_code=415)
    upload = service.upload_path()
    with upload.open("wb") as handle:
        async for chunk in request.stream():
            handle.write(chunk)
    return JobOut.model_validate(await run_in_threadpool(service.submit, name, upload, on_error))


@router.get("/{job_id}", response_model=JobOut, dependencies=[READ])
def get_import(name: CorpusNameParam, job_id: RecordIdParam, service: ImportServiceDep) -> JobOut:
    """Status and progress: the format read, documents written (`done` of `total`), counts, and the
    malformed records left out (`skipped`, `problems`)."""
    return JobOut.model_validate(service.get(name, job_id))


@router.post(
    "/{job_id}/cancel", status_code=202, response_model=JobOut, responses=CONFLICT, dependencies=[WRITE]
)
def cancel_import(name: CorpusNameParam, job_id: RecordIdParam, service: ImportServiceDep) -> JobOut:
    """Stop after the chunk being written (what is written stays; resume continues)."""
    return JobOut.model_validate(service.cancel(name, job_id))


@router.post(
    "/{job_id}/resume", status_code=202, response_model=JobOut, responses=CONFLICT, dependencies=[WRITE]
)
def resume_import(name: CorpusNameParam, job_id: RecordIdParam, service: ImportServiceDep) -> JobOut:
    """Continue a failed, cancelled or interrupted import from its last committed chunk."""
    return JobOut.model_validate(service.resume(name, job_id))
