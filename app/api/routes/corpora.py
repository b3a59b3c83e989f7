"""Corpora and documents endpoints: parse, call the corpus service, shape the response."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Response
from fastapi.responses import StreamingResponse

from app.api.deps import CorpusServiceDep
from app.api.params import CorpusNameParam, DocumentIdParam, RecordIdParam
from app.api.security import READ, WRITE, ReadAccess, WriteAccess, check_corpus_access
from app.core.errors import ConflictError, ForbiddenError
from app.schemas.admin import JobOut
from app.schemas.common import INT64_MAX
from app.schemas.corpora import (
    CorpusCreate,
    CorpusLanguageChange,
    CorpusList,
    CorpusOut,
    CorpusRanking,
    DocumentOut,
    DocumentPage,
    DocumentsUpsert,
    IndexStatus,
    UpsertOut,
)
from app.schemas.errors import COMMON_ERRORS, CONFLICT, NOT_FOUND, error_responses

router = APIRouter(prefix="/v1/corpora", tags=["corpora"], responses=error_responses(*COMMON_ERRORS))


def _may_set(ranking: CorpusRanking | None, caller: WriteAccess, field: str) -> None:
    # Model versions are admin information (GET /admin/models): naming a re-ranker needs an admin key.
    if ranking is not None and ranking.rerank is not None and not caller.allows("admin"):
        raise ForbiddenError(f"{field}: a re-ranking stage needs an admin key", field)


@router.post("", status_code=201, response_model=CorpusOut, responses={**CONFLICT, **NOT_FOUND})
def create_corpus(body: CorpusCreate, service: CorpusServiceDep, caller: WriteAccess) -> CorpusOut:
    """Create an empty corpus."""
    check_corpus_access(caller, body.name)
    _may_set(body.ranking, caller, "ranking.rerank.model")
    index = body.index.model_dump() if body.index is not None else None
    ranking = body.ranking.model_dump() if body.ranking is not None else None
    created = service.create_corpus(
        body.name, body.kind, body.description, index, ranking, body.language, body.judgement_scale
    )
    return CorpusOut.model_validate(created)


@router.get("", response_model=CorpusList)
def list_corpora(service: CorpusServiceDep, caller: ReadAccess) -> CorpusList:
    """List every corpus (that the key may see) with its document count."""
    corpora = [c for c in service.list_corpora() if caller.allows_corpus(c.name)]
    return CorpusList(corpora=[CorpusOut.model_validate(c) for c in corpora])


@router.get("/{name}", response_model=CorpusOut, responses=NOT_FOUND, dependencies=[READ])
def get_corpus(name: CorpusNameParam, service: CorpusServiceDep) -> CorpusOut:
    """One corpus with its document count."""
    return CorpusOut.model_validate(service.get_corpus(name))


@router.put("/{name}/ranking", response_model=CorpusOut, responses={**NOT_FOUND, **CONFLICT})
def set_ranking(
    name: CorpusNameParam, body: CorpusRanking, service: CorpusServiceDep, caller: WriteAccess
) -> CorpusOut:
    """Replace the corpus's ranking: its first stage until a calibration for the serving model exists,
    and its re-ranking stage (`rerank`: a registered cross-encoder, an admin key; omitted: none); 404
    for a version not registered, 409 for one that is not a cross-encoder."""
    _may_set(body, caller, "rerank.model")
    return CorpusOut.model_validate(service.set_ranking(name, body.model_dump()))


@router.put(
    "/{name}/language",
    status_code=202,
    response_model=JobOut,
    responses={**NOT_FOUND, **CONFLICT},
    dependencies=[WRITE],
)
def set_language(name: CorpusNameParam, body: CorpusLanguageChange, service: CorpusServiceDep) -> JobOut:
    """Change the corpus's language (an ISO 639-1 code, or `multi`): a background job re-analyses its
    lexical index while queries go on with the previous one, then every worker switches (409 while a
    change is under way). Follow it at `GET .../language/{job_id}`."""
    return JobOut.model_validate(service.set_language(name, body.language))


@router.get("/{name}/language/{job_id}", response_model=JobOut, responses=NOT_FOUND, dependencies=[READ])
def get_language_change(name: CorpusNameParam, job_id: RecordIdParam, service: CorpusServiceDep) -> JobOut:
    """A change of language: its stage (`detecting`, `indexing`, `switching`, `done`) and counts."""
    return JobOut.model_validate(service.language_job(name, job_id))


@router.get("/{name}/index", response_model=IndexStatus, responses=NOT_FOUND, dependencies=[READ])
def index_status(name: CorpusNameParam, service: CorpusServiceDep) -> IndexStatus:
    """The corpus's index in the worker that answers: structure, size, memory, checkpoint, recall."""
    return IndexStatus(**service.index_status(name))


@router.delete("/{name}", status_code=204, responses={**NOT_FOUND, **CONFLICT}, dependencies=[WRITE])
def delete_corpus(
    name: CorpusNameParam,
    service: CorpusServiceDep,
    confirm: Annotated[str, Query(max_length=100, description="The corpus name again.")],
) -> Response:
    """Delete a corpus, its documents and its indexes; `?confirm=<name>` must repeat the name.

    Clients rewrite `.../documents/..` to `.../corpora/<name>`: without the confirmation a document id
    of `..` sent unencoded would delete the whole corpus.
    """
    if confirm != name:
        raise ConflictError(f"confirm: must repeat the corpus name {name!r}", field="confirm")
    service.delete_corpus(name)
    return Response(status_code=204)


@router.post("/{name}/documents", response_model=UpsertOut, responses=NOT_FOUND, dependencies=[WRITE])
def upsert_documents(name: CorpusNameParam, body: DocumentsUpsert, service: CorpusServiceDep) -> UpsertOut:
    """Insert or update documents by id (all or nothing)."""
    # An omitted `metadata` keeps what is stored; an explicit one (null included) replaces it.
    documents = [(d.id, d.text, d.metadata, "metadata" in d.model_fields_set) for d in body.documents]
    languages = [d.language for d in body.documents]
    return UpsertOut.model_validate(service.upsert_documents(name, documents, languages))


@router.get("/{name}/documents", response_model=DocumentPage, responses=NOT_FOUND, dependencies=[READ])
def list_documents(
    name: CorpusNameParam,
    service: CorpusServiceDep,
    limit: Annotated[int, Query(ge=1, le=1000, description="Documents per page.")] = 100,
    cursor: Annotated[int, Query(ge=0, le=INT64_MAX, description="`next_cursor` of the previous page.")] = 0,
) -> DocumentPage:
    """A page of the corpus's documents in a stable order (keyset paging: pages never shift)."""
    documents, next_cursor = service.list_documents(name, limit, cursor)
    return DocumentPage(documents=[DocumentOut.model_validate(d) for d in documents], next_cursor=next_cursor)


@router.get(
    "/{name}/export",
    response_class=StreamingResponse,
    responses={**NOT_FOUND, 200: {"content": {"application/x-ndjson": {}}, "description": "JSON lines."}},
    dependencies=[READ],
)
def export_documents(name: CorpusNameParam, service: CorpusServiceDep) -> StreamingResponse:
    """Every document as JSON lines (`{"id", "text", "metadata"}`, and `language` in a `multi` corpus),
    streamed: `pairank import` reads it."""
    return StreamingResponse(service.export_documents(name), media_type="application/x-ndjson")


@router.get(
    "/{name}/documents/{doc_id:path}", response_model=DocumentOut, responses=NOT_FOUND, dependencies=[READ]
)
def get_document(name: CorpusNameParam, doc_id: DocumentIdParam, service: CorpusServiceDep) -> DocumentOut:
    """One document by id."""
    return DocumentOut.model_validate(service.get_document(name, doc_id))


@router.delete("/{name}/documents/{doc_id:path}", status_code=204, responses=NOT_FOUND, dependencies=[WRITE])
def delete_document(name: CorpusNameParam, doc_id: DocumentIdParam, service: CorpusServiceDep) -> Response:
    """Delete one document."""
    service.delete_document(name, doc_id)
    return Response(status_code=204)
