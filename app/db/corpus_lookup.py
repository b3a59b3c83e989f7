"""A corpus or a document that must exist: found, or the one 404 that names it."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy.orm import Session

from app.core.errors import NotFoundError
from app.db.models import Corpus
from app.db.repositories.corpora import CorpusRepository
from app.db.repositories.documents import DocumentReader


def corpus_not_found(corpus: str | int) -> NotFoundError:
    """The error for a corpus that does not exist (or no longer does), by name or database id."""
    return NotFoundError(f"corpus {corpus!r} does not exist", field="name")


def require_corpus(session: Session, corpus: str | int, *, lock: bool = False) -> Corpus:
    """The corpus with this name (or database id), row-locked when `lock`; NotFoundError naming it."""
    repository = CorpusRepository(session)
    if isinstance(corpus, int):
        found = repository.get_by_id(corpus, lock=lock)
    else:
        found = repository.get(corpus, lock=lock)
    if found is None:
        raise corpus_not_found(corpus)
    return found


def document_not_found(corpus: str, doc_id: str) -> NotFoundError:
    """The error for a document id that the corpus does not hold."""
    return NotFoundError(f"document {doc_id!r} does not exist in corpus {corpus!r}", field="id")


def require_documents(
    session: Session, corpus_id: int, corpus_name: str, external_ids: Sequence[str], field: str
) -> dict[str, int]:
    """External id -> database id of each given document (no corpus row read); NotFoundError naming
    `field` and the missing ids, first missing first."""
    found = DocumentReader(session, corpus_id).ids_of(external_ids)
    missing = [doc_id for doc_id in dict.fromkeys(external_ids) if doc_id not in found]
    if missing:
        raise NotFoundError(f"{field}: documents not in corpus {corpus_name!r}: {missing[:10]}", field=field)
    return found
