"""Corpora and documents endpoints: parse, call the corpus service, shape the response."""

from __future__ import annotations

from dataclasses import asdict

from fastapi import APIRouter, Response

from app.api.deps import CorpusServiceDep
from app.schemas.corpora import (
    CorpusCreate,
    CorpusList,
    CorpusOut,
    DocumentOut,
    DocumentsUpsert,
    IndexStatus,
    UpsertOut,
)

router = APIRouter(prefix="/v1/corpora", tags=["corpora"])


@router.post("", status_code=201, response_model=CorpusOut)
def create_corpus(body: CorpusCreate, service: CorpusServiceDep) -> CorpusOut:
    """Create an empty corpus."""
    index = body.index.model_dump() if body.index is not None else None
    return CorpusOut(**asdict(service.create_corpus(body.name, body.kind, body.description, index)))


@router.get("", response_model=CorpusList)
def list_corpora(service: CorpusServiceDep) -> CorpusList:
    """List every corpus with its document count."""
    return CorpusList(corpora=[CorpusOut(**asdict(c)) for c in service.list_corpora()])


@router.get("/{name}", response_model=CorpusOut)
def get_corpus(name: str, service: CorpusServiceDep) -> CorpusOut:
    """One corpus with its document count."""
    return CorpusOut(**asdict(service.get_corpus(name)))


@router.get("/{name}/index", response_model=IndexStatus)
def index_status(name: str, service: CorpusServiceDep) -> IndexStatus:
    """The corpus's index in the worker that answers: structure, size, memory, checkpoint, recall."""
    return IndexStatus(**service.index_status(name))


@router.delete("/{name}", status_code=204)
def delete_corpus(name: str, service: CorpusServiceDep) -> Response:
    """Delete a corpus, its documents and its indexes."""
    service.delete_corpus(name)
    return Response(status_code=204)


@router.post("/{name}/documents", response_model=UpsertOut)
def upsert_documents(name: str, body: DocumentsUpsert, service: CorpusServiceDep) -> UpsertOut:
    """Insert or update documents by id (all or nothing)."""
    documents = [(d.id, d.text, d.metadata) for d in body.documents]
    return UpsertOut(**asdict(service.upsert_documents(name, documents)))


@router.get("/{name}/documents/{doc_id:path}", response_model=DocumentOut)
def get_document(name: str, doc_id: str, service: CorpusServiceDep) -> DocumentOut:
    """One document by id."""
    return DocumentOut(**asdict(service.get_document(name, doc_id)))


@router.delete("/{name}/documents/{doc_id:path}", status_code=204)
def delete_document(name: str, doc_id: str, service: CorpusServiceDep) -> Response:
    """Delete one document."""
    service.delete_document(name, doc_id)
    return Response(status_code=204)
