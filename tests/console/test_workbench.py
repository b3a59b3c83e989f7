"""The workbench for a team in a real browser: keyboard judging right after Enter, graded judging, two
judges on one pair with their agreement, the review screen (edit and delete your own), importing a corpus
from a file, judged pairs uploaded with a broken line, URL state, metadata links and filters."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from tests.console.conftest import Console, Watched, choose, sign_in
from tests.console.test_judging import QUERY, results, search


def wait_pairs(console: Console, corpus: str, count: int) -> list[dict[str, Any]]:
    """The corpus's pairs once there are `count` of them (or after 10 s)."""
    deadline = time.monotonic() + 10
    while len(pairs := console.pairs(corpus)) != count and time.monotonic() < deadline:
        time.sleep(0.1)
    return pairs


def test_keyboard_judging_works_right_after_enter(console: Console, watched: Watched) -> None:
    corpus = console.corpus()
    sign_in(watched, console.key("write", [corpus]))
    choose(watched, corpus)
    page = watched.page
    expect(page.get_by_test_id("keyboard-help")).to_contain_text("Escape")
    ids = search(watched, QUERY)
    page.keyboard.press("1")  # no click first: Enter let go of the query box
    page.keyboard.press("j")
    page.keyboard.press("0")
    pairs = wait_pairs(console, corpus, 2)
    assert {(p["document_id"], p["label"]) for p in pairs} == {(ids[0], 1), (ids[1], 0)}
    assert page.get_by_test_id("query").input_value() == QUERY  # nothing typed into the query
    page.keyboard.press("/")
    page.keyboard.type(" again")
    page.keyboard.press("Escape")
    page.keyboard.press("u")  # out of the box again: u marks the selected result unsure
    expect(page.locator(f"[data-testid=result][data-id='{ids[1]}'] [data-testid=judgement]")).to_have_text(
        "unsure"
    )
    assert page.get_by_test_id("query").input_value() == QUERY + " again"


def test_graded_judging(console: Console, watched: Watched) -> None:
    corpus = console.corpus(scale="graded")
    sign_in(watched, console.key("write", [corpus]))
    choose(watched, corpus)
    page = watched.page
    ids = search(watched, QUERY)
    assert page.get_by_test_id("judge-relevant").count() == 0
    first = page.get_by_test_id("result").first
    first.get_by_test_id("judge-grade-3").click()
    expect(first.get_by_test_id("judgement")).to_have_text("3 same claim")
    page.keyboard.press("j")
    page.keyboard.press("2")
    pairs = wait_pairs(console, corpus, 2)
    assert {(p["document_id"], p["label"]) for p in pairs} == {(ids[0], 3), (ids[1], 2)}


def test_two_judges_agreement_and_review(console: Console, watched: Watched) -> None:
    corpus = console.corpus()
    ana, ben = console.key("write", [corpus]), console.key("write", [corpus])
    for doc, label in (("c1", 0), ("c2", 0), ("c3", 1)):  # Ben judges through the API
        body = {"query": QUERY, "document_id": doc, "label": label}
        judged = console.http.put(
            f"/v1/corpora/{corpus}/pairs/judgement", json=body, headers=console.headers(ben)
        )
        assert judged.status_code == 200, judged.text
    sign_in(watched, ana)
    choose(watched, corpus)
    page = watched.page
    search(watched, QUERY)
    for doc, label in (("c1", "judge-relevant"), ("c2", "judge-not-relevant"), ("c3", "judge-relevant")):
        page.locator(f"[data-testid=result][data-id='{doc}']").get_by_test_id(label).click()
    (c1,) = [p for p in wait_pairs(console, corpus, 3) if p["document_id"] == "c1"]
    assert c1["label"] == 0 and c1["disagreement"] is True  # a tie: the lower grade, flagged
    page.get_by_test_id("view-judgements").click()
    rows = page.get_by_test_id("judgement-row")
    expect(rows).to_have_count(6)  # both judges' judgements are kept
    expect(page.get_by_test_id("disagreements")).to_have_text("1 disagreements")
    expect(page.get_by_test_id("kappa-row")).to_have_count(1)
    expect(page.get_by_test_id("kappa-row")).to_contain_text("3")  # three pairs both graded
    expect(page.get_by_test_id("judged-query")).to_have_count(1)
    ana_id, ben_id = ana.split("_")[1], ben.split("_")[1]
    assert (
        page.locator(
            f"[data-testid=judgement-row][data-judge='{ben_id}'] [data-testid=edit-judgement]"
        ).count()
        == 0
    )
    mine = page.locator(f"[data-testid=judgement-row][data-judge='{ana_id}']").first  # (c1: relevant)
    mine.get_by_test_id("edit-judgement").click()
    mine.get_by_test_id("edit-grade").select_option("0")
    mine.get_by_test_id("edit-note").fill("on reflection, another claim")
    mine.get_by_test_id("save-judgement").click()
    expect(page.get_by_test_id("disagreements")).to_have_text("0 disagreements")
    expect(page.locator("[data-testid=judgement-row]", has_text="on reflection")).to_have_count(1)
    page.locator(f"[data-testid=judgement-row][data-judge='{ana_id}']").last.get_by_test_id(
        "delete-judgement"
    ).click()
    expect(rows).to_have_count(5)
    page.get_by_test_id("judgements-disagreement").check()
    page.get_by_test_id("judgements-load").click()
    expect(rows).to_have_count(0)


def test_import_a_corpus_from_a_file_and_judged_pairs(
    console: Console, watched: Watched, tmp_path: Path
) -> None:
    watched.expected.append("status of 422")  # the broken file below, refused on purpose
    texts = ["Bananas cure insomnia.", "Drinking hot water kills the virus."]
    records = [
        {"id": f"f{i}", "text": text, "metadata": {"url": f"https://example.org/check/{i}"}}
        for i, text in enumerate(texts)
    ]
    upload = tmp_path / f"fact-checks-{int(time.time() * 1000)}.jsonl"
    upload.write_text("".join(json.dumps(r) + "\n" for r in records))
    sign_in(watched, console.key("write"))
    page = watched.page
    page.get_by_test_id("view-data").click()
    page.get_by_test_id("import-file").set_input_files(str(upload))
    expect(page.get_by_test_id("import-name")).to_have_value(upload.stem)
    page.get_by_test_id("import-start").click()
    expect(page.get_by_test_id("import-progress")).to_contain_text("succeeded", timeout=60_000)
    expect(page.get_by_test_id("corpus")).to_have_value(upload.stem)
    corpus = console.http.get(f"/v1/corpora/{upload.stem}", headers=console.headers()).json()
    assert corpus["kind"] == "claim" and corpus["document_count"] == 2

    judged = tmp_path / "judged.csv"
    judged.write_text("query,document_id,label\nhot water virus,f1,1\nbananas,f0,yes\n")
    page.get_by_test_id("judgements-file").set_input_files(str(judged))
    expect(page.get_by_test_id("error")).to_contain_text("line 3: label")
    judged.write_text("query,document_id,label\nhot water virus,f1,1\nbananas,f0,1\n")
    page.get_by_test_id("judgements-file").set_input_files(str(judged))
    expect(page.get_by_test_id("judgements-imported")).to_contain_text("2 judgements stored")

    page.get_by_test_id("view-search").click()
    search(watched, "does hot water kill the virus")
    link = page.locator("[data-testid=result][data-id='f1'] [data-testid=metadata-link]")
    expect(link).to_have_attribute("href", "https://example.org/check/1")


def test_url_state_reopens_the_view(console: Console, watched: Watched) -> None:
    corpus = console.corpus()
    sign_in(watched, console.key("read", [corpus]))
    choose(watched, corpus)
    page = watched.page
    ids = search(watched, QUERY)
    assert re.search(rf"corpus={corpus}.*q=was\+the\+moon", page.url)
    page.reload()  # the key is kept in the tab's session: signed in again, the search reopens
    assert results(watched) == ids
    expect(page.get_by_test_id("query")).to_have_value(QUERY)
    page.get_by_test_id("view-judgements").click()
    assert "view=judgements" in page.url
    page.reload()
    expect(page.get_by_test_id("judgements-view")).to_be_visible()
    # The metadata filter: only documents whose field has that value.
    page.get_by_test_id("view-search").click()
    page.get_by_test_id("filter").fill("lang=en")
    page.get_by_test_id("depth").select_option("20")
    assert len(search(watched, QUERY)) == 5
    page.get_by_test_id("filter").fill("lang=fr")
    page.get_by_test_id("query").press("Enter")
    expect(page.get_by_test_id("result")).to_have_count(0)


def test_a_query_set_with_its_history(console: Console, watched: Watched) -> None:
    corpus = console.corpus([{"query": QUERY, "document_id": "c1", "label": 1},
                             {"query": "bleach cures covid", "document_id": "c2", "label": 1}])  # fmt: skip
    sign_in(watched, console.key("write", [corpus]))
    choose(watched, corpus)
    page = watched.page
    page.get_by_test_id("view-querysets").click()
    page.get_by_test_id("queryset-name").fill("regressions")
    page.get_by_test_id("queryset-queries").fill(f"{QUERY}\nbleach cures covid\nnot judged yet")
    page.get_by_test_id("queryset-create").click()
    page.get_by_test_id("queryset-run-now").click()
    runs = page.get_by_test_id("queryset-run")
    expect(runs.first).to_contain_text("succeeded", timeout=60_000)
    expect(page.get_by_test_id("queryset-chart")).to_be_visible()
    ranking = {"mode": "lexical"}  # a ranking change scores the corpus's sets again
    changed = console.http.put(f"/v1/corpora/{corpus}/ranking", json=ranking, headers=console.headers())
    assert changed.status_code == 200, changed.text
    page.get_by_test_id("query-set").first.click()
    expect(runs).to_have_count(2)
    expect(page.locator("[data-testid=queryset-run][data-trigger='ranking change']")).to_contain_text(
        "succeeded", timeout=60_000
    )


def test_an_evaluation_from_uploaded_qrels(console: Console, watched: Watched, tmp_path: Path) -> None:
    corpus = console.corpus([{"query": QUERY, "document_id": "c1", "label": 1},
                             {"query": "bleach cures covid", "document_id": "c2", "label": 1}])  # fmt: skip
    for kind, file in (("trec", "qrels.txt"), ("jsonl", "queries.jsonl")):  # the Judgements tab's exports
        exported = console.http.get(f"/v1/corpora/{corpus}/judgements/export", params={"format": kind},
                                    headers=console.headers())  # fmt: skip
        (tmp_path / file).write_text(exported.text)
    sign_in(watched, console.key("write"))
    choose(watched, corpus)
    page = watched.page
    page.get_by_test_id("view-evaluations").click()
    page.get_by_test_id("evaluation-qrels").set_input_files(str(tmp_path / "qrels.txt"))
    page.get_by_test_id("evaluation-queries").set_input_files(str(tmp_path / "queries.jsonl"))
    page.get_by_test_id("evaluation-start").click()
    report = page.get_by_test_id("evaluation-report")
    expect(report).to_contain_text("succeeded", timeout=60_000)
    expect(report.locator("tbody tr")).to_have_count(3)  # the mean and the two queries


def test_compare_hybrid_starts_at_the_corpus_alpha_and_words_for_jobs(
    console: Console, watched: Watched
) -> None:
    corpus = console.corpus()  # a claim corpus: hybrid at alpha 0.2 by default
    alpha = console.http.get(f"/v1/corpora/{corpus}", headers=console.headers()).json()["ranking"]["alpha"]
    sign_in(watched, console.key("read", [corpus]))
    choose(watched, corpus)
    page = watched.page
    page.get_by_test_id("view-compare").click()
    page.get_by_test_id("compare-mode-right").select_option("hybrid")
    expect(page.get_by_test_id("compare-alpha-right")).to_have_value(str(alpha))
    # The gate's verdict and a job's progress in words (the module the Retrain view uses).
    said = page.evaluate(
        """async () => {
          const words = await import('/console/static/js/verdict.js');
          const gate = (improved, delta, active, candidate) =>
            ({metric: 'MRR', improved, delta, active: {MRR: active}, candidate: {MRR: candidate}});
          const perfect = gate(false, 0, 1, 1);
          const worse = gate(false, -0.05, 0.8, 0.75);
          const passed = {...gate(true, 0.1, 0.5, 0.6), activation: 'queued'};
          const started = new Date(Date.now() - 60000).toISOString();
          const job = {status: 'running', started_at: started, progress: {step: 25, total_steps: 100}};
          const served = {...worse, ranking: 'hybrid a=0.2'};
          return [words.gateVerdict(perfect).text, words.gateVerdict(worse).text,
                  words.gateVerdict(passed).text, words.progressText(job), words.gateVerdict(served).text];
        }"""
    )
    assert "judge harder queries" in said[0] and said[0].startswith("Not passed")
    assert "ranks worse" in said[1] and "Next:" in said[1]
    assert said[2].startswith("Passed") and "being activated" in said[2]
    assert re.fullmatch(r"25% · about 3 min 0 s left", said[3]), said[3]
    assert said[4].endswith("(Both were scored as the corpus serves them: hybrid a=0.2.)")
