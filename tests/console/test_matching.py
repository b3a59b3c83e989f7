"""Match decisions in a real browser: an uncalibrated corpus says so above the results, the Match view
calibrates it from the judged pairs and draws its curves, then a search answers checked before / maybe /
no earlier check as POST /match does, each result with its probability; duplicates decide by the policy
and store same / not-same judgements."""

from __future__ import annotations

import uuid
from typing import Any

from playwright.sync_api import expect

from tests.console.conftest import Console, Watched, choose, sign_in
from tests.console.test_judging import search, wait_pairs
from tests.helpers.match_data import claims, judged_pairs


def match_corpus(console: Console) -> tuple[str, list[dict[str, Any]]]:
    """A claim corpus with 40 judged queries (enough to calibrate); its name and documents."""
    name = f"checks-{uuid.uuid4().hex[:8]}"
    headers = console.headers()
    created = console.http.post("/v1/corpora", json={"name": name, "kind": "claim"}, headers=headers)
    assert created.status_code == 201, created.text
    docs = claims()
    stored = console.http.post(f"/v1/corpora/{name}/documents", json={"documents": docs}, headers=headers)
    assert stored.status_code == 200, stored.text
    pairs = console.http.post(
        f"/v1/corpora/{name}/pairs", json={"pairs": judged_pairs(docs)}, headers=headers
    )
    assert pairs.status_code == 201, pairs.text
    return name, docs


def test_calibrate_in_the_match_view_then_search_answers_the_desk(console: Console, watched: Watched) -> None:
    corpus, docs = match_corpus(console)
    sign_in(watched, console.key("write", [corpus]))
    choose(watched, corpus)
    page = watched.page
    search(watched, docs[45]["text"])
    expect(page.get_by_test_id("decision-uncalibrated")).to_contain_text("not calibrated")
    expect(page.get_by_test_id("probability").first).to_be_hidden()  # ranked, not calibrated

    page.get_by_test_id("view-match").click()
    expect(page.get_by_test_id("match-uncalibrated")).to_be_visible()
    page.get_by_test_id("policy-match-precision").fill("0.9")
    page.get_by_test_id("match-calibrate").click()
    expect(page.get_by_test_id("match-thresholds")).to_contain_text(
        "Auto-match at probability", timeout=60_000
    )
    expect(page.get_by_test_id("match-calibration").locator("canvas")).to_be_visible()
    policy = console.http.get(f"/v1/corpora/{corpus}/match-policy", headers=console.headers()).json()
    assert policy["match_precision"] == 0.9 and policy["thresholds"] is not None  # the form's policy was used

    page.get_by_test_id("view-search").click()
    for text in (docs[45]["text"], "recipe for banana bread"):
        search(watched, text)
        answer = console.http.post(
            f"/v1/corpora/{corpus}/match", json={"text": text}, headers=console.headers()
        )
        decision = answer.json()["decision"]
        expect(page.get_by_test_id("decision")).to_have_attribute("data-decision", decision)
        headline = {"match": "Checked before", "review": "Maybe checked before", "new": "No earlier check"}
        expect(page.get_by_test_id("decision")).to_contain_text(headline[decision])
        best = answer.json()["candidates"][0]["probability"]  # the first result is the first candidate
        expect(page.get_by_test_id("probability").first).to_have_text(f"probability {best:.2f}")


def test_duplicates_decide_by_the_policy_and_store_same_or_not(console: Console, watched: Watched) -> None:
    corpus, docs = match_corpus(console)
    calibrated = console.http.post(
        f"/v1/corpora/{corpus}/match/calibrate", json={}, headers=console.headers()
    )
    assert calibrated.status_code == 200, calibrated.text
    sign_in(watched, console.key("write", [corpus]))
    choose(watched, corpus)
    page = watched.page
    page.get_by_test_id("view-duplicates").click()
    incoming = docs[3]["text"].replace("said", "claimed")
    page.get_by_test_id("duplicates-texts").fill(incoming)
    page.get_by_test_id("duplicates-check").click()
    expect(page.get_by_test_id("threshold")).to_contain_text("match policy")
    expect(page.get_by_test_id("threshold")).to_contain_text("on the probability")
    first = page.get_by_test_id("duplicate").first
    expect(first.get_by_test_id("duplicate-probability")).to_contain_text("probability")
    before = len(console.pairs(corpus))
    first.get_by_test_id("duplicate-same").click()
    expect(first.get_by_test_id("duplicate-same")).to_have_attribute("aria-pressed", "true")
    stored = wait_pairs(console, corpus, before + 1)
    same = [p for p in stored if p["query"] == incoming]
    assert [(p["document_id"], p["label"]) for p in same] == [(first.get_attribute("data-id"), 1)]
