"""The desk's triage as use cases: a confirmed match stores a positive judged pair per item with the
person's key, a rejected candidate negative pairs and is never suggested again, moves and splits
calibrate the inbox's joining threshold (every database)."""

from __future__ import annotations

import pytest

from app.core.errors import InvalidInputError, NotFoundError
from app.usecases.inbox.inboxes import InboxService
from app.usecases.inbox.intake import IntakeService
from app.usecases.inbox.triage import TriageService
from app.usecases.pairs import PairService
from tests.helpers.runtime import RuntimeFactory
from tests.usecases.inbox_helpers import calibrated, inbox, items, tip


def test_confirm_and_reject_store_judged_pairs(make_runtime: RuntimeFactory) -> None:
    runtime = calibrated(make_runtime)
    inbox(runtime)
    taken = IntakeService(runtime).add_items("tips", items([(33, 0), (33, 1), (34, 0)]))
    triage = TriageService(runtime)
    done = triage.confirm("tips", taken.clusters["t33-0"], "checks", "c33", "ana")
    assert done.pairs == 2 and done.clusters[0]["status"] == "answered"
    assert done.clusters[0]["match"]["id"] == "c33"
    pairs, _ = PairService(runtime).list_pairs("checks", None, 0, 100, tip(33, 1))
    assert [(p.document_id, p.label, p.judged_by) for p in pairs] == [("c33", 1.0, "ana")]
    other = taken.clusters["t34-0"]
    wrong = InboxService(runtime).cluster("tips", other)["candidates"][0]["id"]
    rejected = triage.reject("tips", other, "checks", wrong, "ben").clusters[0]
    assert f"checks/{wrong}" in rejected["rejected"] and wrong not in {
        c["id"] for c in rejected["candidates"]
    }
    pairs, _ = PairService(runtime).list_pairs("checks", None, 0, 100, tip(34, 0))
    assert [(p.document_id, p.label, p.judged_by) for p in pairs if p.document_id == wrong] == [
        (wrong, 0.0, "ben")
    ]
    with pytest.raises(InvalidInputError, match="corpus"):
        triage.reject("tips", other, "elsewhere", "c1", "ben")
    with pytest.raises(NotFoundError):
        triage.confirm("tips", other, "checks", "c999", "ben")
    assert triage.set_status("tips", other, "needs_check", "ben").clusters[0]["status"] == "needs_check"
    with pytest.raises(InvalidInputError, match="status"):
        triage.set_status("tips", other, "closed", "ben")


def test_moves_and_splits_calibrate_the_threshold(make_runtime: RuntimeFactory) -> None:
    runtime = calibrated(make_runtime)
    inbox(runtime)
    taken = IntakeService(runtime).add_items("tips", items([(1, 0), (1, 1), (1, 2), (2, 0), (2, 1)]))
    triage = TriageService(runtime)
    split = triage.move("tips", "t1-2", None, "ana")
    assert [c["size"] for c in split.clusters] == [2, 1]
    alone = split.clusters[1]["id"]
    with pytest.raises(InvalidInputError, match="alone"):
        triage.move("tips", "t1-2", None, "ana")
    triage.move("tips", "t1-2", taken.clusters["t1-0"], "ana")
    triage.move("tips", "t2-1", None, "ana")
    assert InboxService(runtime).get("tips")["threshold"] is not None  # four labeled moves, both kinds
    assert InboxService(runtime).cluster("tips", taken.clusters["t1-0"])["size"] == 3
    with pytest.raises(NotFoundError):
        InboxService(runtime).cluster("tips", alone)["size"]  # emptied: no longer a cluster
    listed, _ = InboxService(runtime).clusters("tips")
    assert sorted(c["size"] for c in listed) == [1, 1, 3]
