"""The trainer end to end on CPU with a tiny model: run folder, checkpoint selection, stages, seeds."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path
from typing import Any

import pytest
import torch
from trainer_helpers import build_setup, tiny_raw_config

from pairank.models import folder_weights_sha256, resolve_model
from training.config import config_from_dict
from training.evaluators import DevEvaluator
from training.runs.folder import EventWriter
from training.trainer import train


@pytest.fixture(autouse=True)
def one_torch_thread() -> Any:
    # Torch's worker threads spin; on a shared 2-core host one thread is several times faster.
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="session")
def tiny_setup(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return build_setup(tmp_path_factory.mktemp("trainer"))


def tiny_config(setup: dict[str, Path], **overrides: Any) -> Any:
    return config_from_dict({**tiny_raw_config(setup, epochs=3), "log_every": 2, **overrides})


def run(setup: dict[str, Path], out: Path, **overrides: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    stream = io.StringIO()
    manifest = train(tiny_config(setup, **overrides), output=out, events=EventWriter(stream=stream))
    return manifest, [json.loads(line) for line in stream.getvalue().splitlines()]


class ScriptedScores:
    """Replaces DevEvaluator.__call__: returns scripted MRRs and snapshots the weights at each call."""

    def __init__(self, scores: list[float]) -> None:
        self.scores = list(scores)
        self.snapshots: list[dict[str, torch.Tensor]] = []

    def __call__(self, evaluator: DevEvaluator, model: Any, *args: Any, **kwargs: Any) -> dict[str, float]:
        self.snapshots.append({k: v.detach().clone() for k, v in model.state_dict().items()})
        return {"MRR": self.scores[len(self.snapshots) - 1]}


def patch_evaluator(monkeypatch: pytest.MonkeyPatch, scripted: ScriptedScores) -> None:
    monkeypatch.setattr(DevEvaluator, "__call__", lambda ev, model, *a, **k: scripted(ev, model))


def test_end_to_end_run_folder(tiny_setup: dict[str, Path], tmp_path: Path) -> None:
    manifest, events = run(
        tiny_setup,
        tmp_path / "run",
        stages=[
            {
                "loss": "bsc",
                "epochs": 4,
                "lr": 3e-3,
                "batch_size": 8,
                "shuffle": "example",
                "shuffle_params": {"group_size": 4, "n_neighbors": 16},
                "loss_params": {"temperature": 0.1},
            }
        ],
    )
    out = tmp_path / "run"
    for name in ("config.yaml", "metrics.json", "manifest.json", "training_curves.png", "events.jsonl"):
        assert (out / name).is_file(), name
    assert (out / "training_curves.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    metrics = json.loads((out / "metrics.json").read_text())
    trained = [h for h in metrics["history"] if h["stage"] >= 0]
    assert [h["epoch"] for h in trained] == [1, 2, 3, 4]
    assert trained[-1]["train_loss"] < trained[0]["train_loss"]  # the loss goes down
    assert metrics["base_model_dev"]["MRR"] > 0
    on_disk = json.loads((out / "manifest.json").read_text())
    assert on_disk == json.loads(json.dumps(manifest))
    for key in (
        "model_id",
        "base_model",
        "base_model_version",
        "data",
        "loss",
        "settings",
        "dev_metrics",
        "best_epoch",
        "weights_sha256",
        "created_at",
    ):
        assert key in on_disk, key
    assert on_disk["weights_sha256"] == folder_weights_sha256(out / "model")
    assert on_disk["model_id"].startswith("pairank-tiny-") and on_disk["loss"]["name"] == "bsc"
    assert resolve_model(str(out)).model_id == on_disk["model_id"]  # the service resolves the run folder
    from sentence_transformers import SentenceTransformer

    loaded = SentenceTransformer(str(out / "model"), device="cpu")
    assert loaded.max_seq_length == 24 and loaded.encode(["a shark sold carrots."]).shape == (1, 32)
    kinds = [e["event"] for e in events]
    assert kinds[0] == "start" and kinds[-1] == "done" and kinds.count("epoch_end") == 5
    assert "step" in kinds and events[-1]["weights_sha256"] == on_disk["weights_sha256"]
    assert all(0 <= e["progress"] <= 1 for e in events if "progress" in e)
    assert [json.loads(x) for x in (out / "events.jsonl").read_text().splitlines()] == events


def test_best_checkpoint_is_the_one_saved(
    tiny_setup: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scripted = ScriptedScores([0.2, 0.5, 0.9, 0.4])  # base, epochs 1-3: epoch 2 is best
    patch_evaluator(monkeypatch, scripted)
    manifest, events = run(tiny_setup, tmp_path / "run")
    assert manifest["best_epoch"] == 2 and manifest["dev_metrics"] == {"MRR": 0.9}
    assert [e["is_best"] for e in events if e["event"] == "epoch_end"] == [False, True, True, False]
    from sentence_transformers import SentenceTransformer

    saved = SentenceTransformer(str(tmp_path / "run" / "model"), device="cpu").state_dict()
    for key, value in scripted.snapshots[2].items():
        assert torch.allclose(saved[key], value), key
    assert not all(torch.allclose(saved[k], v) for k, v in scripted.snapshots[3].items())


def test_keep_last_saves_the_last_epoch_whatever_the_dev_scores(
    tiny_setup: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scripted = ScriptedScores([0.2, 0.5, 0.9, 0.4])  # epoch 2 scores best, but a fold must not choose
    patch_evaluator(monkeypatch, scripted)
    manifest, _ = run(tiny_setup, tmp_path / "run", keep="last")
    assert manifest["best_epoch"] == 3
    from sentence_transformers import SentenceTransformer

    saved = SentenceTransformer(str(tmp_path / "run" / "model"), device="cpu").state_dict()
    for key, value in scripted.snapshots[3].items():
        assert torch.allclose(saved[key], value), key
    history = json.loads((tmp_path / "run" / "metrics.json").read_text())["history"]
    assert [r["dev_metric"] for r in history] == [0.2, 0.5, 0.9, 0.4]  # still scored every epoch


def test_eval_epochs_last_scores_only_the_stage_end_and_never_keeps_an_unscored_epoch(
    tiny_setup: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scripted = ScriptedScores([0.2, 0.4])  # the base model, then epoch 3 only
    patch_evaluator(monkeypatch, scripted)
    manifest, events = run(tiny_setup, tmp_path / "run", eval_epochs="last")
    history = json.loads((tmp_path / "run" / "metrics.json").read_text())["history"]
    assert [r["dev_metric"] for r in history] == [0.2, None, None, 0.4]
    assert [r["eval_seconds"] for r in history[1:3]] == [0.0, 0.0]
    assert manifest["best_epoch"] == 3 and manifest["dev_metrics"] == {"MRR": 0.4}
    assert [e["is_best"] for e in events if e["event"] == "epoch_end"] == [False, False, False, True]


def test_sequential_stages_restart_from_the_best_epoch(
    tiny_setup: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scripted = ScriptedScores([0.1, 0.8, 0.3, 0.2])  # base, bsc 1, bsc 2, mse 1
    patch_evaluator(monkeypatch, scripted)
    stages = [
        {"name": "bsc", "loss": "bsc", "epochs": 2, "lr": 3e-3, "batch_size": 8, "shuffle": "random"},
        # A vanishing learning rate: the MSE stage's weights stay where it started.
        {"name": "mse", "loss": "mse", "epochs": 1, "lr": 1e-12, "batch_size": 8, "shuffle": "random"},
    ]
    manifest, _ = run(tiny_setup, tmp_path / "run", stages=stages)
    history = json.loads((tmp_path / "run" / "metrics.json").read_text())["history"]
    assert [(h["stage_name"], h["epoch"], h["epoch_index"]) for h in history] == [
        ("base", 0, 0),
        ("bsc", 1, 1),
        ("bsc", 2, 2),
        ("mse", 1, 3),
    ]
    assert manifest["loss"]["name"] == "bsc+mse" and manifest["best"]["stage_name"] == "bsc"
    after_mse, best_bsc, last_bsc = scripted.snapshots[3], scripted.snapshots[1], scripted.snapshots[2]
    assert all(torch.allclose(after_mse[k], best_bsc[k], atol=1e-6) for k in best_bsc)
    assert not all(torch.allclose(after_mse[k], last_bsc[k], atol=1e-6) for k in last_bsc)


def test_seed_search_keeps_the_best_run(
    tiny_setup: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scripted = ScriptedScores([0.1, 0.3, 0.7])  # base (scored once), seed run 0, seed run 1
    patch_evaluator(monkeypatch, scripted)
    stages = [{"loss": "bsc", "epochs": 1, "lr": 3e-3, "batch_size": 8, "shuffle": "random"}]
    manifest, events = run(tiny_setup, tmp_path / "run", seeds=2, stages=stages)
    assert manifest["best"]["seed_run"] == 1 and manifest["best"]["seed"] == 43
    assert [e["seed_run"] for e in events if e["event"] == "epoch_end"] == [0, 0, 1, 1]


def test_epochs_are_numbered_from_one_without_a_base_score(
    tiny_setup: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scripted = ScriptedScores([0.3, 0.6])  # epochs 1-2 only: the base model is not scored
    patch_evaluator(monkeypatch, scripted)
    stages = [{"loss": "bsc", "epochs": 2, "lr": 3e-3, "batch_size": 8, "shuffle": "random"}]
    manifest, events = run(tiny_setup, tmp_path / "run", eval_before_training=False, stages=stages)
    assert manifest["best_epoch"] == 2 and manifest["base_dev_metrics"] is None
    assert [e["epoch"] for e in events if e["event"] == "epoch_end"] == [1, 2]


def test_failed_run_leaves_no_manifest(
    tiny_setup: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: Any, **kwargs: Any) -> dict[str, float]:
        raise RuntimeError("dev set exploded")

    monkeypatch.setattr(DevEvaluator, "__call__", broken)
    stream = io.StringIO()
    with pytest.raises(RuntimeError, match="exploded"):
        train(tiny_config(tiny_setup), output=tmp_path / "run", events=EventWriter(stream=stream))
    assert not (tmp_path / "run" / "manifest.json").exists()
    assert json.loads(stream.getvalue().splitlines()[-1])["event"] == "error"


def test_a_bsc_run_with_hard_negatives_mines_each_epoch(tiny_setup: dict[str, Path], tmp_path: Path) -> None:
    stage = {
        "loss": "bsc",
        "epochs": 2,
        "lr": 3e-3,
        "batch_size": 8,
        "shuffle": "none",
        "loss_params": {"temperature": 0.1},
        "hard_negatives": {"count": 2, "window": 6},
    }
    manifest, events = run(tiny_setup, tmp_path / "hard", stages=[stage])
    history = json.loads((tmp_path / "hard" / "metrics.json").read_text())["history"]
    trained = [h for h in history if h["stage"] >= 0]
    assert len(trained) == 2 and all(h["mining_seconds"] > 0 for h in trained)
    assert all(math.isfinite(h["train_loss"]) for h in trained) and manifest["best_epoch"] >= 1
