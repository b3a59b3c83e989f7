"""Bulk imports: a JSON-lines file of documents, or ClaimReview records, upserted by a background job,
resumable.

The upload is stored in the database with its job (app/db/blob_store.py), so any worker on any machine
runs it; a worker keeps a verified local copy under `<data dir>/imports/<job id>/`. The format is told
from the content: a page, a JSON document or JSON lines holding ClaimReview JSON-LD (or an answer of
Google's Fact Check Tools) is read as fact-checks (app/core/claimreview.py), anything else as one
document per line. The job first validates every record: with `on_error=refuse` (the default) nothing
is written if any is bad (the error names the record and field); with `skip` the bad ones are left out
and listed in the job's progress. Then it upserts the documents in
chunks of `PAIRANK_MAX_DOCUMENTS_PER_REQUEST` through the normal write path, recording after each
committed chunk how many lines are done. A job that fails, is cancelled or is interrupted resumes from
that count (`POST .../imports/{id}/resume`); upserts are idempotent, so nothing is doubled.

An import yields to queries: while this process has served one in the last second, it writes chunks of
at most `QUIET_CHUNK` documents and pauses after each step for as long as the step took, so it takes at
most about half of the CPU from them (its encoder passes already queue behind theirs); alone, it runs
at full speed.
"""

from __future__ import annotations

import logging
import shutil
import time
import uuid
from pathlib import Path
from typing import Any

from app.control import job_kinds
from app.control.import_records import Records, read_records
from app.control.job_context import JobContext, Outcome
from app.control.job_queue import JobService
from app.core.errors import ConflictError, InvalidInputError, NotFoundError
from app.db.admin_models import Job
from app.db.blob_store import BlobRepository, cached_input
from app.db.corpus_lookup import require_corpus
from app.db.engine import transaction
from app.db.repositories.jobs import JobRepository
from app.serving.context import ServiceContext
from app.usecases.corpora import CorpusService

log = logging.getLogger(__name__)
KIND = job_kinds.IMPORT
UPLOAD = "upload.jsonl"  # the job input holding the uploaded file
QUIET_CHUNK = 200  # documents per write while queries are being served
MAX_PAUSE_SECONDS = 2.0
ON_ERROR = ("refuse", "skip")
MAX_LISTED_PROBLEMS = 100  # a skipping import lists this many malformed records in its progress


class ImportService:
    """Start, inspect, cancel and resume import jobs (run by a job worker)."""

    def __init__(self, service: ServiceContext) -> None:
        self.service = service
        self.settings = service.settings
        self.folder = service.settings.data_dir / "imports"
        self.jobs = JobService(service.sessions)

    def upload_path(self) -> Path:
        """A fresh temporary file for an upload being received."""
        self.folder.mkdir(parents=True, exist_ok=True)
        return self.folder / f".upload-{uuid.uuid4().hex}"

    def submit(self, name: str, upload: Path, on_error: str = "refuse") -> Job:
        """Take over an uploaded file (JSON lines of documents, or ClaimReview) and queue its import job;
        `on_error`: `refuse` writes nothing when a record is malformed, `skip` leaves such records out."""
        try:
            with self.service.sessions() as session:
                require_corpus(session, name)
        except NotFoundError:
            upload.unlink(missing_ok=True)
            raise
        size = upload.stat().st_size
        job_id = str(uuid.uuid4())
        try:
            with transaction(self.service.sessions) as session:
                params = {"file": UPLOAD, "bytes": size, "on_error": on_error}
                job = JobRepository(session).add(job_id, KIND, name, params)
                job.progress = {"stage": "queued", "done": 0}
                BlobRepository(session).add_input(job_id, UPLOAD, upload)
                return job
        finally:
            upload.unlink(missing_ok=True)

    def get(self, name: str, job_id: str) -> Job:
        """One import job of a corpus."""
        info = self.jobs.get(job_id, KIND)
        if info.corpus_name != name:
            raise NotFoundError(f"import {job_id!r} does not exist for corpus {name!r}", field="id")
        return info

    def cancel(self, name: str, job_id: str) -> Job:
        """Ask a queued or running import to stop after its current chunk (from any process)."""
        self.get(name, job_id)
        return self.jobs.cancel(job_id)

    def resume(self, name: str, job_id: str) -> Job:
        """Queue a failed or cancelled import again, to continue from its last committed chunk."""
        info = self.get(name, job_id)
        if info.status not in ("failed", "cancelled"):
            raise ConflictError(
                f"import {job_id} is {info.status}; only a failed or cancelled one resumes", "id"
            )
        with self.service.sessions() as session:
            if UPLOAD not in BlobRepository(session).inputs(job_id):
                raise ConflictError(f"import {job_id}: its uploaded file is gone; upload it again", "id")
        with transaction(self.service.sessions) as session:
            JobRepository(session).requeue(job_id)
            job = JobRepository(session).get(job_id)
            assert job is not None
            return job


def run_import(service: ServiceContext, context: JobContext) -> Outcome:
    """The `import` job: validate every line, then upsert chunk by chunk from where it stopped."""
    cache = service.settings.data_dir / "imports" / context.job_id
    try:
        with service.sessions() as session:
            path = cached_input(session, context.job_id, UPLOAD, cache)
    except FileNotFoundError as error:
        raise ConflictError(
            f"import {context.job_id}: its uploaded file is gone; upload it again", "id"
        ) from error
    job = ImportJob(service, context, path)
    progress = job.run()
    shutil.rmtree(cache, ignore_errors=True)
    return Outcome({"progress": {**progress, "stage": "done"}})


class ImportJob:
    """Validate, then upsert chunk by chunk, recording progress after each commit."""

    def __init__(self, service: ServiceContext, context: JobContext, path: Path) -> None:
        self.service = service
        self.context = context
        self.corpus = context.corpus or ""
        self.path = path

    def run(self) -> dict[str, Any]:
        """Validate and write; returns the final progress (counts)."""
        progress = dict(self.context.progress_so_far or {})
        skip = self.context.params.get("on_error", "refuse") == "skip"
        with self.service.sessions() as session:
            language = require_corpus(session, self.corpus).language
        parsed = read_records(self.path, language, skip, self._yield_to_queries)
        if parsed.problems and not skip:
            shown = "; ".join(problem for problem, _ in parsed.problems[:5])
            more = f" (and {len(parsed.problems) - 5} more)" if len(parsed.problems) > 5 else ""
            raise InvalidInputError(
                f"{shown}{more}; nothing was written (on_error=skip leaves them out)", "body"
            )
        progress.update(format=parsed.format, skipped=len(parsed.problems))
        if parsed.problems:
            progress["problems"] = [listed for _, listed in parsed.problems[:MAX_LISTED_PROBLEMS]]
        self._write(parsed, progress)
        return progress

    def _write(self, parsed: Records, progress: dict[str, Any]) -> None:
        corpora = CorpusService(self.service)
        documents = parsed.rows
        size = self.service.settings.max_documents_per_request
        done = int(progress.get("done", 0))
        totals = {key: int(progress.get(key, 0)) for key in ("inserted", "updated", "unchanged")}
        progress.update(stage="writing", total=len(documents))
        start = done
        while start < len(documents):
            self.context.check_cancel()
            step_started = time.monotonic()
            chunk = min(size, QUIET_CHUNK) if self._queries_about() else size
            counts = corpora.upsert_documents(
                self.corpus, documents[start : start + chunk], parsed.languages[start : start + chunk]
            )
            start += chunk
            totals["inserted"] += counts.inserted
            totals["updated"] += counts.updated
            totals["unchanged"] += counts.unchanged
            progress.update(done=min(start, len(documents)), **totals)
            self.context.update(progress=dict(progress))
            self._yield_to_queries(step_started)

    def _queries_about(self) -> bool:
        """True when this process served a query in the last second."""
        state = self.service.serving.current()
        return state is not None and state.encoder.batcher.interactive_recently()

    def _yield_to_queries(self, step_started: float) -> None:
        """While queries are being served, pause as long as the last step took (at most 2 s)."""
        if self._queries_about():
            time.sleep(min(MAX_PAUSE_SECONDS, time.monotonic() - step_started))
