"""The retraining gate end to end (tiny model): cross-validated when asked (fold models, final model on
every pair), and a dev-set gate whose calibrated ranking mode the corpus adopts on activation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.db.repositories.corpora import CorpusRepository
from tests.api.test_admin import KEY, admin, finished, wait_job

__all__ = ["admin"]  # the fixture, imported for pytest

FAST = {"corpus": "claims", "epochs": 1, "batch_size": 4, "learning_rate": 1e-3}


def test_a_cross_validated_gate_trains_fold_models_then_one_on_every_pair(admin: TestClient) -> None:
    body = {**FAST, "cross_validation": "always", "folds": 2, "auto_activate": False}
    created = admin.post("/admin/retrain", json=body, headers=KEY)
    assert created.status_code == 202, created.text
    job = wait_job(admin, created.json()["job_id"], finished, timeout=300)
    assert job["status"] == "succeeded", (job["error"], job["log_tail"])
    gate = job["gate"]
    assert gate["protocol"] == "cross-validation" and gate["folds"] == 2 and gate["metric"] == "MRR"
    assert gate["scheme"] == "forward"  # each block validated by a model trained on earlier queries
    assert gate["ranking"] == "hybrid a=0.2"  # every fold scored as the claim corpus serves (its default)
    assert len(gate["per_fold_delta"]) == 2 and gate["epochs"] == 1
    assert gate["delta"] == sum(gate["per_fold_delta"]) / 2
    assert gate["noise"]["noise_band"] == 2 * gate["noise"]["standard_error"]
    assert gate["activation"] == "not requested"
    # Every stored pair (8 paraphrases about 5 claims) took part; the candidate is the final model.
    assert gate["queries"] == 8 and gate["groups"] == 5
    models = {m["version"]: m for m in admin.get("/admin/models", headers=KEY).json()["models"]}
    candidate = models[job["model_version"]]
    assert candidate["path"].endswith(str(Path("final") / "model")) and not candidate["is_active"]
    run_dir = Path(candidate["path"]).parent.parent
    assert (run_dir / "cv.json").is_file() and len(list((run_dir / "folds").iterdir())) == 2


def test_the_dev_gate_scores_each_model_at_its_mode_and_activation_adopts_the_choice(
    admin: TestClient,
) -> None:
    body = {**FAST, "epochs": 2, "min_improvement": -1, "require_significant": False}
    body["cross_validation"] = "auto"  # 5 query groups: too few for 5 folds, so the dev gate
    job = wait_job(admin, admin.post("/admin/retrain", json=body, headers=KEY).json()["job_id"], finished)
    assert job["status"] == "succeeded", (job["error"], job["log_tail"])
    gate = job["gate"]
    # Two dev queries: too few to choose a ranking mode on, so both models are gated (and served) at the
    # claim corpus's default ranking.
    assert gate["protocol"] == "dev" and gate["active_ranking_source"] == "default"
    assert gate["candidate_ranking"] == gate["active_ranking"] == "hybrid a=0.2"
    settings = gate["settings"]["candidate"]
    assert {"dense", "lexical", "hybrid a=0.2", "hybrid rrf"} <= set(settings)
    assert gate["candidate"]["MRR"] == settings[gate["candidate_ranking"]]
    assert gate["active"]["MRR"] == gate["settings"]["active"][gate["active_ranking"]]
    calibration = gate["calibration"]
    assert calibration["model"] == job["model_version"] and calibration["corpus"] == "claims"
    activation = next(
        j for j in admin.get("/admin/jobs", headers=KEY).json()["jobs"] if j["kind"] == "activate"
    )
    activated = wait_job(admin, activation["id"], finished)
    assert activated["status"] == "succeeded", (activated["error"], activated.get("log_tail"))
    runtime = admin.app.state.runtime  # type: ignore[attr-defined]
    with runtime.sessions() as session:
        corpus = CorpusRepository(session).get("claims")
        assert corpus is not None
        adopted = corpus.ranking_calibration
    assert adopted is not None and adopted["model"] == job["model_version"]
    assert (adopted["mode"], adopted["source"]) == (calibration["mode"], "retraining gate")
    # The corpus now ranks in the gate's mode by default: hybrid and lexical results carry both scores.
    results = admin.post("/v1/corpora/claims/rank", json={"query": "moon landing studio", "k": 2}).json()
    assert ("lexical_score" in results["results"][0]) == (adopted["mode"] != "dense")
    assert results["ranking"]["mode"] == adopted["mode"]


def test_retraining_with_hard_negatives_mined_from_the_corpus(admin: TestClient) -> None:
    hard = {"count": 1, "window": 3, "remine": "once"}
    body = {**FAST, "cross_validation": "never", "auto_activate": False, "hard_negatives": hard}
    job = wait_job(admin, admin.post("/admin/retrain", json=body, headers=KEY).json()["job_id"], finished)
    assert job["status"] == "succeeded", (job["error"], job["log_tail"])
    models = {m["version"]: m for m in admin.get("/admin/models", headers=KEY).json()["models"]}
    stage = models[job["model_version"]]["training"]["config"]["stages"][0]
    assert stage["hard_negatives"]["count"] == 1 and stage["hard_negatives"]["remine"] == "once"
    pool = Path(stage["hard_negatives"]["corpus"])
    assert pool.name == "corpus.jsonl" and len(pool.read_text().splitlines()) == 5  # every claim
    run_dir = Path(models[job["model_version"]]["path"]).parent
    history = json.loads((run_dir / "metrics.json").read_text())["history"]
    assert [r["mining_seconds"] > 0 for r in history if r["epoch_index"] > 0] == [True]


# Which settings a job resolves is the database's business nowhere: one database keeps the suite short.
@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
@pytest.mark.parametrize(("extra", "mined"), [({}, True), ({"hard_negatives": None}, False)])
def test_claim_corpora_mine_hard_negatives_by_default(admin: TestClient, extra: dict, mined: bool) -> None:
    body = {**FAST, "cross_validation": "never", "auto_activate": False, **extra}
    job = wait_job(admin, admin.post("/admin/retrain", json=body, headers=KEY).json()["job_id"], finished)
    assert job["status"] == "succeeded", (job["error"], job["log_tail"])
    models = {m["version"]: m for m in admin.get("/admin/models", headers=KEY).json()["models"]}
    stage = models[job["model_version"]]["training"]["config"]["stages"][0]
    if mined:  # the cross-validated best on claims (benchmarks/hybrid.md): one negative, mined once
        assert {k: stage["hard_negatives"][k] for k in ("count", "window", "remine")} == {
            "count": 1,
            "window": 20,
            "remine": "once",
        }
    else:
        assert "hard_negatives" not in stage


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"folds": 1}, "folds"),
        ({"cross_validation": "sometimes"}, "cross_validation"),
        ({"hard_negatives": {"count": 4, "window": 2}}, "window"),
        ({"hard_negatives": {"remine": "always"}}, "remine"),
        ({"hard_negatives": {"count": 0}}, "count"),
        ({"hard_negatives": {}, "loss": "mse"}, "hard_negatives"),
    ],
)
def test_gate_and_mining_options_are_validated(admin: TestClient, extra: dict, field: str) -> None:
    response = admin.post("/admin/retrain", json={"corpus": "claims", **extra}, headers=KEY)
    assert response.status_code == 422 and field in response.text, response.text
