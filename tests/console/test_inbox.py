"""The Inbox tab in a real browser: the queue of clusters largest first with their decision and suggested
checks, keyboard triage (pick a check, confirm, next, reject) storing judged pairs by the signed-in key,
a cluster's items, the webhook deliveries."""

from __future__ import annotations

import time
import uuid

from playwright.sync_api import expect

from tests.console.conftest import Console, Watched, sign_in

MOON = "was the moon landing staged in a studio"


def wait_for(check: object, seconds: float = 10) -> None:
    """Poll until `check()` is true."""
    deadline = time.monotonic() + seconds
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, "never happened"
        time.sleep(0.1)


def test_keyboard_triage_of_the_queue(console: Console, watched: Watched) -> None:
    corpus = console.corpus()
    inbox = f"tips-{uuid.uuid4().hex[:6]}"
    admin = console.headers()
    created = console.http.post("/v1/inboxes", json={"name": inbox, "corpora": [corpus],
                                "webhooks": [{"url": "http://127.0.0.1:9/hook"}]}, headers=admin)  # fmt: skip
    assert created.status_code == 201, created.text
    items = [{"id": f"m{n}", "text": " " * n + MOON, "source": "whatsapp"} for n in range(3)]
    items.append({"id": "b0", "text": "does drinking bleach cure covid", "source": "email"})
    taken = console.http.post(f"/v1/inboxes/{inbox}/items", json={"items": items}, headers=admin).json()
    if taken["clusters"]["b0"] == taken["clusters"]["m0"]:  # the tiny model puts them close: split it off
        split = console.http.post(f"/v1/inboxes/{inbox}/moves", json={"item_id": "b0"}, headers=admin)
        assert split.status_code == 200, split.text
    writer = console.key("write")
    sign_in(watched, writer)
    page = watched.page
    page.get_by_test_id("view-inbox").click()
    page.get_by_test_id("inbox").select_option(inbox)
    clusters = page.get_by_test_id("cluster")
    expect(clusters).to_have_count(2)
    expect(clusters.first.get_by_test_id("cluster-size")).to_have_text("3")
    expect(clusters.first.locator("polyline")).to_have_attribute("points", "0.0,2.0 100.0,2.0")
    expect(page.get_by_test_id("inbox-items").locator("li")).to_have_count(3)
    candidates = page.get_by_test_id("inbox-candidate")
    expect(candidates.first).to_have_attribute("data-id", "c1")
    page.keyboard.press("1")
    page.keyboard.press("c")
    expect(page.get_by_test_id("inbox-last")).to_contain_text("confirmed c1 (3 pairs)")
    wait_for(lambda: len([p for p in console.pairs(corpus) if p["label"] == 1]) == 3)
    pairs = console.pairs(corpus)
    assert {p["judged_by"] for p in pairs} == {writer.split("_")[1]}
    assert {p["document_id"] for p in pairs} == {"c1"}
    # The confirmed cluster is answered: the open queue now holds the other one.
    expect(clusters).to_have_count(1)
    expect(page.get_by_test_id("inbox-items").locator("li")).to_have_count(1)
    first = page.get_by_test_id("inbox-candidate").first.get_attribute("data-id")
    page.keyboard.press("x")
    expect(page.get_by_test_id("inbox-last")).to_contain_text(f"rejected {first}")
    wait_for(lambda: any(p["label"] == 0 and p["document_id"] == first for p in console.pairs(corpus)))
    expect(page.get_by_test_id("inbox-candidate").first).not_to_have_attribute("data-id", str(first))
    page.keyboard.press("d")
    expect(clusters).to_have_count(0)
    page.get_by_test_id("inbox-status").select_option("")
    expect(clusters).to_have_count(2)
    deliveries = page.get_by_test_id("deliveries")  # nothing listens on port 9: attempted, then retried
    expect(deliveries).to_contain_text("cluster.created")

    def refused() -> bool:
        page.get_by_test_id("inbox-refresh").click()
        return "Connection refused" in deliveries.inner_text()

    wait_for(refused, 20)
