"""`pairank train` end to end through a subprocess, as the service starts it, plus argument handling."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from trainer_helpers import build_setup

from training.cli import train

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return build_setup(tmp_path_factory.mktemp("cli"))


def write_config(setup: dict[str, Path], path: Path) -> Path:
    raw = {
        "name": "tinycli",
        "base_model": str(setup["model"]),
        "max_seq_length": 24,
        "data": {"train_pairs": str(setup["train"])},
        "dev": {"kind": "pairs", "path": str(setup["dev"]), "task": "retrieval", "metric": "MRR"},
        "stages": [{"loss": "bsc", "epochs": 3, "lr": 3e-3, "batch_size": 8, "shuffle": "random"}],
    }
    path.write_text(yaml.safe_dump(raw))
    return path


def pairank_train(args: list[str]) -> tuple[int, list[dict[str, Any]], str]:
    """Run `python -m pairank.cli train ARGS`; every stdout line must be a JSON event."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "TQDM_DISABLE": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "pairank.cli", "train", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    events = [json.loads(line) for line in done.stdout.splitlines()]  # fails on any non-JSON line
    return done.returncode, events, done.stderr


def test_cli_config_with_overrides(setup: dict[str, Path], tmp_path: Path) -> None:
    config = write_config(setup, tmp_path / "cfg.yaml")
    out = tmp_path / "run"
    rc, events, stderr = pairank_train(
        [
            "--config",
            str(config),
            "--output",
            str(out),
            "--set",
            "stages.0.epochs=2",
            "--set",
            "log_every=1",
            "--set",
            "cpu_threads=1",
        ]
    )
    assert rc == 0, stderr
    kinds = [e["event"] for e in events]
    assert kinds[0] == "start" and kinds[-1] == "done"
    assert kinds.count("step") == events[0]["total_steps"] == 12  # 48 pairs / 8, 2 epochs
    assert [e["epoch"] for e in events if e["event"] == "epoch_end"] == [0, 1, 2]
    resolved = yaml.safe_load((out / "config.yaml").read_text())
    assert resolved["stages"][0]["epochs"] == 2 and resolved["log_every"] == 1
    manifest = json.loads((out / "manifest.json").read_text())
    assert events[-1]["model_id"] == manifest["model_id"] and (out / "model" / "modules.json").is_file()


def test_cli_trains_from_plain_pair_files(setup: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "run"
    rc, events, stderr = pairank_train(
        [
            "--train-pairs",
            str(setup["train"]),
            "--dev-pairs",
            str(setup["dev"]),
            "--base-model",
            str(setup["model"]),
            "--epochs",
            "1",
            "--output",
            str(out),
            "--set",
            "stages.0.batch_size=16",
            "--set",
            "max_seq_length=24",
        ]
    )
    assert rc == 0, stderr
    resolved = yaml.safe_load((out / "config.yaml").read_text())
    assert (
        resolved["dev"]["kind"] == "pairs" and resolved["dev"]["task"] == "retrieval"
    )  # 0/1 labels: ranking
    assert resolved["dev"]["metric"] == "MRR"
    assert events[-1]["event"] == "done" and (out / "manifest.json").is_file()


def test_cli_rejects_bad_arguments(
    setup: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    config = write_config(setup, tmp_path / "cfg.yaml")
    assert train(["--config", str(config), "--set", "stages.0.learning_rate=1"]) == 2
    assert "unknown key" in capsys.readouterr().err
    assert train(["--config", "no_such_config"]) == 2
    assert train(["--dev-pairs", str(setup["dev"])]) == 2  # nothing to train on


@pytest.mark.skipif(
    not (Path(__file__).resolve().parents[2] / "../shared/data/pfcc_snopes").is_dir(),
    reason="../shared/data is not beside this checkout (paths resolve only where the data exists)",
)
def test_cli_print_config_resolves_paths(capsys: pytest.CaptureFixture) -> None:
    assert train(["--config", "pfcc_snopes", "--set", "seeds=3", "--print-config"]) == 0
    printed = yaml.safe_load(capsys.readouterr().out)
    assert printed["seeds"] == 3 and Path(printed["data"]["train_pairs"]).is_absolute()
