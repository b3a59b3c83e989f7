"""Re-match on publish as use cases: a check published after the tips reaches their open cluster from
the corpus's change log; a process that was not running catches up from the inbox's mark; two passes
over the same changes store them once (every database)."""

from __future__ import annotations

from app.usecases.corpora import CorpusService
from app.usecases.inbox.inboxes import InboxService
from app.usecases.inbox.intake import IntakeService
from app.usecases.inbox.rematch import rematch_once
from tests.helpers.runtime import RuntimeFactory, serve
from tests.usecases.inbox_helpers import calibrated, check_text, inbox, items


def listed(runtime, cluster_id: int) -> set[str]:  # noqa: ANN001
    cluster = InboxService(runtime).cluster("tips", cluster_id)
    shown = {c["id"] for c in cluster["candidates"]}
    return shown | ({cluster["match"]["id"]} if cluster["match"] else set())


def test_a_published_check_reaches_earlier_tips(make_runtime: RuntimeFactory) -> None:
    runtime = calibrated(make_runtime, checks=40)
    inbox(runtime)
    taken = IntakeService(runtime).add_items("tips", items([(45, 0), (45, 1), (3, 0)]))
    cluster = taken.clusters["t45-0"]
    assert "c45" not in listed(runtime, cluster)
    assert rematch_once(runtime) == 0  # nothing published yet
    CorpusService(runtime).upsert_documents("checks", [("c45", check_text(45), None, True)])
    assert rematch_once(runtime) >= 1
    assert "c45" in listed(runtime, cluster)
    assert rematch_once(runtime) == 0  # the mark moved: the same changes are not read again


def test_a_process_that_was_down_catches_up(make_runtime: RuntimeFactory) -> None:
    first = calibrated(make_runtime, checks=40)
    inbox(first)
    cluster = IntakeService(first).add_items("tips", items([(47, 0)])).clusters["t47-0"]
    CorpusService(first).upsert_documents("checks", [("c47", check_text(47), None, True)])
    first.close()  # it never re-matched: the change is past the inbox's mark in the database
    second = make_runtime(inbox_cluster_threshold=0.9999)
    serve(second)
    assert rematch_once(second) >= 1
    assert "c47" in listed(second, cluster)
    assert rematch_once(second) == 0
