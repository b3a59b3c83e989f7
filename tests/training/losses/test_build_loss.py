"""build_loss, the registry, and every loss trained for a few steps on a tiny model with real tokenization."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from loss_test_utils import EmbeddingModel, column, t

from training.losses import LOSSES, BSCLoss, build_loss, loss_parameter_names, text_group_ids

QUERIES = [
    "The moon landing was staged in a film studio.",
    "Vaccines cause autism in young children.",
    "The moon landing was staged in a film studio.",
    "How do I reset my router password?",
]
DOCUMENTS = [
    "The moon landing was filmed in a studio.",
    "Vaccines are linked to autism in kids.",
    "The earth is flat and NASA hides it.",
    "How can I change the password of my router?",
]
NEGATIVES = [
    "Drinking bleach cures the coronavirus infection.",
    "Eating carrots improves your night vision dramatically.",
    "Where can I buy cheap flights to Doha?",
    "What is the best way to learn Python programming?",
]
# Pair 2 repeats the first query with a wrong answer: a labeled negative and a repeated anchor.
LABELS = [1.0, 1.0, 0.0, 1.0]


def test_registry_names() -> None:
    assert set(LOSSES) == {"bsc", "combo", "mse", "triplet", "mnr", "focal_infonce", "pairsupcon"}


def test_build_loss_rejects_unknown_names_and_parameters() -> None:
    with pytest.raises(ValueError, match="valid losses: bsc, combo"):
        build_loss("softmax", EmbeddingModel())
    with pytest.raises(ValueError, match="tau.*valid: temperature"):
        build_loss("bsc", EmbeddingModel(), tau=0.1)
    assert "mu" in loss_parameter_names("combo") and "model" not in loss_parameter_names("combo")


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_every_loss_builds_with_defaults_and_reports_its_config(name: str) -> None:
    loss = build_loss(name, EmbeddingModel())
    config = loss.get_config_dict()
    assert set(config) <= set(loss_parameter_names(name))
    assert {"label_min", "label_max"} <= set(config)


@pytest.mark.parametrize("name", sorted(LOSSES))
@pytest.mark.parametrize("labels", [[1.0], [0.0]])
def test_every_loss_backpropagates_on_a_batch_of_one(name: str, labels: list[float]) -> None:
    # A last batch of one pair, or of one labeled negative, must not break the step.
    model = EmbeddingModel()
    value = build_loss(name, model)([column([[1.0, 0.0]]), column([[0.6, 0.8]])], t(labels))
    assert value.ndim == 0 and torch.isfinite(value)
    value.backward()
    assert model.scale.grad is not None and torch.isfinite(model.scale.grad)


def test_group_ids_ignore_padding_width(tiny_model: Any) -> None:
    batch = tiny_model.preprocess(["hello world", "a much longer sentence about the moon", "hello world"])
    alone = tiny_model.preprocess(["hello world"])
    assert batch["input_ids"].shape[1] != alone["input_ids"].shape[1]
    ids = text_group_ids(batch)
    assert ids is not None
    assert ids[0] == ids[2] != ids[1]
    assert text_group_ids(alone)[0] == ids[0]  # type: ignore[index]
    assert text_group_ids({"modality": "text"}) is None


CASES: list[tuple[str, dict[str, Any], bool]] = [
    ("bsc", {}, False),
    ("bsc", {"normalization": "minmax_cols", "temperature": 1.2, "symmetric": False}, True),
    ("bsc", {"normalization": "l2_cols", "temperature": 1.0}, True),
    ("combo", {"mu": 0.5}, False),
    ("mse", {}, False),
    ("triplet", {}, False),
    ("triplet", {}, True),
    ("mnr", {}, True),
    ("focal_infonce", {}, True),
    ("pairsupcon", {"temperature": 0.1}, False),
]


@pytest.mark.parametrize(("name", "params", "with_negatives"), CASES)
def test_loss_decreases_on_a_tiny_batch(
    tiny_model: Any, name: str, params: dict[str, Any], with_negatives: bool
) -> None:
    # eval(): dropout off, so the same batch gives the same loss and the decrease is not noise.
    tiny_model.eval()
    columns = [QUERIES, DOCUMENTS] + ([NEGATIVES] if with_negatives else [])
    features = [tiny_model.preprocess(texts) for texts in columns]
    labels = torch.tensor(LABELS)
    loss = build_loss(name, tiny_model, **params)
    optimizer = torch.optim.Adam([*tiny_model.parameters(), *loss.extra_parameters()], lr=3e-3)
    values = []
    for _ in range(8):
        optimizer.zero_grad()
        # Fresh dict copies: the model writes its outputs into the feature dicts it is given.
        value = loss([dict(f) for f in features], labels)
        assert value.ndim == 0 and torch.isfinite(value)
        value.backward()
        optimizer.step()
        values.append(value.item())
    with torch.no_grad():
        final = loss([dict(f) for f in features], labels).item()
    assert final < values[0], (name, values, final)


def test_trainable_temperature_trains_with_its_own_learning_rate(tiny_model: Any) -> None:
    tiny_model.eval()
    features = [tiny_model.preprocess(texts) for texts in (QUERIES, DOCUMENTS)]
    loss = build_loss("bsc", tiny_model, trainable_temperature=True, temperature=0.1)
    assert isinstance(loss, BSCLoss)
    temperature_params = loss.temperature_parameters()
    assert len(temperature_params) == 1
    optimizer = torch.optim.AdamW(
        [{"params": tiny_model.parameters(), "lr": 1e-3}, {"params": temperature_params, "lr": 0.05}]
    )
    before = loss.temperature_value
    assert before == pytest.approx(0.1)
    value = loss([dict(f) for f in features], None)
    value.backward()
    assert temperature_params[0].grad is not None and temperature_params[0].grad.item() != 0.0
    optimizer.step()
    assert loss.temperature_value != pytest.approx(before)
