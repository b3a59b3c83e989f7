"""SQL for query sets (named lists of a corpus's queries) and their scored runs."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.core.errors import ConflictError
from app.db.models import Corpus, utcnow
from app.db.repositories.jobs import JobRepository
from app.db.workbench_models import QuerySet, QuerySetRun

QUERY_SET_JOB = "query-set"  # app/control/job_kinds.py names it too


class QuerySetRepository:
    """The query sets of one corpus (or, without one, of every corpus: what an activation re-scores)."""

    def __init__(self, session: Session, corpus_id: int | None = None) -> None:
        self.session = session
        self.corpus_id = corpus_id

    def add(self, name: str, queries: list[str]) -> QuerySet:
        """A new set; ConflictError when the corpus has one of this name."""
        assert self.corpus_id is not None
        created = QuerySet(corpus_id=self.corpus_id, name=name, queries=queries)
        try:
            with self.session.begin_nested():
                self.session.add(created)
                self.session.flush()
        except IntegrityError as error:
            raise ConflictError(f"query set {name!r} already exists in this corpus", field="name") from error
        return created

    def get(self, name: str) -> QuerySet | None:
        """One set of this corpus by name."""
        statement = select(QuerySet).where(QuerySet.corpus_id == self.corpus_id, QuerySet.name == name)
        return self.session.scalar(statement)

    def by_id(self, set_id: int) -> QuerySet | None:
        """One set by id (of any corpus)."""
        return self.session.get(QuerySet, set_id)

    def all(self) -> list[QuerySet]:
        """This corpus's sets by name (every corpus's without one)."""
        statement = select(QuerySet).order_by(QuerySet.corpus_id, QuerySet.name)
        if self.corpus_id is not None:
            statement = statement.where(QuerySet.corpus_id == self.corpus_id)
        return list(self.session.scalars(statement))

    def delete(self, query_set: QuerySet) -> None:
        """Delete a set and its runs."""
        self.session.delete(query_set)
        self.session.flush()

    def runs(self, set_id: int, limit: int = 200) -> list[QuerySetRun]:
        """A set's runs, oldest first (the newest `limit`)."""
        statement = (
            select(QuerySetRun).where(QuerySetRun.query_set_id == set_id).order_by(QuerySetRun.id.desc())
        )
        return list(reversed(list(self.session.scalars(statement.limit(limit)))))

    def run(self, run_id: int) -> QuerySetRun | None:
        """One run by id."""
        return self.session.get(QuerySetRun, run_id)

    def queue_run(self, query_set: QuerySet, corpus: str, trigger: str) -> QuerySetRun:
        """A queued run of a set and the job that scores it, in this transaction."""
        job_id = str(uuid.uuid4())
        run = QuerySetRun(query_set_id=query_set.id, job_id=job_id, status="queued", trigger=trigger)
        self.session.add(run)
        self.session.flush()
        params: dict[str, Any] = {"query_set_id": query_set.id, "run_id": run.id, "trigger": trigger}
        JobRepository(self.session).add(job_id, QUERY_SET_JOB, corpus, params)
        return run

    def start_run(self, query_set: QuerySet, job_id: str, trigger: str) -> QuerySetRun:
        """A run recorded by the job that scores it (a follow-up queued without one)."""
        run = QuerySetRun(query_set_id=query_set.id, job_id=job_id, status="running", trigger=trigger)
        self.session.add(run)
        self.session.flush()
        return run

    def finish_run(self, run: QuerySetRun, status: str, **fields: Any) -> None:
        """Record a run's end: its status and results (model, metrics, per_query, error)."""
        run.status, run.finished_at = status, utcnow()
        for key, value in fields.items():
            setattr(run, key, value)
        self.session.flush()

    def corpus_of(self, query_set: QuerySet) -> Corpus:
        """The corpus a set belongs to."""
        corpus = self.session.get(Corpus, query_set.corpus_id)
        assert corpus is not None  # the foreign key
        return corpus
