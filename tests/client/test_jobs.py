"""Jobs through the client: a retraining waited to its end (tiny model, eight pairs), activation and
rollback, waits that time out or end in a cancel or a failure, and imports cancelled, resumed and waited."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from app.schemas.admin import JobOut
from pairank.client import (
    Client,
    ConflictError,
    InvalidRequestError,
    Job,
    JobCancelledError,
    JobFailedError,
    NotFoundError,
    WaitTimeoutError,
)
from tests.api.conftest import CLAIMS
from tests.api.test_admin import PARAPHRASES

CORPUS = "jobs-claims"
FAST = {"batch_size": 4, "learning_rate": 1e-3, "cross_validation": "never"}


@pytest.fixture(scope="module")
def corpus(admin: Client) -> str:
    """Five claims and eight labeled paraphrases."""
    admin.create_corpus(CORPUS, "claim")
    admin.upsert(CORPUS, [{"id": i, "text": t} for i, t in CLAIMS])
    admin.add_pairs(CORPUS, [{"query": q, "document_id": d, "label": 1} for q, d in PARAPHRASES])
    return CORPUS


def test_waits_time_out_and_cancelled_jobs_raise_while_a_queued_import_is_cancelled_and_resumed(
    admin: Client, corpus: str
) -> None:
    long = admin.retrain(corpus, epochs=50, **{**FAST, "batch_size": 2})
    assert isinstance(long, Job) and long.record.kind == "retrain"
    with pytest.raises(WaitTimeoutError) as late:
        long.wait(timeout=0.3, poll_interval=0.1)
    assert late.value.record.status in ("queued", "running") and isinstance(late.value, TimeoutError)
    deadline = time.monotonic() + 60
    while long.refresh().status == "queued" and time.monotonic() < deadline:
        time.sleep(0.1)
    assert long.status == "running"
    # One worker runs one job at a time: an import stays queued behind the retraining.
    upload = admin.import_file(
        corpus, b'{"id": "i1", "text": "an imported claim"}\n{"id": "i2", "text": "more"}\n'
    )
    assert upload.record.kind == "import" and upload.status == "queued"
    assert upload.cancel().status == "cancelled" and upload.status == "cancelled"
    assert upload.resume().status == "queued"
    assert long.cancel().cancel_requested
    with pytest.raises(JobCancelledError) as cancelled:
        long.wait(timeout=60, poll_interval=0.1)
    assert cancelled.value.record.status == "cancelled" and long.status == "cancelled"
    with pytest.raises(ConflictError):
        long.cancel()  # it has ended
    done = upload.wait(timeout=60, poll_interval=0.1)
    assert done.status == "succeeded" and done.progress is not None and done.progress["done"] == 2
    assert admin.get_document(corpus, "i2").text == "more"
    admin.delete_document(corpus, "i1")
    admin.delete_document(corpus, "i2")


def test_imports_from_a_file_and_a_failed_import(admin: Client, corpus: str, tmp_path: Path) -> None:
    lines = tmp_path / "more.jsonl"
    lines.write_text("".join(json.dumps({"id": f"f{n}", "text": f"file claim {n}"}) + "\n" for n in range(3)))
    polled: list[JobOut] = []
    record = admin.import_file(corpus, lines).wait(timeout=60, poll_interval=0.1, progress=polled.append)
    assert record.progress is not None and record.progress["inserted"] == 3
    assert polled[-1] == record and all(isinstance(p, JobOut) for p in polled)
    bad = admin.import_file(corpus, [b'{"id": "f9", "text": "fine"}\n', b'{"id": "f10"}\n'])  # chunks
    with pytest.raises(JobFailedError) as failed:
        bad.wait(timeout=60, poll_interval=0.1)
    assert failed.value.record.status == "failed" and "line 2" in (failed.value.record.error or "")
    assert not isinstance(failed.value, JobCancelledError)
    with pytest.raises(FileNotFoundError):
        admin.import_file(corpus, tmp_path / "missing.jsonl")
    for n in range(3):
        admin.delete_document(corpus, f"f{n}")


def test_a_retraining_waited_to_its_end_then_activated_and_rolled_back(admin: Client, corpus: str) -> None:
    with pytest.raises(InvalidRequestError) as invalid:
        admin.retrain(corpus, epochs=0)  # refused by the API's model before sending
    assert invalid.value.field == "epochs"
    admin.create_corpus("jobs-empty", "claim")
    with pytest.raises(ConflictError):
        admin.retrain("jobs-empty")  # no pairs to train on
    before = admin.rank(corpus, "moon hoax", k=1).model
    polled: list[JobOut] = []
    job = admin.retrain(corpus, epochs=1, auto_activate=False, **FAST)
    record = job.wait(timeout=300, poll_interval=0.2, progress=polled.append)
    assert record.status == "succeeded" and record.model_version and job.record == record
    assert {p.status for p in polled} >= {"running", "succeeded"}
    assert record.gate is not None and record.gate["activation"] == "not requested"
    assert admin.get_job(job.id).record.model_version == record.model_version
    assert job.id in [j.id for j in admin.list_jobs(limit=20)]
    activation = admin.activate(record.model_version)
    assert activation.wait(timeout=120).status == "succeeded"
    assert admin.rank(corpus, "moon hoax", k=1).model == record.model_version
    assert admin.rollback().wait(timeout=120).status == "succeeded"  # the version active before
    assert admin.rank(corpus, "moon hoax", k=1).model == before
    with pytest.raises(ConflictError) as kept:
        admin.delete_model(record.model_version)  # the rollback target now: kept
    assert "previous" in kept.value.detail
    with pytest.raises(NotFoundError):
        admin.delete_model("nope@123456789abc")
    admin.delete_corpus("jobs-empty")
