"""A corpus or a document that must exist: found, or the one 404 that names it."""

from __future__ import annotations

from sqlalchemy.orm import Session

from app.core.errors import NotFoundError
from app.db.models import Corpus
from app.db.repositories.corpora import CorpusRepository


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
