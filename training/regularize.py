"""Fine-tuning that stays near the base model: frozen lower layers and weight-space interpolation.

A few hundred judged pairs pull a pre-trained bi-encoder toward the claims they mention; on later
queries about claims nobody judged, that specialisation can cost what it gains (issue 29). Two levers
keep the model general: freezing the embeddings and the lower transformer layers (only the upper ones
adapt), and WiSE-FT (Wortsman et al., 2022), which saves base + alpha * (fine-tuned - base).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import torch

_LAYER = re.compile(r"(?:^|\.)(?:encoder\.)?layers?\.(\d+)\.")


def freeze_lower_layers(model: torch.nn.Module, layers: int) -> int:
    """Freeze the embeddings and transformer layers 0..layers-1 (unfreeze the rest); returns the frozen
    parameter count. 0 trains everything."""
    frozen = 0
    for name, parameter in model.named_parameters():
        match = _LAYER.search(name)
        lower = ".embeddings." in f".{name}" or (match is not None and int(match.group(1)) < layers)
        parameter.requires_grad_(not (layers > 0 and lower))
        frozen += parameter.numel() if layers > 0 and lower else 0
    return frozen


def interpolate_state(
    base: Mapping[str, torch.Tensor], tuned: Mapping[str, torch.Tensor], alpha: float
) -> dict[str, torch.Tensor]:
    """WiSE-FT weights base + alpha * (tuned - base) for floating tensors (others are the tuned ones)."""
    if not 0 <= alpha <= 1:
        raise ValueError(f"alpha must be in [0, 1], got {alpha}")
    mixed: dict[str, torch.Tensor] = {}
    for key, value in tuned.items():
        start = base.get(key)
        if start is None or not torch.is_floating_point(value) or start.shape != value.shape:
            mixed[key] = value
        else:
            origin = start.to(value.device, value.dtype)
            mixed[key] = origin + alpha * (value - origin)
    return mixed
