"""The language of a query or a document, and the same-language option (docs/concepts/languages.md).

A corpus of one language analyses a query in that language unless the request names another; a `multi`
corpus analyses it in the language the request names, else the one detected. `same_language` keeps
only documents in the query's language: in a corpus of one language all of them or none, in a `multi`
corpus those whose own language is the query's (one indexed query, with any metadata filter). A query
whose language cannot be told (no letter in it) is not restricted, and its response says `null`.

The rank and duplicates requests use these, and so may any later request that matches texts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from app.core.errors import InvalidInputError
from app.search.filtered import matching_ids
from app.stores.port import CorpusVectors
from indexes.languages import MULTI, detect

SOURCES = ("request", "corpus", "detected")


@dataclass(frozen=True)
class LanguageRequest:
    """What a request asks about languages: its texts' language (None: the corpus's, or detected) and
    whether to keep only documents in it."""

    language: str | None = None
    same_language: bool = False


@dataclass(frozen=True)
class QueryLanguage:
    """The language a query was analysed in (None: not told), where it came from, and the detector's
    confidence when detected."""

    code: str | None
    source: str  # one of SOURCES
    confidence: float | None = None


def served_language(opened: CorpusVectors) -> str:
    """The language the corpus's lexical index serves now (the corpus's, or `multi`; while a change of
    language is being rebuilt, still the previous one)."""
    return opened.lexical.analyser.language


def query_language(opened: CorpusVectors, requested: str | None, text: str) -> QueryLanguage:
    """The language a query is analysed in: the request's, the corpus's, or (`multi`) detected."""
    if requested is not None:
        return QueryLanguage(requested, "request")
    corpus = served_language(opened)
    if corpus != MULTI:
        return QueryLanguage(corpus, "corpus")
    found = detect(text)
    return QueryLanguage(found.language, "detected", found.confidence)


def admitted_ids(
    sessions: sessionmaker[Session],
    opened: CorpusVectors,
    conditions: dict[str, Any] | None,
    language: QueryLanguage | None,
) -> list[int] | None:
    """The ids a metadata filter and a same-language restriction (`language`, None: none) admit, read
    once; None when neither restricts."""
    code = language.code if language is not None else None
    corpus = served_language(opened)
    if code is not None and corpus != MULTI and code != corpus:
        return []  # every document is in the corpus's language, none in the query's
    by_language = code if code is not None and corpus == MULTI else None
    if not conditions and by_language is None:
        return None
    return matching_ids(sessions, opened.corpus_id, conditions or {}, by_language)


def document_languages(
    corpus_language: str, texts: Sequence[str], given: Sequence[str | None] | None, field: str = "documents"
) -> list[str | None]:
    """Each document's own language to store: in a `multi` corpus the given one, else detected; in a
    corpus of one language none (a given one must be the corpus's: 422 naming the document)."""
    named = list(given) if given is not None else [None] * len(texts)
    if corpus_language != MULTI:
        for position, language in enumerate(named):
            if language is not None and language != corpus_language:
                raise InvalidInputError(
                    f"{field}[{position}].language: the corpus is in {corpus_language!r}, not "
                    f"{language!r}; documents of several languages need a corpus of language 'multi'",
                    f"{field}[{position}].language",
                )
        return [None] * len(texts)
    return [
        lang if lang is not None else detect(text).language for text, lang in zip(texts, named, strict=True)
    ]
