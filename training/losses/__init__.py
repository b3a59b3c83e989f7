"""Losses for fine-tuning bi-encoders on labeled pairs (sentence-transformers loss contract).

Every loss is ``Loss(model, **params)`` with ``forward(sentence_features, labels) -> scalar``: column 0
holds the tokenized first texts (queries), column 1 the second texts (documents), columns 2+ optional hard
negatives; labels is a float (B,) tensor. Each module also exposes a pure ``*_from_embeddings`` function.
Parameters owned by a loss (trainable temperature, PairSupCon heads) are listed by
``loss.extra_parameters()``; the temperature alone by ``loss.temperature_parameters()``.
"""

from __future__ import annotations

import inspect
from typing import Any, cast

from torch import nn

from training.losses.base import PairLoss, normalize_embeddings, positive_pair_mask, text_group_ids
from training.losses.bsc import BSCLoss, bsc_loss_from_embeddings
from training.losses.combo import ComboLoss, combo_loss_from_embeddings
from training.losses.focal_infonce import FocalInfoNCELoss, focal_infonce_loss_from_embeddings
from training.losses.mnr import MNRLoss, mnr_loss_from_embeddings
from training.losses.mse import CosineMSELoss, mse_loss_from_embeddings
from training.losses.pairsupcon import PairSupConLoss, pairsupcon_loss_from_embeddings
from training.losses.triplet import TripletLoss, triplet_loss_from_embeddings

LOSSES: dict[str, type[nn.Module]] = {
    "bsc": BSCLoss,
    "combo": ComboLoss,
    "mse": CosineMSELoss,
    "triplet": TripletLoss,
    "mnr": MNRLoss,
    "focal_infonce": FocalInfoNCELoss,
    "pairsupcon": PairSupConLoss,
}


def loss_parameter_names(name: str) -> list[str]:
    """Constructor parameters (besides the model) accepted by the loss called name."""
    cls = _loss_class(name)
    return [p for p in inspect.signature(cls.__init__).parameters if p not in ("self", "model")]


def _loss_class(name: str) -> type[nn.Module]:
    """The class registered under name, or ValueError listing the valid names."""
    try:
        return LOSSES[name]
    except KeyError:
        raise ValueError(f"unknown loss {name!r}; valid losses: {', '.join(LOSSES)}") from None


def build_loss(name: str, model: nn.Module, **params: Any) -> PairLoss:
    """Instantiate the loss called name for model; ValueError on an unknown loss or parameter."""
    cls = _loss_class(name)
    valid = loss_parameter_names(name)
    unknown = sorted(set(params) - set(valid))
    if unknown:
        raise ValueError(
            f"unknown parameter(s) {', '.join(unknown)} for loss {name!r}; valid: {', '.join(valid)}"
        )
    # Every registered class is a PairLoss (an nn.Module with extra_parameters(), temperature_parameters()).
    return cast(PairLoss, cls(model, **params))


__all__ = [
    "LOSSES",
    "BSCLoss",
    "ComboLoss",
    "CosineMSELoss",
    "FocalInfoNCELoss",
    "MNRLoss",
    "PairLoss",
    "PairSupConLoss",
    "TripletLoss",
    "bsc_loss_from_embeddings",
    "build_loss",
    "combo_loss_from_embeddings",
    "focal_infonce_loss_from_embeddings",
    "loss_parameter_names",
    "mnr_loss_from_embeddings",
    "mse_loss_from_embeddings",
    "normalize_embeddings",
    "pairsupcon_loss_from_embeddings",
    "positive_pair_mask",
    "text_group_ids",
    "triplet_loss_from_embeddings",
]
