"""Query sets: named lists of a corpus's queries, scored on demand and after every ranking change."""

from __future__ import annotations

from collections.abc import Sequence

from app.schemas.workbench import QuerySetCreate, QuerySetHistory, QuerySetList, QuerySetOut, QuerySetRunOut
from pairank.client.calls import Steps, call, reads, reads_nothing
from pairank.client.ops import segment


def create_query_set(corpus: str, name: str, queries: Sequence[str]) -> Steps[QuerySetOut]:
    """Save a named list of queries (409 when the corpus has a set of that name)."""
    request = QuerySetCreate.model_validate({"name": name, "queries": list(queries)})
    path = f"/v1/corpora/{segment(corpus)}/query-sets"
    return (yield call("POST", path, reads(QuerySetOut), idempotent=False, json=request))


def list_query_sets(corpus: str) -> Steps[QuerySetList]:
    """The corpus's query sets, each with its latest run."""
    path = f"/v1/corpora/{segment(corpus)}/query-sets"
    return (yield call("GET", path, reads(QuerySetList), idempotent=True))


def query_set_history(corpus: str, name: str) -> Steps[QuerySetHistory]:
    """A set and its runs, oldest first, each with the queries whose MRR moved since the run before."""
    path = f"/v1/corpora/{segment(corpus)}/query-sets/{segment(name)}"
    return (yield call("GET", path, reads(QuerySetHistory), idempotent=True))


def run_query_set(corpus: str, name: str) -> Steps[QuerySetRunOut]:
    """Queue a scoring of the set; read `query_set_history` for its result."""
    path = f"/v1/corpora/{segment(corpus)}/query-sets/{segment(name)}/runs"
    return (yield call("POST", path, reads(QuerySetRunOut), idempotent=False))


def delete_query_set(corpus: str, name: str) -> Steps[None]:
    """Delete a set and its runs."""
    path = f"/v1/corpora/{segment(corpus)}/query-sets/{segment(name)}"
    return (yield call("DELETE", path, reads_nothing, idempotent=True))
