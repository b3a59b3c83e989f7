"""Training configs: overrides, validation and the shipped per-dataset YAML files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from training.config import (
    CONFIG_DIR,
    ConfigError,
    apply_overrides,
    config_from_dict,
    find_config,
    load_raw_config,
    resolve_paths,
)

SHIPPED = ["pfcc_snopes", "semeval_cqa_a", "semeval_cqa_b", "antique", "stsb", "mrpc"]


def test_overrides_parse_values_and_paths() -> None:
    raw: dict[str, Any] = {"name": "x", "stages": [{"lr": 1e-5}, {"lr": 1e-5}], "dev": {"metric": "MRR"}}
    out = apply_overrides(
        raw,
        [
            "stages.0.lr=3e-5",
            "stages.*.epochs=2",
            "dev.metric=MAP",
            "seeds=5",
            "amp=off",
            "stages.1.loss_params={mu: 0.1, temperature: 0.05}",
            "data.label_range=[0, 5]",
            "progress_bar=false",
        ],
    )
    assert out["stages"][0]["lr"] == 3e-5 and isinstance(out["stages"][0]["lr"], float)
    assert [s["epochs"] for s in out["stages"]] == [2, 2]
    assert out["stages"][1]["loss_params"] == {"mu": 0.1, "temperature": 0.05}
    assert out["dev"]["metric"] == "MAP" and out["seeds"] == 5 and out["progress_bar"] is False
    assert out["data"]["label_range"] == [0, 5]
    assert raw["stages"][0]["lr"] == 1e-5  # the input is not modified
    config = config_from_dict(out)
    assert config.stages[1].loss_params["mu"] == 0.1


@pytest.mark.parametrize(
    ("raw", "overrides", "message"),
    [
        ({}, ["stages.3.lr=1"], "not an index"),
        ({}, ["novalue"], "key=value"),
    ],
)
def test_bad_overrides(raw: dict, overrides: list[str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        apply_overrides({"stages": [{}], **raw}, overrides)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"stages": [{"lr": 1e-5, "epoch": 3}]}, "unknown key"),
        ({"learning_rate": 1}, "unknown key"),
        ({"dev": {"kind": "test"}}, "dev.kind"),
        ({"stages": [{"epochs": 0}]}, "positive"),
        ({"stages": []}, "non-empty"),
        ({"amp": "fp8"}, "amp"),
        ({"eval_epochs": "some"}, "eval_epochs"),
    ],
)
def test_validation_rejects_typos_and_bad_values(raw: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        config_from_dict(raw)


def test_find_config_by_name_or_path(tmp_path: Path) -> None:
    assert find_config("pfcc_snopes") == CONFIG_DIR / "pfcc_snopes.yaml"
    own = tmp_path / "mine.yaml"
    own.write_text("stages: [{loss: mse}]\n")
    assert load_raw_config(str(own))["name"] == "mine"  # the name defaults to the file name
    with pytest.raises(ConfigError):
        find_config("no_such_config")


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_configs_validate_and_use_known_losses_and_orders(name: str) -> None:
    from training.losses import loss_parameter_names
    from training.shuffling import batch_order_params

    config = config_from_dict(load_raw_config(name))
    assert config.name == name and config.max_seq_length == 90
    for stage in config.stages:
        assert set(stage.loss_params) <= set(loss_parameter_names(stage.loss))
        assert set(stage.shuffle_params) <= set(batch_order_params(stage.shuffle))
    assert config.data.train_pairs.startswith("../shared/data/")
    resolved = resolve_paths(config)
    if (CONFIG_DIR.parents[1] / "../shared/data").exists():  # the data sits beside the checkout
        assert Path(resolved.data.train_pairs).is_file()
        if resolved.dev.path:
            assert Path(resolved.dev.path).exists()
        for stage in resolved.stages:  # a mining pool is a data path too
            if stage.hard_negatives is not None and stage.hard_negatives.corpus:
                assert Path(stage.hard_negatives.corpus).is_file()
