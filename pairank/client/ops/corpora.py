"""Corpora, their documents (batched upserts, paging) and their calibrations."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence, Sized
from itertools import islice
from typing import Any, TypeVar

from pydantic import ValidationError

from app.schemas.admin import JobOut
from app.schemas.corpora import (
    CorpusCreate,
    CorpusLanguageChange,
    CorpusList,
    CorpusOut,
    CorpusRanking,
    DocumentIn,
    DocumentOut,
    DocumentPage,
    DocumentsUpsert,
    IndexStatus,
    UpsertOut,
)
from app.schemas.evaluations import (
    CalibrationOut,
    CalibrationPair,
    CalibrationRequest,
    RankingCalibrationOut,
    RankingCalibrationRequest,
)
from pairank.client.calls import Pages, Steps, call, reads, reads_nothing
from pairank.client.errors import invalid_request
from pairank.client.ops import given, segment
from pairank.client.progress import CountProgress, reporter

T = TypeVar("T")
Document = DocumentIn | Mapping[str, Any]


def create_corpus(
    name: str,
    kind: str,
    *,
    description: str | None = None,
    index: Mapping[str, Any] | None = None,
    ranking: CorpusRanking | Mapping[str, Any] | None = None,
    language: str | None = None,
    judgement_scale: str | None = None,
) -> Steps[CorpusOut]:
    """Create an empty corpus of a kind (`claim`, `answer`, `question`); `index`, `ranking`, `language`
    (ISO 639-1, or `multi`) and `judgement_scale` (`binary`, `graded`) as the API takes them (omitted:
    automatic index, the kind's default ranking, English, binary)."""
    fields = given(
        description=description,
        index=index,
        ranking=ranking,
        language=language,
        judgement_scale=judgement_scale,
    )
    request = CorpusCreate.model_validate({"name": name, "kind": kind, **fields})
    return (yield call("POST", "/v1/corpora", reads(CorpusOut), idempotent=False, json=request))


def set_language(name: str, language: str) -> Steps[JobOut]:
    """Change a corpus's language (ISO 639-1, or `multi`): a job re-analyses its lexical index while
    queries go on with the previous one; `wait()` on it until every worker can switch."""
    request = CorpusLanguageChange.model_validate({"language": language})
    path = f"/v1/corpora/{segment(name)}/language"
    return (yield call("PUT", path, reads(JobOut), idempotent=False, json=request))


def list_corpora() -> Steps[list[CorpusOut]]:
    """Every corpus the key may see, with its document count."""
    listed: CorpusList = yield call("GET", "/v1/corpora", reads(CorpusList), idempotent=True)
    return listed.corpora


def get_corpus(name: str) -> Steps[CorpusOut]:
    """One corpus, with its document count and settings."""
    return (yield call("GET", f"/v1/corpora/{segment(name)}", reads(CorpusOut), idempotent=True))


def delete_corpus(name: str) -> Steps[None]:
    """Delete a corpus with its documents and indexes (the API's `confirm` is sent for you)."""
    path = f"/v1/corpora/{segment(name)}"
    return (yield call("DELETE", path, reads_nothing, idempotent=True, params={"confirm": name}))


def index_status(name: str) -> Steps[IndexStatus]:
    """The answering worker's index of the corpus: structure, size, memory, checkpoint."""
    return (yield call("GET", f"/v1/corpora/{segment(name)}/index", reads(IndexStatus), idempotent=True))


def calibrate(corpus: str, pairs: Sequence[CalibrationPair | Mapping[str, Any]]) -> Steps[CalibrationOut]:
    """Store the F1-optimal duplicate threshold from labeled pairs (`text`, `document_id` or `document`,
    `label` 1 for a duplicate)."""
    request = CalibrationRequest.model_validate({"pairs": list(pairs)})
    path = f"/v1/corpora/{segment(corpus)}/calibrate"
    return (yield call("POST", path, reads(CalibrationOut), idempotent=True, json=request))


def calibrate_ranking(
    corpus: str, *, metric: str | None = None, folds: int | None = None
) -> Steps[RankingCalibrationOut]:
    """Choose and store the corpus's ranking (dense, lexical, hybrid) on its stored pairs."""
    request = RankingCalibrationRequest.model_validate(given(metric=metric, folds=folds))
    path = f"/v1/corpora/{segment(corpus)}/calibrate-ranking"
    return (yield call("POST", path, reads(RankingCalibrationOut), idempotent=True, json=request))


def _batches(items: Iterable[T], size: int) -> Iterator[list[T]]:
    iterator = iter(items)
    while batch := list(islice(iterator, size)):
        yield batch


def _shifted(problem: Any, offset: int) -> dict[str, Any]:
    location = list(problem["loc"])
    if len(location) > 1 and location[0] == "documents" and isinstance(location[1], int):
        location[1] += offset
    return {**problem, "loc": tuple(location)}


def upsert(
    corpus: str, documents: Iterable[Document], *, batch_size: int = 500, progress: CountProgress = None
) -> Steps[UpsertOut]:
    """Insert or update documents by id, `batch_size` per request (each batch all or nothing), from a
    list or any iterable; the counts summed over the batches. `progress`: True for a tqdm bar, or
    `callback(done, total)`. Retried: upserting the same documents again changes nothing."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1 (got {batch_size})")
    total = len(documents) if isinstance(documents, Sized) else None
    report = reporter(progress, f"upsert into {corpus}")
    path = f"/v1/corpora/{segment(corpus)}/documents"
    summed = UpsertOut(inserted=0, updated=0, unchanged=0, document_count=0, model="")
    done = 0
    try:
        for batch in _batches(documents, batch_size):
            try:
                request = DocumentsUpsert.model_validate({"documents": batch})
            except ValidationError as invalid:  # name the document by its place in the whole input
                raise invalid_request([_shifted(problem, done) for problem in invalid.errors()]) from None
            answer: UpsertOut = yield call("POST", path, reads(UpsertOut), idempotent=True, json=request)
            summed = UpsertOut(
                inserted=summed.inserted + answer.inserted,
                updated=summed.updated + answer.updated,
                unchanged=summed.unchanged + answer.unchanged,
                document_count=answer.document_count,
                model=answer.model,
            )
            done += len(batch)
            report.counted(done, total)
    finally:
        report.close()
    if not done:
        DocumentsUpsert.model_validate({"documents": []})  # refused as the API refuses it, naming the field
    return summed


def get_document(corpus: str, document_id: str) -> Steps[DocumentOut]:
    """One stored document (any id: it is percent-encoded for the URL)."""
    path = f"/v1/corpora/{segment(corpus)}/documents/{segment(document_id)}"
    return (yield call("GET", path, reads(DocumentOut), idempotent=True))


def delete_document(corpus: str, document_id: str) -> Steps[None]:
    """Delete one document."""
    path = f"/v1/corpora/{segment(corpus)}/documents/{segment(document_id)}"
    return (yield call("DELETE", path, reads_nothing, idempotent=True))


def list_documents(corpus: str, *, limit: int = 100, cursor: int = 0) -> Steps[DocumentPage]:
    """One page of documents in a stable order; pass its `next_cursor` for the next (None at the end)."""
    path = f"/v1/corpora/{segment(corpus)}/documents"
    params = {"limit": limit, "cursor": cursor}
    return (yield call("GET", path, reads(DocumentPage), idempotent=True, params=params))


def iter_documents(corpus: str, *, page_size: int = 1000) -> Pages[DocumentOut]:
    """Every document of the corpus, page by page (keyset paging: writes meanwhile never shift a page)."""

    def fetch(cursor: int) -> Steps[tuple[list[DocumentOut], int | None]]:
        page = yield from list_documents(corpus, limit=page_size, cursor=cursor)
        return page.documents, page.next_cursor

    return Pages(fetch, start=0)
