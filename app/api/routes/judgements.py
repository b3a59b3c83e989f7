"""Judgements by several judges: list, edit and delete your own, their agreement, export and import."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Path, Query, Request, Response

from app.api.deps import get_runtime
from app.api.params import CorpusNameParam, QueryTextParam
from app.api.security import READ, WRITE, WriteAccess, judge_name
from app.db.repositories.judgements import JudgementFilter
from app.schemas.common import INT64_MAX, STRING_PATTERN
from app.schemas.errors import COMMON_ERRORS, CONFLICT, NOT_FOUND, error_responses
from app.schemas.workbench import (
    Agreement,
    JudgementEdit,
    JudgementPage,
    JudgementRecord,
    JudgementScaleIn,
    JudgementScaleOut,
    JudgementsImport,
    JudgementsImported,
    JudgePairAgreement,
)
from app.usecases.workbench.exchange import ExchangeService
from app.usecases.workbench.judgements import MAX_PAGE, JudgementService

router = APIRouter(
    prefix="/v1/corpora/{name}/judgements",
    tags=["judgements"],
    responses=error_responses(*COMMON_ERRORS, 404),
)
JudgementIdParam = Annotated[int, Path(ge=1, le=INT64_MAX, description="Judgement id.")]
EXPORT_TYPES = {"trec": "text/plain", "jsonl": "application/x-ndjson", "csv": "text/csv"}


def _judgements(request: Request) -> JudgementService:
    return JudgementService(get_runtime(request))


def _exchange(request: Request) -> ExchangeService:
    return ExchangeService(get_runtime(request))


JudgementServiceDep = Annotated[JudgementService, Depends(_judgements)]
ExchangeServiceDep = Annotated[ExchangeService, Depends(_exchange)]


@router.get("", response_model=JudgementPage, dependencies=[READ])
def list_judgements(
    name: CorpusNameParam,
    service: JudgementServiceDep,
    judged_by: Annotated[
        str | None, Query(min_length=1, max_length=100, pattern=STRING_PATTERN, description="One judge.")
    ] = None,
    query: QueryTextParam = None,
    grade: Annotated[float | None, Query(ge=-1000, le=1000, description="One grade.")] = None,
    unsure: Annotated[bool | None, Query(description="Only unsure/skip (true) or only graded.")] = None,
    disagreement: Annotated[bool | None, Query(description="Only pairs whose judges differ.")] = None,
    cursor: Annotated[
        str | None, Query(pattern=r"^[0-9]{1,18}$", description="`next_cursor` of the last page.")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE, description="Judgements per page.")] = 100,
) -> JudgementPage:
    """A page of every judge's judgements, oldest first, with each pair's query, document and aggregate."""
    where = JudgementFilter(judged_by, query, grade, unsure, disagreement)
    rows, next_cursor = service.page(name, where, cursor, limit)
    return JudgementPage(judgements=[JudgementRecord(**vars(r)) for r in rows], next_cursor=next_cursor)


@router.get("/agreement", response_model=Agreement, dependencies=[READ])
def agreement(name: CorpusNameParam, service: JudgementServiceDep) -> Agreement:
    """Chance-corrected agreement: Cohen's kappa per pair of judges, Krippendorff's alpha over all (null
    where too few pairs overlap)."""
    found = service.agreement(name)
    report = found.report
    pairs = [
        JudgePairAgreement(judges=list(p.judges), overlap=p.overlap, kappa=p.kappa) for p in report.pairs
    ]
    return Agreement(
        scale=found.scale,  # type: ignore[arg-type]
        judges=report.judges,
        graded_pairs=report.items,
        shared_pairs=report.shared_items,
        disagreements=found.disagreements,
        pairs=pairs,
        alpha=report.alpha,
    )


@router.put("/scale", response_model=JudgementScaleOut, responses=CONFLICT, dependencies=[WRITE])
def set_scale(
    name: CorpusNameParam, body: JudgementScaleIn, service: JudgementServiceDep
) -> JudgementScaleOut:
    """Change the corpus's judging scale (`binary` or `graded`); 409 while judgements are off the new one."""
    return JudgementScaleOut(judgement_scale=service.set_scale(name, body.judgement_scale))  # type: ignore[arg-type]


@router.get(
    "/export",
    response_class=Response,
    responses={200: {"content": {t: {} for t in EXPORT_TYPES.values()}, "description": "The file."}},
    dependencies=[READ],
)
def export_judgements(
    name: CorpusNameParam,
    service: ExchangeServiceDep,
    format: Annotated[  # noqa: A002 (the query parameter's name)
        Literal["trec", "jsonl", "csv"],
        Query(
            description="`trec`: `qid 0 docid grade` per judged pair (its aggregate); `jsonl`: the "
            "queries `{id, text}`; `csv`: every judgement row."
        ),  # fmt: skip
    ] = "trec",
) -> Response:
    """The corpus's judgements as TREC qrels, its judged queries as JSON lines, or every judgement as CSV."""
    return Response(service.export(name, format), media_type=EXPORT_TYPES[format])


@router.post("/import", response_model=JudgementsImported)
def import_judgements(
    name: CorpusNameParam, body: JudgementsImport, service: ExchangeServiceDep, principal: WriteAccess
) -> JudgementsImported:
    """Store a file of judged pairs (JSONL or CSV) as your judgements, all or nothing; a broken line is a
    422 naming its number and field."""
    judged, pairs = service.import_judgements(name, body.format, body.text, judge_name(principal))
    return JudgementsImported(judged=judged, pairs=pairs)


@router.patch("/{judgement_id:int}", response_model=JudgementRecord, responses=NOT_FOUND)
def edit_judgement(
    name: CorpusNameParam,
    judgement_id: JudgementIdParam,
    body: JudgementEdit,
    service: JudgementServiceDep,
    principal: WriteAccess,
) -> JudgementRecord:
    """Change your own judgement (403 for another judge's)."""
    changed = service.edit(name, judgement_id, judge_name(principal), body.label, body.unsure, body.note)
    return JudgementRecord(**vars(changed))


@router.delete("/{judgement_id:int}", status_code=204, responses=NOT_FOUND)
def delete_judgement(
    name: CorpusNameParam,
    judgement_id: JudgementIdParam,
    service: JudgementServiceDep,
    principal: WriteAccess,
) -> Response:
    """Delete your own judgement (403 for another judge's); a pair left unjudged goes with it."""
    service.delete(name, judgement_id, judge_name(principal))
    return Response(status_code=204)
