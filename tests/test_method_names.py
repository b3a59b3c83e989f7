"""The API's lists of training methods are training's own registries (app/ and training/ never import
each other, so the schema spells the names out)."""

from __future__ import annotations

from typing import get_args

from app.schemas.retraining import LossName, ShufflingName
from training.losses import LOSSES
from training.shuffling import BATCH_ORDERS


def test_the_retraining_schema_names_every_registered_loss_and_shuffling() -> None:
    assert set(get_args(LossName)) == set(LOSSES)
    assert set(get_args(ShufflingName)) == set(BATCH_ORDERS)
