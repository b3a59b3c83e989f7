"""The loop's end in a real browser: retrain on the judged pairs (tiny model), follow the job live to its
end, read the gate's report, activate the candidate, roll back."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.api.test_admin import PARAPHRASES
from tests.console.conftest import Console, Watched, choose, sign_in

FINAL = re.compile(r"^(succeeded|failed|cancelled)$")


def test_retrain_follow_the_job_activate_and_roll_back(console: Console, watched: Watched) -> None:
    """Retrain asks first (the settings in words), the gate's verdict is plain words with a next step; a
    candidate that failed its gate (a minimum gain no model reaches) is activated only after a warning
    that it re-ranks every corpus; the rollback then targets the model that served before, and never
    the failed candidate."""
    corpus = console.corpus([{"query": q, "document_id": d, "label": 1} for q, d in PARAPHRASES])
    saved = {"name": "paraphrases", "queries": [q for q, _ in PARAPHRASES]}  # scored again on activation
    assert (
        console.http.post(
            f"/v1/corpora/{corpus}/query-sets", json=saved, headers=console.headers()
        ).status_code
        == 201
    )
    sign_in(watched, console.admin_key)
    choose(watched, corpus)
    page = watched.page
    serving = console.http.get("/ready").json()["model"]
    page.get_by_test_id("view-models").click()
    page.get_by_test_id("epochs").fill("2")
    page.get_by_test_id("min-improvement").fill("1")
    page.get_by_test_id("retrain").click()
    confirm = page.get_by_test_id("retrain-confirm")
    expect(confirm).to_contain_text("2 epochs")
    expect(confirm).to_contain_text("Nothing is activated")  # the console's default: look at the gate first
    assert page.get_by_test_id("job-status").inner_text() == "none"  # nothing started yet
    page.get_by_test_id("retrain-start").click()
    status = page.get_by_test_id("job-status")
    expect(status).to_have_text(re.compile("queued|running"))  # live, without a reload
    expect(status).to_have_text(FINAL, timeout=180_000)
    assert status.inner_text() == "succeeded", page.locator(".job-detail").inner_text()
    gate = page.get_by_test_id("gate")
    expect(gate).to_contain_text("candidate MRR")
    expect(gate).to_contain_text("noise band")
    expect(page.locator(".job-detail canvas")).to_be_visible()  # the loss curve
    job = console.http.get("/admin/jobs?limit=1", headers=console.headers()).json()["jobs"][0]
    assert job["kind"] == "retrain" and job["progress"]["curve"]["epochs"]
    trained = job["model_version"]
    row = page.locator(f"[data-testid=model][data-version='{trained}']")
    expect(row).to_be_visible()

    assert job["gate"]["improved"] is False and job["gate"]["activation"] == "not requested"
    verdict = page.get_by_test_id("gate-verdict")
    expect(verdict).to_contain_text("Not passed")
    expect(verdict).to_contain_text("Next:")

    row.get_by_test_id("activate").click()
    warning = page.get_by_test_id("activate-warning")
    expect(warning).to_contain_text("failed its gate")
    expect(warning).to_contain_text("every corpus")
    page.get_by_test_id("activate-cancel").click()
    expect(warning).to_be_hidden()
    assert console.http.get("/ready").json()["model"] == serving  # cancelled: nothing changed
    row.get_by_test_id("activate").click()
    page.get_by_test_id("activate-confirm").click()
    expect(row.get_by_test_id("activate")).to_be_hidden(timeout=120_000)
    expect(status).to_have_text("succeeded")
    assert console.http.get("/ready").json()["model"] == trained
    page.get_by_test_id("view-querysets").click()  # the activation scored the saved set with the new model
    page.get_by_test_id("query-set").first.click()
    activation_run = page.locator("[data-testid=queryset-run][data-trigger='activation']")
    # The activation's follow-ups run one by one on the worker (other tests' query sets and calibrated
    # corpora share this server): generous on a loaded machine.
    expect(activation_run).to_contain_text("succeeded", timeout=180_000)
    expect(activation_run).to_contain_text(trained)
    expect(page.get_by_test_id("queryset-chart")).to_be_visible()
    page.get_by_test_id("view-models").click()

    expect(page.get_by_test_id("rollback")).to_have_text(f"Roll back to {serving}")
    page.get_by_test_id("rollback").click()
    expect(status).to_have_text(FINAL, timeout=120_000)
    serving_row = page.locator(f"[data-testid=model][data-version='{serving}']")
    expect(serving_row.get_by_test_id("activate")).to_be_hidden(timeout=30_000)
    assert console.http.get("/ready").json()["model"] == serving
    expect(page.get_by_test_id("rollback")).to_be_hidden()  # not "Roll back to" the failed candidate


STACK_GATE = {
    "protocol": "dev", "metric": "MAP", "improved": True, "delta": 0.4, "activation": "queued",
    "candidate": {"MAP": 0.9}, "active": {"MAP": 0.5}, "noise": {"noise_band": 0.1},
    "chosen": "new bi-encoder + new re-ranker", "candidate_ranking": "lexical", "active_ranking": "lexical",
    "arms": {
        "active": {"ranking": "lexical", "rerank": None, "means": {"MAP": 0.5}},
        "new bi-encoder": {"ranking": "lexical", "rerank": None, "means": {"MAP": 0.5}},
        "new bi-encoder + new re-ranker": {
            "ranking": "lexical", "rerank": {"model": "rr", "k": 20, "weight": 0.5}, "means": {"MAP": 0.9},
        },
    },
}  # fmt: skip


def test_the_retrain_form_offers_the_reranker_and_the_gate_shows_what_it_compared(
    console: Console, watched: Watched
) -> None:
    """The confirm step says a re-ranker is trained too and sends `reranker`; a two-model gate's report
    lists every pipeline it compared, best first, the chosen one marked, and the verdict says the two
    are activated and rolled back together."""
    corpus = console.corpus([{"query": q, "document_id": d, "label": 1} for q, d in PARAPHRASES])
    sign_in(watched, console.admin_key)
    choose(watched, corpus)
    page = watched.page
    page.get_by_test_id("view-models").click()
    page.get_by_test_id("retrain-reranker").select_option("on")
    page.get_by_test_id("retrain").click()
    confirm = page.get_by_test_id("retrain-confirm")
    expect(confirm).to_contain_text("a cross-encoder re-ranker is trained on the same pairs too")
    expect(confirm).to_contain_text('"reranker":{}')
    page.get_by_test_id("retrain-cancel").click()
    # The report of a finished two-model job, shown as the Models view shows any followed job.
    shown = "gate => { Alpine.store('models').job = {id: 'j', kind: 'retrain', status: 'succeeded', gate}; }"
    page.evaluate(shown, STACK_GATE)
    arms = page.get_by_test_id("gate-arm")
    expect(arms).to_have_count(3)
    expect(arms.first).to_contain_text("new bi-encoder + new re-ranker")
    expect(arms.first).to_contain_text("lexical + re-ranker top 20, weight 0.5")
    expect(arms.first.get_by_text("chosen")).to_be_visible()
    expect(page.locator("[data-testid=gate-arm][data-arm=active]").get_by_text("chosen")).to_be_hidden()
    expect(page.get_by_test_id("gate-verdict")).to_contain_text("activated, and rolled back, together")
