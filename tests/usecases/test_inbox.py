"""The tips inbox as use cases, without HTTP: items clustered and decided, idempotent by id, the cluster
pages, bad input (every database)."""

from __future__ import annotations

import pytest

from app.core.errors import ConflictError, InvalidInputError, LimitExceededError, NotFoundError
from app.usecases.corpora import CorpusService
from app.usecases.inbox.inboxes import InboxInput, InboxService, WebhookInput
from app.usecases.inbox.intake import IntakeService, ItemInput
from tests.helpers.runtime import RuntimeFactory, serve
from tests.usecases.inbox_helpers import calibrated, check_text, inbox, items


def test_items_cluster_by_claim_and_are_decided(make_runtime: RuntimeFactory) -> None:
    runtime = calibrated(make_runtime)
    inbox(runtime)
    intake = IntakeService(runtime)
    first = intake.add_items("tips", items([(3, 0), (3, 1), (7, 0), (3, 2), (7, 1)]))
    assert first.added == 5 and first.duplicates == 0
    assert first.clusters["t3-0"] == first.clusters["t3-1"] == first.clusters["t3-2"]
    assert first.clusters["t7-0"] == first.clusters["t7-1"] != first.clusters["t3-0"]
    again = intake.add_items("tips", items([(3, 0), (7, 1)]))  # resent: not counted twice
    assert again.added == 0 and again.duplicates == 2 and again.clusters == {
        "t3-0": first.clusters["t3-0"], "t7-1": first.clusters["t7-1"]}  # fmt: skip
    service = InboxService(runtime)
    clusters, cursor = service.clusters("tips", sort="size")
    assert cursor is None and [c["size"] for c in clusters] == [3, 2]
    biggest = clusters[0]
    assert {i["id"] for i in biggest["items"]} == {"t3-0", "t3-1", "t3-2"}
    assert biggest["decision"] in {"match", "review", "new"} and biggest["candidates"]
    assert biggest["candidates"][0]["id"] == "c3" and biggest["candidates"][0]["corpus"] == "checks"
    assert biggest["sources"] == {"whatsapp": 3} and biggest["languages"] == {"en": 3}
    assert sum(h["count"] for h in biggest["arrivals_per_hour"]) == 3
    assert service.get("tips")["items"] == 5 and service.get("tips")["clusters"] == 2
    assert service.cluster("tips", biggest["id"])["size"] == 3


def test_pages_sorts_and_filters(make_runtime: RuntimeFactory) -> None:
    runtime = calibrated(make_runtime)
    inbox(runtime)
    IntakeService(runtime).add_items("tips", items([(i, v) for i in (1, 2, 4, 5) for v in range(i % 3 + 1)]))
    service = InboxService(runtime)
    seen, cursor = [], None
    while True:
        page, cursor = service.clusters("tips", sort="size", limit=1, cursor=cursor)
        seen += page
        if cursor is None:
            break
    assert [c["size"] for c in seen] == sorted((c["size"] for c in seen), reverse=True) and len(seen) == 4
    newest, _ = service.clusters("tips", sort="first_arrival")
    assert [c["id"] for c in newest] == sorted(c["id"] for c in newest)
    decisions = {c["decision"] for c in seen}
    for decision in decisions:
        only, _ = service.clusters("tips", decisions=[decision])
        assert only and {c["decision"] for c in only} == {decision}
    assert service.clusters("tips", statuses=["dismissed"])[0] == []
    with pytest.raises(InvalidInputError, match="sort"):
        service.clusters("tips", sort="colour")
    with pytest.raises(InvalidInputError, match="status"):
        service.clusters("tips", statuses=["closed"])


def test_bad_input_names_the_field(make_runtime: RuntimeFactory) -> None:
    runtime = calibrated(make_runtime, max_inbox_items_per_request=3)
    service = InboxService(runtime)
    with pytest.raises(NotFoundError, match="missing"):
        service.create(InboxInput("tips", ["missing"]))
    with pytest.raises(InvalidInputError, match=r"webhooks\[0\].url"):
        service.create(InboxInput("tips", ["checks"], webhooks=[WebhookInput("ftp://x.example/hook")]))
    inbox(runtime)
    with pytest.raises(ConflictError):
        inbox(runtime)
    intake = IntakeService(runtime)
    with pytest.raises(NotFoundError, match="nowhere"):
        intake.add_items("nowhere", items([(1, 0)]))
    with pytest.raises(LimitExceededError):
        intake.add_items("tips", items([(1, 0), (1, 1), (1, 2), (2, 0)]))
    with pytest.raises(InvalidInputError, match=r"items\[1\].text"):
        intake.add_items("tips", [ItemInput("a", "fine text"), ItemInput("b", "   ")])
    service.delete("tips")
    with pytest.raises(NotFoundError):
        service.get("tips")


def test_an_uncalibrated_corpus_lists_candidates_undecided(make_runtime: RuntimeFactory) -> None:
    runtime = make_runtime(inbox_cluster_threshold=0.9999)
    serve(runtime)
    CorpusService(runtime).create_corpus("checks", "claim", None)
    CorpusService(runtime).upsert_documents(
        "checks", [(f"c{i}", check_text(i), None, True) for i in range(10)]
    )
    inbox(runtime)
    IntakeService(runtime).add_items("tips", items([(4, 0), (4, 1)]))
    (cluster,), _ = InboxService(runtime).clusters("tips", decisions=["none"])
    assert cluster["decision"] is None and cluster["candidates"][0]["id"] == "c4"
    assert cluster["candidates"][0]["probability"] is None
    assert InboxService(runtime).clusters("tips", decisions=["match", "review"])[0] == []
