"""The console's Re-rank selector in a real browser: a corpus whose ranking has a re-ranking stage (the tiny
cross-encoder, registered with `pairank models register` on the server's data), searched re-ranked and
with the stage off, compared side by side and over the judged queries; an admin may name the registered
cross-encoder, a read key may not."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.console.conftest import Console, Watched, choose, sign_in
from tests.console.test_judging import QUERY, results, search
from tests.processes.test_reranking_processes import models_cli


@pytest.fixture(scope="module")
def reranker(console: Console, tiny_reranker_dir: Path) -> str:
    """The tiny cross-encoder's version, registered in the console's server (registered again: unchanged)."""
    registered = models_cli(console.env, "register", str(tiny_reranker_dir))
    assert registered.returncode == 0, registered.stderr
    info = json.loads(registered.stdout)
    assert info["kind"] == "cross-encoder"
    return str(info["version"])


def reranked_corpus(console: Console, version: str) -> str:
    """A corpus of the five claims whose stage re-ranks the top 5 (all of them) with the cross-encoder."""
    corpus = console.corpus()
    stage = {"mode": "dense", "rerank": {"model": version, "k": 5}}
    put = console.http.put(f"/v1/corpora/{corpus}/ranking", json=stage, headers=console.headers())
    assert put.status_code == 200, put.text
    assert put.json()["ranking"]["rerank"] == {"model": version, "k": 5, "weight": 1.0}
    return corpus


def rank(console: Console, corpus: str, **body: Any) -> dict[str, Any]:
    """POST .../rank over HTTP (the admin key); the first call loads the cross-encoder."""
    response = console.http.post(
        f"/v1/corpora/{corpus}/rank", json={"query": QUERY, **body}, headers=console.headers()
    )
    assert response.status_code == 200, response.text
    ranked: dict[str, Any] = response.json()
    return ranked


def shown(scope: Any, test_id: str) -> Any:
    """The visible elements of a test id in a page or element (x-show hides, it does not remove)."""
    return scope.locator(f"[data-testid={test_id}]:visible")


def options(watch: Watched, test_id: str) -> Any:
    """A select's options (to expect their labels: the models list may still be loading)."""
    return expect(watch.page.get_by_test_id(test_id).locator("option"))


def test_search_reranked_and_with_the_stage_off(console: Console, watched: Watched, reranker: str) -> None:
    corpus = reranked_corpus(console, reranker)
    reranked = rank(console, corpus)
    first_stage = rank(console, corpus, rerank={"enabled": False})
    assert reranked["ranking"]["rerank"]["model"] == reranker and "rerank" not in first_stage["ranking"]
    sign_in(watched, console.key("write", [corpus]))
    choose(watched, corpus)
    page = watched.page
    stage = f"re-ranked top 5 by {reranker}"
    options(watched, "rerank").to_have_text([f"corpus default ({stage})", "off"])  # no model to name

    assert search(watched, QUERY) == [r["id"] for r in reranked["results"]]
    expect(page.get_by_test_id("ranking")).to_have_text(f"dense · {stage}")
    scores = shown(page, "rerank-score")
    expect(scores).to_have_count(5)
    expect(scores.first).to_have_text(f"cross-encoder {reranked['results'][0]['rerank_score']:.3f}")

    page.get_by_test_id("rerank").select_option("off")
    page.get_by_test_id("search").click()
    expect(page.get_by_test_id("ranking")).to_have_text("dense")
    expect(shown(page, "rerank-score")).to_have_count(0)
    assert results(watched) == [r["id"] for r in first_stage["results"]]


def test_compare_the_stage_off_against_the_corpus_default(
    console: Console, watched: Watched, reranker: str
) -> None:
    corpus = reranked_corpus(console, reranker)
    model = rank(console, corpus)["model"]  # the cross-encoder loaded before the browser waits for it
    sign_in(watched, console.key("write", [corpus]))
    choose(watched, corpus)
    page = watched.page
    search(watched, QUERY)
    page.get_by_test_id("result").first.get_by_test_id("judge-relevant").click()  # one judged query
    expect(page.get_by_test_id("counts")).to_contain_text("1 judged queries")

    page.get_by_test_id("view-compare").click()
    page.get_by_test_id("compare-mode-left").select_option("dense")
    page.get_by_test_id("compare-rerank-left").select_option("off")
    assert page.get_by_test_id("compare-rerank-right").input_value() == ""  # the corpus default
    page.get_by_test_id("compare").click()
    stage = f"re-ranked top 5 by {reranker}"
    left, right = (page.locator(f".column.{which} h3") for which in ("left", "right"))
    expect(left).to_have_text(f"left: dense · {model}")
    expect(right).to_contain_text(f"right: dense · {stage} · ")
    expect(page.get_by_test_id("compare-left").get_by_test_id("result")).to_have_count(5)
    expect(page.get_by_test_id("compare-right").get_by_test_id("result")).to_have_count(5)
    expect(shown(page.get_by_test_id("compare-left"), "rerank-score")).to_have_count(0)
    expect(shown(page.get_by_test_id("compare-right"), "rerank-score")).to_have_count(5)

    page.get_by_test_id("compare-metrics").click()
    expect(page.get_by_test_id("compare-report")).to_contain_text("Over 1 judged queries")
    expect(page.get_by_test_id("metrics-row")).to_have_count(1)
    expect(page.get_by_test_id("report-left")).to_have_text(f"left: dense · {model}")
    expect(page.get_by_test_id("report-right")).to_contain_text(f"right: dense · {stage}")


def test_an_admin_may_name_the_cross_encoder_and_a_read_key_may_not(
    console: Console, browser: Any, watched: Watched, reranker: str
) -> None:
    plain = console.corpus()  # no stage
    staged = reranked_corpus(console, reranker)
    rank(console, staged)
    sign_in(watched, console.admin_key)
    choose(watched, plain)
    page = watched.page
    named = f"re-rank with {reranker}"
    options(watched, "rerank").to_have_text(["corpus default (none)", "off", named])
    page.get_by_test_id("rerank").select_option(reranker)
    search(watched, QUERY)
    expect(page.get_by_test_id("ranking")).to_contain_text(f"re-ranked top 20 by {reranker}")
    expect(shown(page, "rerank-score")).to_have_count(5)
    page.get_by_test_id("view-compare").click()
    options(watched, "compare-rerank-right").to_have_text(["corpus default (none)", "off", named])
    served = page.get_by_test_id("compare-model-right").locator("option")
    expect(served.filter(has_text=reranker)).to_have_count(0)  # a cross-encoder cannot serve a side
    expect(served.first).to_have_text("serving model")

    context = browser.new_context()
    reader = Watched(context.new_page())
    reader.page.on("pageerror", lambda error: reader.errors.append(f"uncaught: {error}"))
    try:
        reader.page.goto(f"{console.url}/console")
        sign_in(reader, console.key("read", [plain, staged]))
        choose(reader, plain)
        expect(reader.page.get_by_test_id("rerank")).to_be_hidden()  # no stage, nothing to name
        choose(reader, staged)
        expect(reader.page.get_by_test_id("rerank")).to_be_visible()
        options(reader, "rerank").to_have_text([f"corpus default (re-ranked top 5 by {reranker})", "off"])
    finally:
        context.close()
    assert not reader.unexpected(), reader.errors
