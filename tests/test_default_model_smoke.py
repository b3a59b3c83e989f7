"""Smoke test on the real default model (bundled all-MiniLM-L6-v2): a paraphrase finds its demo claim."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from app.config import Settings
from app.db.migrate import upgrade_to_head
from app.main import create_app
from app.serving.demo import DEMO_CORPUS
from app.serving.runtime import Runtime
from pairank.models import DEFAULT_MODEL_SHA256, resolve_model


def test_default_model_weights_are_checked() -> None:
    spec = resolve_model("default")
    assert spec.weights_sha256 == DEFAULT_MODEL_SHA256
    assert spec.version == "sentence-transformers/all-MiniLM-L6-v2@53aa51172d14"


def test_paraphrase_of_demo_claim_ranks_it_first(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, model="default", seed_demo=True, auth="disabled")
    upgrade_to_head(settings.resolved_database_url)
    runtime = Runtime(settings)
    with TestClient(create_app(settings, runtime)) as client:
        assert runtime.serving.wait_ready(300), runtime.serving.load_error
        # The default serves the quality-gated OpenVINO int8 export of the real model where it passes the
        # gate. int8 numerics depend on the CPU: on AVX2-only CPUs (no VNNI) it can miss the gate's min
        # cosine, and the service must then fall back, naming the gate for every variant it skipped.
        ready = client.get("/ready").json()
        encoder = ready["encoder"]
        if (ready["backend"], ready["precision"]) != ("openvino", "int8"):
            assert encoder["fallbacks"], encoder
            assert all("quality gate" in fallback["error"] for fallback in encoder["fallbacks"]), encoder
        if encoder["quality"] is not None:  # a converted variant: it passed the gate
            assert encoder["quality"]["mean_cosine"] >= 0.99 and encoder["quality"]["min_cosine"] >= 0.97
        corpus = client.get(f"/v1/corpora/{DEMO_CORPUS}").json()
        assert corpus["document_count"] >= 45
        query = {"query": "Is it true that 5G masts are spreading covid?", "k": 3}
        body = client.post(f"/v1/corpora/{DEMO_CORPUS}/rank", json=query).json()
        assert body["results"][0]["text"] == "5G cell towers spread the coronavirus."
        assert body["model"].startswith("sentence-transformers/all-MiniLM-L6-v2@")
        query = {"query": "If you swallow chewing gum it remains in the stomach for years", "k": 1}
        body = client.post(f"/v1/corpora/{DEMO_CORPUS}/rank", json=query).json()
        assert body["results"][0]["id"] == "claim-018"
    runtime.close()
