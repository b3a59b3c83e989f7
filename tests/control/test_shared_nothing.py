"""Processes share nothing but the database: a job submitted through one runtime runs on another whose
data dir is empty, because its inputs travel in the database (app/db/blob_store.py). Both databases."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy.orm import Session, sessionmaker

from app.control.worker import JobWorker
from app.db.admin_models import Job
from app.db.blob_store import BlobRepository
from app.db.engine import transaction
from app.db.repositories.jobs import JobRepository
from app.process import JOB_HANDLERS
from app.serving.runtime import Runtime
from app.usecases.corpora import CorpusService
from app.usecases.imports import ImportService
from app.usecases.pairs import PairInput, PairService
from app.usecases.retraining import RetrainCommand, RetrainService
from tests.helpers.runtime import serve


def machine(make_runtime: Callable[..., Runtime], data_dir: Path) -> Runtime:
    """A serving runtime with its own data dir: one machine of the deployment."""
    runtime = make_runtime(data_dir=data_dir)
    serve(runtime)
    return runtime


def finished(runtime: Runtime, job_id: str) -> Job:
    """The job's row after a worker of `runtime` ran everything queued."""
    worker = JobWorker(runtime, JOB_HANDLERS)
    while worker.run_once():
        pass
    with runtime.sessions() as session:
        job = session.get(Job, job_id)
        assert job is not None
        return job


def test_an_import_submitted_on_one_machine_runs_on_another(
    make_runtime: Callable[..., Runtime], tmp_path: Path
) -> None:
    submitter = machine(make_runtime, tmp_path / "machine-a")
    CorpusService(submitter).create_corpus("claims", "claim", None)
    upload = ImportService(submitter).upload_path()
    lines = [{"id": f"c{i}", "text": f"claim number {i} about the moon"} for i in range(5)]
    upload.write_text("".join(json.dumps(line) + "\n" for line in lines))
    job = ImportService(submitter).submit("claims", upload)
    assert not upload.exists()  # the upload lives in the database now, not on machine A's disk
    runner = machine(make_runtime, tmp_path / "machine-b")
    done = finished(runner, job.id)
    assert done.status == "succeeded", done.error
    documents, _ = CorpusService(runner).list_documents("claims", limit=10, after=0)
    assert sorted(d.external_id for d in documents) == [f"c{i}" for i in range(5)]
    assert not (tmp_path / "machine-b" / "imports" / job.id).exists()  # the worker's copy was a cache


def test_a_retraining_submitted_on_one_machine_runs_on_another(
    make_runtime: Callable[..., Runtime], tmp_path: Path
) -> None:
    submitter = machine(make_runtime, tmp_path / "machine-a")
    CorpusService(submitter).create_corpus("claims", "claim", None)
    pairs = [
        PairInput(f"did the mayor ban thing {i}?", None, f"the mayor banned thing {i}.", 1.0)
        for i in range(12)
    ]
    PairService(submitter).add_pairs("claims", pairs)
    choices = {"epochs": 1, "batch_size": 4, "learning_rate": 1e-3, "auto_activate": False,
               "cross_validation": "never", "hard_negatives": None}  # fmt: skip
    request = RetrainCommand("claims", choices)
    job = RetrainService(submitter).submit(request)
    assert not (tmp_path / "machine-a" / "jobs").exists()  # nothing staged on the submitting machine
    with submitter.sessions() as session:
        assert set(BlobRepository(session).inputs(job.id)) == {"train_pairs.jsonl", "dev_pairs.jsonl"}
    runner = machine(make_runtime, tmp_path / "machine-b")
    done = finished(runner, job.id)
    assert done.status == "succeeded", (done.error, done.log_tail)
    assert (tmp_path / "machine-b" / "jobs" / job.id / "dev_pairs.jsonl").is_file()


def test_a_corrupted_cached_input_is_fetched_again(
    make_runtime: Callable[..., Runtime], tmp_path: Path
) -> None:
    from app.db.blob_store import cached_input

    runtime = machine(make_runtime, tmp_path / "machine")
    CorpusService(runtime).create_corpus("claims", "claim", None)
    upload = ImportService(runtime).upload_path()
    upload.write_text('{"id": "a", "text": "one"}\n')
    job = ImportService(runtime).submit("claims", upload)
    cache = tmp_path / "cache"
    with runtime.sessions() as session:
        path = cached_input(session, job.id, "upload.jsonl", cache)
        original = path.read_bytes()
        path.write_bytes(b'{"id": "a", "text": "tampered"}\n')
        assert cached_input(session, job.id, "upload.jsonl", cache).read_bytes() == original


def test_a_job_is_visible_only_with_its_inputs(sessions: sessionmaker[Session], tmp_path: Path) -> None:
    # A submitting process killed between the job row and its inputs leaves neither (on SQLite too,
    # where a savepoint opening the transaction would have committed the job row on its own).
    upload = tmp_path / "upload.jsonl"
    upload.write_text('{"id": "a", "text": "one"}\n')
    with pytest.raises(RuntimeError, match="killed"), transaction(sessions) as session:
        JobRepository(session).add("job-1", "import", None, {})
        sha256 = BlobRepository(session).add_input("job-1", "upload.jsonl", upload)
        raise RuntimeError("killed before the commit")
    with sessions() as session:
        assert session.get(Job, "job-1") is None and BlobRepository(session).size(sha256) is None
