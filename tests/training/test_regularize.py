"""Levers that keep fine-tuning near the base model: frozen lower layers, WiSE-FT, (title, text) views."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from pairank.models import load_sentence_transformer, resolve_model
from tests.helpers.tiny_model import build_tiny_model
from tests.training.trainer_helpers import build_setup, tiny_raw_config
from training.config import DataConfig, config_from_dict
from training.data import PairSet, view_pairs, with_view_pairs
from training.regularize import freeze_lower_layers, interpolate_state
from training.trainer import train


def texts_of(setup: dict[str, Path]) -> list[str]:
    """Every text of the setup's pair files (the tiny model's vocabulary)."""
    rows = [json.loads(line) for key in ("train", "dev") for line in setup[key].read_text().splitlines()]
    return [row[k] for row in rows for k in ("query", "document")]


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return build_setup(tmp_path_factory.mktemp("regularize"))


def test_interpolation_is_a_straight_line_between_base_and_tuned() -> None:
    base = {"w": torch.zeros(3), "steps": torch.tensor([1])}
    tuned = {"w": torch.tensor([2.0, 4.0, -2.0]), "steps": torch.tensor([7])}
    mixed = interpolate_state(base, tuned, 0.25)
    assert torch.allclose(mixed["w"], torch.tensor([0.5, 1.0, -0.5])) and int(mixed["steps"]) == 7
    assert torch.equal(interpolate_state(base, tuned, 0.0)["w"], base["w"])
    assert torch.equal(interpolate_state(base, tuned, 1.0)["w"], tuned["w"])
    with pytest.raises(ValueError):
        interpolate_state(base, tuned, 1.5)


def test_frozen_layers_do_not_move_in_training(setup: dict[str, Path], tmp_path: Path) -> None:
    torch.set_num_threads(1)
    raw = tiny_raw_config(setup, epochs=1)
    two_layers = build_tiny_model(tmp_path / "tiny2", texts=texts_of(setup), hidden_size=32, num_layers=2)
    raw["base_model"] = str(two_layers)
    raw["stages"][0]["freeze_layers"] = 1  # the embeddings and layer 0: only layer 1 trains
    raw["eval_before_training"] = False
    train(config_from_dict(raw), output=tmp_path / "run")
    before = load_sentence_transformer(resolve_model(str(two_layers)), device="cpu").state_dict()
    after = load_sentence_transformer(resolve_model(str(tmp_path / "run")), device="cpu").state_dict()
    moved = {k for k in before if not torch.equal(before[k], after[k])}
    assert moved and all("layer.1." in k for k in moved), moved
    model = load_sentence_transformer(resolve_model(str(two_layers)), device="cpu")
    assert freeze_lower_layers(model, 1) > 0 and freeze_lower_layers(model, 0) == 0
    assert all(p.requires_grad for p in model.parameters())  # 0 unfreezes everything again


def test_wise_ft_saves_the_interpolated_weights(setup: dict[str, Path], tmp_path: Path) -> None:
    torch.set_num_threads(1)
    raw = {**tiny_raw_config(setup, epochs=1), "eval_before_training": False, "keep": "last"}
    train(config_from_dict(raw), output=tmp_path / "full")
    train(config_from_dict({**raw, "wise_ft": 0.5}), output=tmp_path / "half")
    states = [
        load_sentence_transformer(resolve_model(str(path)), device="cpu").state_dict()
        for path in (setup["model"], tmp_path / "full", tmp_path / "half")
    ]
    base, full, half = states
    key = next(k for k in base if torch.is_floating_point(base[k]) and not torch.equal(base[k], full[k]))
    assert torch.allclose(half[key], (base[key] + full[key]) / 2, atol=1e-6)
    with pytest.raises(ValueError, match="wise_ft"):
        config_from_dict({**raw, "wise_ft": 2})


def test_view_pairs_are_title_and_text_of_titled_documents(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    docs = [{"_id": "a", "title": "Moon", "text": "The moon is cheese."}, {"_id": "b", "text": "Untitled."},
            {"_id": "c", "title": "Sharks", "text": "Sharks fly."}]  # fmt: skip
    corpus.write_text("".join(json.dumps(d) + "\n" for d in docs))
    assert view_pairs(str(corpus), None, 0) == [("Moon", "The moon is cheese."), ("Sharks", "Sharks fly.")]
    assert len(view_pairs(str(corpus), 1, 0)) == 1
    pairs = PairSet(["q"], ["d"], np.ones(1, np.float32), np.ones(1))
    mixed = with_view_pairs(pairs, DataConfig(train_pairs="x", view_pairs=str(corpus)), seed=0)
    assert mixed.firsts == ["q", "Moon", "Sharks"] and mixed.labels.tolist() == [1.0, 1.0, 1.0]
    assert with_view_pairs(pairs, DataConfig(train_pairs="x"), seed=0) is pairs
