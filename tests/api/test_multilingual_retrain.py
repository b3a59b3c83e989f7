"""The retraining loop on a multilingual model (a tiny one built in the tests): a `multi` corpus, judged
pairs in four languages, training, the gate, the quantized export, activation, and ranking after it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.api.conftest import ClientFactory
from tests.api.test_admin import KEY, finished, wait_job
from tests.helpers.tiny_model import MULTILINGUAL_CORPUS

PAIRS = [
    ("¿Las vacunas causan infertilidad?", "m0"), ("¿Ocultó el gobierno las muertes?", "m1"),
    ("As antenas espalham o vírus?", "m2"), ("Água quente cura a gripe?", "m3"),
    ("Verheimlicht die Regierung Todesfälle?", "m4"), ("Heilt heißes Wasser die Grippe?", "m5"),
    ("هل تسبب اللقاحات العقم", "m6"), ("الأخبار الكاذبة", "m7"),
]  # fmt: skip


# Both databases; the pgvector store's re-encoding on activation is test_admin.py's retrain-activate test.
@pytest.mark.parametrize("database_url", ["sqlite", "postgresql"], indirect=True)
def test_retraining_a_multilingual_model(make_client: ClientFactory, multilingual_model_dir: Path) -> None:
    # The default encoder settings: the trained model is exported to int8 and gated.
    client = make_client(admin_api_key="s3cret", model=str(multilingual_model_dir), encoder_backend="auto")
    created = client.post("/v1/corpora", json={"name": "claims", "kind": "claim", "language": "multi"})
    assert created.status_code == 201
    documents = [{"id": f"m{i}", "text": text} for i, text in enumerate(MULTILINGUAL_CORPUS)]
    assert client.post("/v1/corpora/claims/documents", json={"documents": documents}).status_code == 200
    pairs = [{"query": q, "document_id": d, "label": 1} for q, d in PAIRS]
    assert client.post("/v1/corpora/claims/pairs", json={"pairs": pairs}).status_code == 201
    old_version = client.post("/v1/corpora/claims/rank", json={"query": "vacunas"}).json()["model"]
    body = {"corpus": "claims", "epochs": 2, "batch_size": 4, "learning_rate": 1e-3, "min_improvement": -1,
            "require_significant": False}  # fmt: skip
    started = client.post("/admin/retrain", json=body, headers=KEY)
    assert started.status_code == 202, started.text
    job = wait_job(client, started.json()["job_id"], finished, timeout=300)
    assert job["status"] == "succeeded", (job["error"], job["log_tail"])
    activation = next(
        j for j in client.get("/admin/jobs", headers=KEY).json()["jobs"] if j["kind"] == "activate"
    )
    assert wait_job(client, activation["id"], finished, timeout=300)["status"] == "succeeded"
    models = {m["version"]: m for m in client.get("/admin/models", headers=KEY).json()["models"]}
    new = models[job["model_version"]]
    assert new["is_active"] and job["model_version"] != old_version
    # The trained model was quantized and passed the gate on the probe sentences (15 scripts).
    assert new["encoder"]["precision"] == "int8" and new["encoder"]["quality"]["mean_cosine"] >= 0.99
    for position, text in enumerate(MULTILINGUAL_CORPUS):
        answer = client.post("/v1/corpora/claims/rank", json={"query": text, "k": 1, "mode": "dense"}).json()
        assert answer["model"] == job["model_version"] and answer["results"][0]["id"] == f"m{position}"
    arabic = client.post(
        "/v1/corpora/claims/rank", json={"query": MULTILINGUAL_CORPUS[6], "same_language": True}
    )
    assert arabic.json()["language"]["code"] == "ar"
    assert {r["id"] for r in arabic.json()["results"]} == {"m6", "m7"}
