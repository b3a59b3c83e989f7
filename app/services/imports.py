"""Bulk imports: a JSON-lines file of documents upserted by a background job, resumable.

The upload is stored under `<data dir>/imports/<job id>.jsonl`. The job first validates every line
(nothing is written if any line is bad: the error names the line), then upserts the documents in
chunks of `PAIRANK_MAX_DOCUMENTS_PER_REQUEST` through the normal write path, recording after each
committed chunk how many lines are done. A job that fails, is cancelled or is interrupted by a restart
resumes from that count (`POST .../imports/{id}/resume`); upserts are idempotent, so nothing is doubled.
"""

from __future__ import annotations

import json
import logging
import threading
import uuid
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from app.db.admin_repository import JobRepository
from app.db.engine import transaction
from app.db.models import utcnow
from app.db.repository import CorpusRepository
from app.schemas.json_safety import check_body
from app.services.corpora import CorpusService, corpus_not_found
from app.services.errors import ConflictError, InvalidInputError, NotFoundError
from app.services.retraining import JobInfo, job_info
from app.services.runtime import Runtime

log = logging.getLogger(__name__)
KIND = "import"
Row = tuple[str, str, dict[str, Any] | None, bool]  # id, text, metadata, metadata given


class ImportCancelled(Exception):
    """Raised between chunks once a cancel was requested."""


class ImportService:
    """Start, inspect, cancel and resume import jobs."""

    _cancelled: set[str] = set()  # shared by the service objects of one process

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.settings = runtime.settings
        self.folder = runtime.settings.data_dir / "imports"

    def upload_path(self) -> Path:
        """A fresh temporary file for an upload being received."""
        self.folder.mkdir(parents=True, exist_ok=True)
        return self.folder / f".upload-{uuid.uuid4().hex}"

    def submit(self, name: str, upload: Path) -> JobInfo:
        """Take over an uploaded JSON-lines file and start its import job."""
        with self.runtime.sessions() as session:
            if CorpusRepository(session).get(name) is None:
                upload.unlink(missing_ok=True)
                raise corpus_not_found(name)
        size = upload.stat().st_size
        job_id = str(uuid.uuid4())
        path = self.folder / f"{job_id}.jsonl"
        upload.rename(path)
        with transaction(self.runtime.sessions) as session:
            job = JobRepository(session).add(job_id, KIND, name, {"file": path.name, "bytes": size})
            job.progress = {"stage": "queued", "done": 0}
            info = job_info(job)
        self._start(job_id, name, path)
        return info

    def get(self, name: str, job_id: str) -> JobInfo:
        """One import job of a corpus."""
        with self.runtime.sessions() as session:
            job = JobRepository(session).get(job_id)
            if job is None or job.kind != KIND or job.corpus_name != name:
                raise NotFoundError(f"import {job_id!r} does not exist for corpus {name!r}", field="id")
            return job_info(job)

    def cancel(self, name: str, job_id: str) -> JobInfo:
        """Ask a queued or running import to stop after its current chunk."""
        info = self.get(name, job_id)
        if info.status not in ("queued", "running"):
            raise ConflictError(f"import {job_id} is already {info.status}", "id")
        self._cancelled.add(job_id)
        return info

    def resume(self, name: str, job_id: str) -> JobInfo:
        """Start a failed or cancelled import again from its last committed chunk."""
        info = self.get(name, job_id)
        if info.status not in ("failed", "cancelled"):
            raise ConflictError(
                f"import {job_id} is {info.status}; only a failed or cancelled one resumes", "id"
            )
        path = self.folder / str(info.params["file"])
        if not path.is_file():
            raise ConflictError(f"import {job_id}: its uploaded file is gone; upload it again", "id")
        with transaction(self.runtime.sessions) as session:
            job = JobRepository(session).get(job_id)
            assert job is not None
            job.status, job.error, job.finished_at = "queued", None, None
            info = job_info(job)
        self._cancelled.discard(job_id)
        self._start(job_id, name, path)
        return info

    def _start(self, job_id: str, name: str, path: Path) -> None:
        runner = ImportJob(self, job_id, name, path)
        threading.Thread(target=runner.run, name=f"pairank-import-{job_id[:8]}", daemon=True).start()


class ImportJob:
    """Validate, then upsert chunk by chunk, recording progress after each commit."""

    def __init__(self, service: ImportService, job_id: str, corpus: str, path: Path) -> None:
        self.service = service
        self.runtime = service.runtime
        self.job_id = job_id
        self.corpus = corpus
        self.path = path

    def _update(self, **fields: Any) -> None:
        with transaction(self.runtime.sessions) as session:
            JobRepository(session).update(self.job_id, **fields)

    def run(self) -> None:
        """Run the job to its end, recording the outcome whatever happens."""
        with self.runtime.sessions() as session:
            job = JobRepository(session).get(self.job_id)
            assert job is not None
            progress = dict(job.progress or {})
        self._update(status="running", started_at=utcnow())
        try:
            documents = self._validated()
            self._write(documents, progress)
            self._update(status="succeeded", finished_at=utcnow(), progress={**progress, "stage": "done"})
            self.path.unlink(missing_ok=True)
        except ImportCancelled:
            self._update(status="cancelled", finished_at=utcnow(), error="cancelled; resume to continue")
        except Exception as error:  # noqa: BLE001 - every failure ends the job with its reason
            log.warning("import %s failed: %s", self.job_id, error)
            message = error.message if hasattr(error, "message") else f"{type(error).__name__}: {error}"
            self._update(status="failed", finished_at=utcnow(), error=message)

    def _validated(self) -> list[Row]:
        from app.schemas.corpora import DocumentIn

        documents = []
        with self.path.open("rb") as handle:
            for number, raw in enumerate(handle, start=1):
                if not raw.strip():
                    continue
                problem = check_body(raw)
                if problem is not None:
                    raise InvalidInputError(f"line {number}: {problem[0]}: {problem[1]}", "body")
                try:
                    document = DocumentIn.model_validate(json.loads(raw))
                except ValidationError as error:
                    first = error.errors()[0]
                    where = ".".join(str(p) for p in first["loc"]) or "line"
                    raise InvalidInputError(f"line {number}: {where}: {first['msg']}", "body") from error
                given = "metadata" in document.model_fields_set
                documents.append((document.id, document.text, document.metadata, given))
        return documents

    def _write(
        self, documents: list[tuple[str, str, dict[str, Any] | None, bool]], progress: dict[str, Any]
    ) -> None:
        corpora = CorpusService(self.runtime)
        size = self.runtime.settings.max_documents_per_request
        done = int(progress.get("done", 0))
        totals = {key: int(progress.get(key, 0)) for key in ("inserted", "updated", "unchanged")}
        progress.update(stage="writing", total=len(documents))
        for start in range(done, len(documents), size):
            if self.job_id in self.service._cancelled:
                raise ImportCancelled
            counts = corpora.upsert_documents(self.corpus, documents[start : start + size])
            totals["inserted"] += counts.inserted
            totals["updated"] += counts.updated
            totals["unchanged"] += counts.unchanged
            progress.update(done=min(start + size, len(documents)), **totals)
            self._update(progress=dict(progress))
