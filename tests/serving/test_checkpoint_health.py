"""Failed checkpoints are remembered per corpus, retried after a doubling backoff, cleared by a success."""

from __future__ import annotations

import errno

import pytest

import app.serving.checkpoints as checkpoints
from app.serving.checkpoints import CheckpointHealth


def test_failures_back_off_doubling_and_a_success_clears_them(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [1000.0]
    monkeypatch.setattr(checkpoints.time, "monotonic", lambda: now[0])
    health = CheckpointHealth()
    assert health.may_try("claims") and health.report() == {}
    for attempt, wait in enumerate([5, 10, 20, 40, 80, 120, 120], start=1):
        failure = health.failed("claims", OSError(errno.ENOSPC, "No space left on device"))
        assert failure.count == attempt and failure.disk
        now[0] += wait - 0.5
        assert not health.may_try("claims")
        now[0] += 0.5
        assert health.may_try("claims")
    assert health.may_try("answers")  # other corpora are not held back
    report = health.report()["claims"]
    assert report["failures"] == 7 and "No space left" in report["error"] and report["disk"] is True
    assert health.failures() == {"claims": 7}
    health.succeeded("claims")
    assert health.report() == {} and health.failures() == {}


def test_only_storage_errors_count_as_disk_errors() -> None:
    health = CheckpointHealth()
    assert health.failed("a", OSError(errno.EDQUOT, "Disk quota exceeded")).disk
    assert not health.failed("b", RuntimeError("faiss: something else")).disk
