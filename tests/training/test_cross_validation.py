"""`pairank train --cv K`: grouped folds over train + dev pairs, a choice by the mean, a final model."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch
from sentence_transformers import SentenceTransformer

from tests.training.trainer_helpers import build_setup, tiny_raw_config
from training import base_vectors, trainer
from training.config import CVConfig, config_from_dict
from training.cross_validation import labelled_pairs, run_cv
from training.runs.folder import EventWriter

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return build_setup(tmp_path_factory.mktemp("cv"))


def config(setup: dict[str, Path]) -> dict:
    return tiny_raw_config(setup, epochs=2)


def test_cross_validation_chooses_a_point_and_epochs_and_trains_on_everything(
    setup: dict[str, Path], tmp_path: Path
) -> None:
    torch.set_num_threads(1)
    train_config = config_from_dict(config(setup))
    pairs, corpus = labelled_pairs(train_config)
    assert corpus is None and len(pairs) == 48 + 12  # train + dev pairs
    cv = CVConfig(folds=2, seeds=1, grid={"stages.0.lr": [3e-3, 1e-4]})
    summary = run_cv(train_config, cv, tmp_path / "cv")
    written = json.loads((tmp_path / "cv" / "cv.json").read_text())
    assert written["chosen"] == summary["chosen"] and len(summary["runs"]) == 2 * 2
    for runs in summary["table"].values():
        assert sorted(map(int, runs)) == [0, 1, 2]  # epoch 0: the base model on the same folds
    chosen = summary["chosen"]
    best = max(v["mean"] for runs in summary["table"].values() for e, v in runs.items() if int(e) > 0)
    assert chosen["mean"] == best and chosen["epochs"] in (1, 2)
    assert summary["zero_shot"]["mean"] == summary["table"][json.dumps({"stages.0.lr": 1e-4})][0]["mean"]
    assert (tmp_path / "cv" / "final" / "manifest.json").is_file()
    final = (tmp_path / "cv" / "final_config.yaml").read_text()
    assert f"epochs: {chosen['epochs']}" in final and "kind: none" in final


def test_an_estimate_only_run_resumes_its_finished_folds(setup: dict[str, Path], tmp_path: Path) -> None:
    torch.set_num_threads(1)
    train_config = config_from_dict(tiny_raw_config(setup, epochs=1))
    cv = CVConfig(folds=2, seeds=1, final=False)
    stream = io.StringIO()
    first = run_cv(train_config, cv, tmp_path / "cv", EventWriter(stream=stream))
    progress = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert [(e["event"], e["fold"], e["run"], e["runs"]) for e in progress] == [
        ("cv_fold", 0, 1, 2),
        ("cv_fold", 1, 2, 2),
    ]
    assert not (tmp_path / "cv" / "final").exists() and (tmp_path / "cv" / "cv.json").is_file()
    manifests = sorted((tmp_path / "cv" / "folds").glob("*/run/manifest.json"))
    stamps = [path.stat().st_mtime_ns for path in manifests]
    assert len(manifests) == 2
    # A rerun of the same config keeps both finished folds (an interrupted run resumes) ...
    assert run_cv(train_config, cv, tmp_path / "cv")["table"] == first["table"]
    assert [path.stat().st_mtime_ns for path in manifests] == stamps
    # ... and a changed config trains them again.
    changed = config_from_dict({**tiny_raw_config(setup, epochs=1), "seed": 7})
    run_cv(changed, cv, tmp_path / "cv")
    assert [path.stat().st_mtime_ns for path in manifests] != stamps


def test_cli_rejects_one_fold(setup: dict[str, Path], tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config(setup)))
    result = subprocess.run(
        [sys.executable, "-m", "pairank.cli", "train", "--config", str(path), "--cv", "1"],
        cwd=REPO, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 2 and "at least 2 folds" in result.stderr


def test_forward_cross_validation_trains_on_earlier_queries_only(
    setup: dict[str, Path], tmp_path: Path
) -> None:
    torch.set_num_threads(1)
    train_config = config_from_dict(tiny_raw_config(setup, epochs=1))
    pairs, _ = labelled_pairs(train_config)
    order = list(dict.fromkeys(p.query for p in pairs))
    cv = CVConfig(folds=2, seeds=1, scheme="forward", min_train=0.5, final=False)
    summary = run_cv(train_config, cv, tmp_path / "cv")
    assert summary["scheme"] == "forward" and len(summary["runs"]) == 2
    for fold in range(2):
        folder = tmp_path / "cv" / "folds" / f"p0-s0-f{fold}"
        trained = {json.loads(line)["query"] for line in (folder / "train.jsonl").read_text().splitlines()}
        validated = [
            json.loads(line)["text"] for line in (folder / "dev" / "queries.jsonl").read_text().splitlines()
        ]
        assert max(order.index(q) for q in trained) < min(order.index(q) for q in validated)


@pytest.mark.parametrize(
    ("value", "expected"), [("5", ("grouped", 5)), ("forward", ("forward", 3)), ("forward:4", ("forward", 4))]
)
def test_cli_cv_argument(value: str, expected: tuple[str, int]) -> None:
    from training.cli import _cv_argument

    assert _cv_argument(value) == expected


def test_the_base_models_vectors_are_encoded_once_per_job(
    setup: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every fold scores its dev set and mines its hard negatives with the same base weights before its
    first step: the texts another fold already encoded with them are not encoded again, and the folds'
    numbers are those of a run that encodes everything."""
    torch.set_num_threads(1)
    raw = tiny_raw_config(setup, epochs=1)
    raw["stages"][0]["hard_negatives"] = {"count": 1, "window": 5, "remine": "once"}
    encoded: list[int] = []
    plain = SentenceTransformer.encode

    def counted(self: SentenceTransformer, sentences: Any, *args: Any, **kwargs: Any) -> Any:
        encoded.append(len(sentences))
        return plain(self, sentences, *args, **kwargs)

    monkeypatch.setattr(SentenceTransformer, "encode", counted)
    cv = CVConfig(folds=2, seeds=1, scheme="forward", min_train=0.5, final=False)
    base_vectors.forget()
    kept = run_cv(config_from_dict(raw), cv, tmp_path / "kept")
    with_kept = sum(encoded)
    encoded.clear()
    monkeypatch.setattr(trainer, "base_key", lambda *_: "")  # no key: every fold encodes everything
    fresh = run_cv(config_from_dict(raw), cv, tmp_path / "fresh")
    assert with_kept < sum(encoded)
    for setting, epochs in fresh["table"].items():
        for epoch, value in epochs.items():
            assert kept["table"][setting][epoch]["mean"] == pytest.approx(value["mean"], abs=1e-6)
    base_vectors.forget()
