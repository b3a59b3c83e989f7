"""Query sets (Quepid's cases): a named list of a corpus's queries, scored against the corpus's judged
pairs on demand and after every activation or ranking change, each run kept with its metrics and every
query's, so a run says what changed since the one before."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from app.control.job_context import JobContext, Outcome
from app.core.errors import InvalidInputError, NotFoundError
from app.core.limits import check_text
from app.db.corpus_lookup import require_corpus
from app.db.engine import transaction
from app.db.repositories.pairs import PairRepository
from app.db.repositories.query_sets import QuerySetRepository
from app.db.workbench_models import QuerySet, QuerySetRun
from app.search.ranked import RankedItem
from app.serving.context import ServiceContext
from app.usecases.evaluation_report import EvaluationSpec, Reranking, compute_report
from app.usecases.evaluations import evaluation_stage
from app.usecases.reranking import reranked
from evaluation.judgements import relevance_grade
from evaluation.metrics import DEFAULT_CUTOFFS

METRICS = ["MRR", "nDCG@10", "Recall@10", "HasPositive@1"]
PRIMARY = "MRR"  # what a run's per-query changes compare
MAX_QUERIES = 1000


@dataclass(frozen=True)
class QueryChange:
    """A query whose primary metric moved since the previous run (None: not scored in that run)."""

    query: str
    before: float | None
    after: float | None


def changes(previous: QuerySetRun | None, current: QuerySetRun) -> list[QueryChange]:
    """Every query whose MRR differs between two runs (scored in one and not the other included)."""
    if previous is None or current.status != "succeeded":
        return []
    before = {q: v.get(PRIMARY) for q, v in (previous.per_query or {}).items()}
    after = {q: v.get(PRIMARY) for q, v in (current.per_query or {}).items()}
    moved = [
        QueryChange(query, before.get(query), after.get(query))
        for query in dict.fromkeys([*before, *after])
        if before.get(query) != after.get(query)
    ]
    return sorted(moved, key=lambda c: (c.after or 0.0) - (c.before or 0.0))


class QuerySetService:
    """Use cases on a corpus's query sets."""

    def __init__(self, service: ServiceContext) -> None:
        self.service = service

    def create(self, name: str, set_name: str, queries: Sequence[str]) -> QuerySet:
        """Save a set (its queries de-duplicated, in order); 409 when the name is taken."""
        unique = list(dict.fromkeys(q.strip() for q in queries if q.strip()))
        if not unique:
            raise InvalidInputError("queries: give at least one non-blank query", "queries")
        if len(unique) > MAX_QUERIES:
            raise InvalidInputError(f"queries: {len(unique)} exceed the limit of {MAX_QUERIES}", "queries")
        for position, query in enumerate(unique):
            check_text(self.service.settings, f"queries[{position}]", query)
        with transaction(self.service.sessions) as session:
            return QuerySetRepository(session, require_corpus(session, name).id).add(set_name, unique)

    def list_sets(self, name: str) -> list[tuple[QuerySet, QuerySetRun | None]]:
        """The corpus's sets, each with its latest run."""
        with self.service.sessions() as session:
            repository = QuerySetRepository(session, require_corpus(session, name).id)
            return [(s, next(iter(reversed(repository.runs(s.id, 1))), None)) for s in repository.all()]

    def _require(self, repository: QuerySetRepository, set_name: str) -> QuerySet:
        found = repository.get(set_name)
        if found is None:
            raise NotFoundError(f"query set {set_name!r} does not exist in this corpus", field="query_set")
        return found

    def history(
        self, name: str, set_name: str
    ) -> tuple[QuerySet, list[tuple[QuerySetRun, list[QueryChange]]]]:
        """A set and its runs, oldest first, each with what changed since the run before it."""
        with self.service.sessions() as session:
            repository = QuerySetRepository(session, require_corpus(session, name).id)
            query_set = self._require(repository, set_name)
            runs = repository.runs(query_set.id)
        done = [r for r in runs if r.status == "succeeded"]
        before = {run.id: (done[i - 1] if i else None) for i, run in enumerate(done)}
        return query_set, [(run, changes(before.get(run.id), run)) for run in runs]

    def delete(self, name: str, set_name: str) -> None:
        """Delete a set and its runs."""
        with transaction(self.service.sessions) as session:
            repository = QuerySetRepository(session, require_corpus(session, name).id)
            repository.delete(self._require(repository, set_name))

    def run(self, name: str, set_name: str, trigger: str = "manual") -> QuerySetRun:
        """Queue a scoring of the set (a job); poll the set's runs for its result."""
        with transaction(self.service.sessions) as session:
            repository = QuerySetRepository(session, require_corpus(session, name).id)
            return repository.queue_run(self._require(repository, set_name), name, trigger)


def queue_corpus_runs(service: ServiceContext, name: str, trigger: str) -> int:
    """Queue a run of every query set of a corpus (after its ranking changed); how many."""
    with transaction(service.sessions) as session:
        repository = QuerySetRepository(session, require_corpus(session, name).id)
        sets = repository.all()
        for query_set in sets:
            repository.queue_run(query_set, name, trigger)
        return len(sets)


def _score(service: ServiceContext, corpus: str, queries: list[str], pairs: list[Any]) -> tuple[str, Any]:
    """Rank the set's judged queries as `rank` serves the corpus and score them: (model, report)."""
    ids = {query: f"q{i}" for i, query in enumerate(queries)}
    qrels: dict[str, dict[str, int]] = {}
    for pair in pairs:
        if pair.query in ids and pair.document_id is not None:
            qrels.setdefault(ids[pair.query], {})[pair.document_id] = relevance_grade(pair.label)
    qrels = {q: judged for q, judged in qrels.items() if any(g > 0 for g in judged.values())}
    spec = EvaluationSpec({ids[q]: q for q in queries}, qrels, "retrieval", corpus, None, 1, METRICS,
                          list(DEFAULT_CUTOFFS), 100)  # fmt: skip
    state = service.serving.state()
    if not qrels:
        return state.model_version, None
    stage = evaluation_stage(service, spec)
    reranking = None
    if stage is not None:
        second = stage

        def rerank(query: str, items: list[RankedItem]) -> list[RankedItem]:
            return reranked(service, query, items, second, len(items))

        reranking = Reranking(second.k, rerank)
    return state.model_version, compute_report(state, service.sessions, spec, spec.setting(state), reranking)


def run_query_set(service: ServiceContext, context: JobContext) -> Outcome:
    """The `query-set` job: score one set's judged queries with the serving model and ranking."""
    params = context.params
    with transaction(service.sessions) as session:
        repository = QuerySetRepository(session)
        query_set = repository.by_id(int(params["query_set_id"]))
        if query_set is None:
            return Outcome({"note": "the query set was deleted"})
        corpus = repository.corpus_of(query_set)
        trigger = str(params.get("trigger", "manual"))
        run = repository.run(int(params["run_id"])) if params.get("run_id") else None
        run = run or repository.start_run(query_set, context.job_id, trigger)
        run.status = "running"
        run_id, queries, name = run.id, list(query_set.queries), corpus.name
        pairs = PairRepository(session, corpus.id).list()
    context.progress("scoring", queries=len(queries))
    try:
        model, report = _score(service, name, queries, pairs)
    except Exception as error:
        with transaction(service.sessions) as session:
            repository = QuerySetRepository(session)
            failed = repository.run(run_id)
            if failed is not None:
                repository.finish_run(failed, "failed", error=str(error))
        raise
    texts = {f"q{i}": query for i, query in enumerate(queries)}
    with transaction(service.sessions) as session:
        repository = QuerySetRepository(session)
        finished = repository.run(run_id)
        if finished is not None:
            if report is None:
                note = "no query of the set has a relevant judged document yet: judge them, then run it again"
                repository.finish_run(
                    finished, "succeeded", model=model, metrics={}, per_query={}, error=note
                )
            else:
                per_query = {texts[q]: values for q, values in report.per_query.items()}
                repository.finish_run(
                    finished, "succeeded", model=model, metrics=report.means, per_query=per_query
                )
    return Outcome({"model_version": model})
