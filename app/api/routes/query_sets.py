"""Query sets: named lists of a corpus's queries, scored on demand and after every ranking change."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Request, Response

from app.api.deps import get_runtime
from app.api.params import CorpusNameParam
from app.api.security import READ, WRITE
from app.db.workbench_models import QuerySet, QuerySetRun
from app.schemas.errors import COMMON_ERRORS, CONFLICT, error_responses
from app.schemas.workbench import (
    QueryChangeOut,
    QuerySetCreate,
    QuerySetHistory,
    QuerySetList,
    QuerySetOut,
    QuerySetRunOut,
)
from app.usecases.workbench.query_sets import QueryChange, QuerySetService

router = APIRouter(
    prefix="/v1/corpora/{name}/query-sets",
    tags=["query sets"],
    responses=error_responses(*COMMON_ERRORS, 404),
)
SetNameParam = Annotated[
    str, Path(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9][A-Za-z0-9 _.-]*$", description="Set name.")
]


def _service(request: Request) -> QuerySetService:
    return QuerySetService(get_runtime(request))


QuerySetServiceDep = Annotated[QuerySetService, Depends(_service)]


def run_out(run: QuerySetRun, changes: list[QueryChange] | None = None) -> QuerySetRunOut:
    """A run as the API shows it."""
    return QuerySetRunOut(
        id=run.id, status=run.status, trigger=run.trigger, job_id=run.job_id, model=run.model,  # type: ignore[arg-type]
        metrics=run.metrics, per_query=run.per_query, error=run.error, created_at=run.created_at,
        finished_at=run.finished_at,
        changes=[QueryChangeOut(query=c.query, before=c.before, after=c.after) for c in changes or []],
    )  # fmt: skip


def set_out(query_set: QuerySet, last: QuerySetRun | None) -> QuerySetOut:
    """A set as the API shows it."""
    last_run = run_out(last) if last is not None else None
    return QuerySetOut(
        name=query_set.name, queries=query_set.queries, created_at=query_set.created_at, last_run=last_run
    )


@router.post("", status_code=201, response_model=QuerySetOut, responses=CONFLICT, dependencies=[WRITE])
def create_query_set(name: CorpusNameParam, body: QuerySetCreate, service: QuerySetServiceDep) -> QuerySetOut:
    """Save a named list of queries (409 when the corpus has a set of that name)."""
    return set_out(service.create(name, body.name, body.queries), None)


@router.get("", response_model=QuerySetList, dependencies=[READ])
def list_query_sets(name: CorpusNameParam, service: QuerySetServiceDep) -> QuerySetList:
    """The corpus's query sets, each with its latest run."""
    return QuerySetList(query_sets=[set_out(s, last) for s, last in service.list_sets(name)])


@router.get("/{set_name}", response_model=QuerySetHistory, dependencies=[READ])
def query_set_history(
    name: CorpusNameParam, set_name: SetNameParam, service: QuerySetServiceDep
) -> QuerySetHistory:
    """A set and its runs, oldest first, each with the queries whose MRR moved since the run before."""
    query_set, runs = service.history(name, set_name)
    last = runs[-1][0] if runs else None
    return QuerySetHistory(query_set=set_out(query_set, last), runs=[run_out(r, c) for r, c in runs])


@router.post("/{set_name}/runs", status_code=202, response_model=QuerySetRunOut, dependencies=[WRITE])
def run_query_set(
    name: CorpusNameParam, set_name: SetNameParam, service: QuerySetServiceDep
) -> QuerySetRunOut:
    """Score the set now (a job): its judged queries ranked as `rank` serves the corpus."""
    return run_out(service.run(name, set_name))


@router.delete("/{set_name}", status_code=204, dependencies=[WRITE])
def delete_query_set(name: CorpusNameParam, set_name: SetNameParam, service: QuerySetServiceDep) -> Response:
    """Delete a set and its runs."""
    service.delete(name, set_name)
    return Response(status_code=204)
