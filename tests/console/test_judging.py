"""The console in a real browser: sign in, search, judge (the pair appears through the API), change a
judgement, keyboard judging, compare, duplicates, evaluations; what a read key and a wrong key see."""

from __future__ import annotations

import re
import time

from playwright.sync_api import expect

from tests.console.conftest import Console, Watched, choose, sign_in

QUERY = "was the moon landing staged in a studio"


def results(watch: Watched) -> list[str]:
    """The ids of the search results shown, in order."""
    watch.page.get_by_test_id("result").first.wait_for()
    return [str(r.get_attribute("data-id")) for r in watch.page.get_by_test_id("result").all()]


def search(watch: Watched, query: str) -> list[str]:
    """Type a query, press Enter, return the result ids."""
    watch.page.get_by_test_id("query").fill(query)
    watch.page.get_by_test_id("query").press("Enter")
    return results(watch)


def wait_pairs(console: Console, corpus: str, count: int) -> list[dict[str, object]]:
    """The corpus's pairs once there are `count` of them."""
    deadline = time.monotonic() + 10
    while True:
        pairs = console.pairs(corpus)
        if len(pairs) == count or time.monotonic() > deadline:
            return pairs
        time.sleep(0.1)


def test_search_judge_and_change_a_judgement(console: Console, watched: Watched) -> None:
    corpus = console.corpus()
    writer = console.key("write", [corpus])
    sign_in(watched, writer)
    page = watched.page
    expect(page.get_by_test_id("scope")).to_have_text("write")
    choose(watched, corpus)
    ids = search(watched, QUERY)
    assert len(ids) == 5 and ids[0] == "c1"  # the tiny model finds the claim itself first
    first = page.get_by_test_id("result").first
    expect(first.locator(".hit").first).to_be_visible()  # query terms marked
    expect(page.get_by_test_id("ranking")).to_have_text(re.compile("hybrid|dense|lexical"))

    first.get_by_test_id("judge-relevant").click()
    expect(first.get_by_test_id("judgement")).to_have_text("relevant")
    (pair,) = wait_pairs(console, corpus, 1)
    assert (pair["query"], pair["document_id"], pair["label"]) == (QUERY, "c1", 1)
    assert pair["judged_by"] == writer.split("_")[1]
    expect(page.get_by_test_id("counts")).to_contain_text("1 judged queries · 1 pairs")

    first.get_by_test_id("judge-not-relevant").click()
    expect(first.get_by_test_id("judgement")).to_have_text("not relevant")
    deadline = time.monotonic() + 10
    while console.pairs(corpus)[0]["label"] != 0 and time.monotonic() < deadline:
        time.sleep(0.1)
    (changed,) = console.pairs(corpus)
    assert changed["id"] == pair["id"] and changed["label"] == 0 and changed["updated_at"]

    # Keyboard first: j moves to the second result, 1 judges it relevant.
    page.locator("body").click(position={"x": 5, "y": 5})
    page.keyboard.press("j")
    expect(page.locator(".result.selected")).to_have_attribute("data-id", ids[1])
    page.keyboard.press("1")
    pairs = wait_pairs(console, corpus, 2)
    assert {(p["document_id"], p["label"]) for p in pairs} == {("c1", 0), (ids[1], 1)}
    # A new search of the same query shows the stored judgements.
    page.reload()
    choose(watched, corpus)
    search(watched, QUERY)
    second = page.locator(f"[data-testid=result][data-id='{ids[1]}']")
    expect(second.get_by_test_id("judgement")).to_have_text("relevant")


def test_compare_two_rankings_and_their_metrics(console: Console, watched: Watched) -> None:
    pairs = [
        {"query": QUERY, "document_id": "c1", "label": 1},
        {"query": "bleach covid", "document_id": "c2", "label": 1},
    ]
    corpus = console.corpus(pairs)
    sign_in(watched, console.key("write"))
    choose(watched, corpus)
    page = watched.page
    page.get_by_test_id("query").fill(QUERY)
    page.get_by_test_id("compare").click()
    left = page.get_by_test_id("compare-left").get_by_test_id("result")
    right = page.get_by_test_id("compare-right").get_by_test_id("result")
    expect(left.first).to_be_visible()
    assert left.count() == 5 and right.count() == 5
    assert page.get_by_test_id("search-view").count() == 0  # one view at a time
    page.get_by_test_id("compare-mode-right").select_option("lexical")
    page.get_by_test_id("compare").click()
    expect(page.locator("h3", has_text="right: lexical")).to_be_visible()
    lexical = [r.get_attribute("data-id") for r in right.all()]
    expected = console.http.post(f"/v1/corpora/{corpus}/rank", json={"query": QUERY, "mode": "lexical"},
                                 headers=console.headers()).json()["results"]  # fmt: skip
    assert lexical == [r["id"] for r in expected]
    assert 0 < len(lexical) < 5  # BM25 finds only the claims sharing a term with the query
    out = [
        m.inner_text()
        for m in page.get_by_test_id("compare-left").get_by_test_id("moved").all()
        if m.is_visible()
    ]
    assert out == ["out"] * (5 - len(lexical))  # the positions that moved are marked
    page.get_by_test_id("compare-metrics").click()
    expect(page.get_by_test_id("metrics-row")).to_have_count(2)
    expect(page.get_by_test_id("compare-report")).to_contain_text("Over 2 judged queries")


def test_duplicates_and_evaluations(console: Console, watched: Watched) -> None:
    corpus = console.corpus()
    qrels = [{"query_id": "q1", "document_id": "c1", "relevance": 1}]
    evaluation = {"name": "browser check", "corpus": corpus, "queries": [{"id": "q1", "text": QUERY}],
                  "qrels": qrels, "metrics": ["MRR", "MAP"]}  # fmt: skip
    created = console.http.post("/v1/evaluations", json=evaluation, headers=console.headers())
    assert created.status_code == 202, created.text
    sign_in(watched, console.key("read"))
    choose(watched, corpus)
    page = watched.page
    page.get_by_test_id("view-duplicates").click()
    page.get_by_test_id("duplicates-texts").fill(
        "The moon landing was staged in a film studio.\nsomething else"
    )
    page.get_by_test_id("duplicates-check").click()
    expect(page.get_by_test_id("duplicate-input")).to_have_count(2)
    first = page.get_by_test_id("duplicate-input").first
    expect(first.get_by_test_id("duplicate").first).to_have_attribute("data-id", "c1")
    expect(first.get_by_test_id("duplicate").first).to_contain_text("duplicate")  # passes the threshold
    expect(page.get_by_test_id("threshold")).to_contain_text("0.800")
    page.get_by_test_id("view-evaluations").click()
    page.get_by_test_id("evaluation").filter(has_text="browser check").click()
    report = page.get_by_test_id("evaluation-report")
    expect(report).to_contain_text("succeeded", timeout=60_000)  # followed until the job ends
    expect(report.locator("tbody tr")).to_have_count(2)  # the mean and query q1


def test_a_read_key_sees_no_judge_buttons(console: Console, watched: Watched) -> None:
    corpus = console.corpus()
    sign_in(watched, console.key("read", [corpus]))
    page = watched.page
    expect(page.get_by_test_id("scope")).to_have_text("read")
    choose(watched, corpus)
    assert len(search(watched, QUERY)) == 5
    assert page.get_by_test_id("judge-relevant").count() == 0
    assert page.get_by_test_id("judge-not-relevant").count() == 0
    assert page.get_by_test_id("retrain").count() == 0 and not page.get_by_test_id("view-models").is_visible()
    page.keyboard.press("1")  # the keyboard cannot judge either
    page.wait_for_timeout(300)
    assert console.pairs(corpus) == []


def test_a_wrong_key_shows_an_error_and_keeps_what_was_typed(console: Console, watched: Watched) -> None:
    watched.expected.append("status of 401")  # the browser logs the refused request itself
    page = watched.page
    wrong = console.admin_key[:-1] + ("A" if console.admin_key[-1] != "A" else "B")
    page.get_by_test_id("api-key").fill(wrong)
    page.get_by_test_id("sign-in").click()
    expect(page.get_by_test_id("error")).to_contain_text("401")
    expect(page.get_by_test_id("error")).to_contain_text("Authorization")
    assert page.get_by_test_id("api-key").input_value() == wrong
    assert page.get_by_test_id("query").count() == 0


def test_api_errors_name_the_field(console: Console, watched: Watched) -> None:
    watched.expected.append("status of 409")
    corpus = console.corpus()  # nothing judged: the metrics of a comparison have no query to score
    sign_in(watched, console.key("write"))
    choose(watched, corpus)
    page = watched.page
    page.get_by_test_id("view-compare").click()
    page.get_by_test_id("compare-metrics").click()
    expect(page.get_by_test_id("error")).to_contain_text("Conflict (409)")
    expect(page.get_by_test_id("error")).to_contain_text("[field pairs]")
    page.get_by_test_id("query").fill(QUERY)  # the next request clears the message
    page.get_by_test_id("search").click()
    expect(page.get_by_test_id("error")).to_be_hidden()
