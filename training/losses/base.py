"""Shared pieces of the pairank losses: the module base class and pure tensor helpers.

Label convention (all losses): raw dataset labels are first mapped to [0, 1] with
``(label - label_min) / (label_max - label_min)`` (e.g. STS-b 0-5 scores: ``label_max=5``), then a pair is
a *positive* when its mapped label is ``> threshold`` (BSC paper, eq. 5 and section 3.4: ``1[y_i > t]``).
With the defaults (range [0, 1], threshold 0) binary 0/1 labels mean negative/positive, and
``labels=None`` means every pair is positive. The pure ``*_from_embeddings`` functions take labels that
are already mapped to [0, 1].
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from typing import Any, ParamSpec, TypeVar

import torch
import torch.nn.functional as F
from torch import Tensor, nn

NORMALIZATIONS: tuple[str, ...] = ("l2_rows", "l2_cols", "minmax_cols", "none")
_EPS = 1e-12
_P = ParamSpec("_P")
_R = TypeVar("_R")


def full_precision(fn: Callable[_P, _R]) -> Callable[_P, _R]:
    """Run a loss function with autocast disabled, so its matmuls and logsumexps stay in float32."""

    @functools.wraps(fn)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        # Under fp16 autocast, logits such as 384-d min-max dot products / tau = 1.2 (~300) keep only a
        # 0.25 resolution; the loss math is cheap next to the encoder, so it runs in float32.
        device = next((a.device for a in args if isinstance(a, Tensor)), torch.device("cpu"))
        with torch.autocast(device_type=device.type, enabled=False):
            return fn(*args, **kwargs)

    return wrapper


def normalize_embeddings(x: Tensor, mode: str) -> Tensor:
    """Normalize (rows, dim) embeddings by rows (cosine), by coordinates (L2 or min-max), or not at all."""
    if mode == "l2_rows":
        return F.normalize(x, p=2.0, dim=1, eps=_EPS)
    if mode == "l2_cols":
        # Each coordinate gets unit L2 norm over the batch dimension (BSC paper, section 3.5).
        return F.normalize(x, p=2.0, dim=0, eps=_EPS)
    if mode == "minmax_cols":
        low = x.min(dim=0, keepdim=True).values
        high = x.max(dim=0, keepdim=True).values
        # A constant coordinate (e.g. a batch of one) maps to 0 instead of dividing by zero.
        return (x - low) / (high - low).clamp_min(_EPS)
    if mode == "none":
        return x
    raise ValueError(f"unknown normalization {mode!r}; valid: {', '.join(NORMALIZATIONS)}")


def positive_rows(labels: Tensor | None, threshold: float, size: int, device: torch.device) -> Tensor:
    """Boolean (size,) mask of positive pairs: mapped label > threshold, or all True when labels is None."""
    if labels is None:
        return torch.ones(size, dtype=torch.bool, device=device)
    labels = labels.reshape(-1)
    if labels.numel() != size:
        raise ValueError(f"expected {size} labels (one per pair), got {labels.numel()}")
    return labels.to(device=device, dtype=torch.float32) > threshold


def float_labels(labels: Tensor | None, size: int, device: torch.device) -> Tensor:
    """Labels as a float32 (size,) tensor; all ones (every pair fully similar) when labels is None."""
    if labels is None:
        return torch.ones(size, dtype=torch.float32, device=device)
    labels = labels.reshape(-1)
    if labels.numel() != size:
        raise ValueError(f"expected {size} labels (one per pair), got {labels.numel()}")
    return labels.to(device=device, dtype=torch.float32)


def positive_pair_mask(
    positive: Tensor, q_groups: Tensor | None = None, d_groups: Tensor | None = None
) -> Tensor:
    """(m, m) mask: (q_i, d_j) is a positive when some positive pair k has q_k == q_i and d_k == d_j as texts.

    ``q_groups``/``d_groups`` are (m,) integer ids, equal ids meaning identical texts (None: all distinct).
    This is the BSC paper's P_q of eq. 3-4 for repeated first texts, the same for repeated second texts,
    and it never turns a labeled negative (q_k, d_k) into a positive: only positive pairs vouch for one.
    """
    size = positive.shape[0]
    idx = torch.arange(size, device=positive.device)
    qg = idx if q_groups is None else q_groups.reshape(-1).to(positive.device)
    dg = idx if d_groups is None else d_groups.reshape(-1).to(positive.device)
    if qg.numel() != size or dg.numel() != size:
        raise ValueError(f"group ids must have one entry per pair ({size})")
    same_q = (qg[:, None] == qg[None, :]) & positive[None, :]
    same_d = dg[:, None] == dg[None, :]
    return (same_q.float() @ same_d.float()) > 0


def negative_columns(negatives: Tensor | Sequence[Tensor] | None) -> list[Tensor]:
    """Hard negatives as a list of (rows, dim) matrices, one per extra column; empty when there are none."""
    if negatives is None:
        return []
    if isinstance(negatives, Tensor):
        if negatives.ndim == 2:
            return [negatives]
        if negatives.ndim == 3:
            return list(negatives.unbind(0))
        raise ValueError("negatives must be (rows, dim) or (columns, rows, dim)")
    return list(negatives)


def masked_row_mean(values: Tensor, mask: Tensor) -> Tensor:
    """Mean of values over rows where mask is True; 0 (still attached to the graph) when no row is."""
    masked = torch.where(mask, values, torch.zeros_like(values))
    return masked.sum() / mask.sum().clamp_min(1)


def text_group_ids(features: dict[str, Any]) -> Tensor | None:
    """(B,) int64 ids equal exactly for rows with the same tokens (input_ids where attention_mask is 1).

    The id is Python's hash of the unpadded token tuple: it ignores the padding width, and int-tuple hashes
    are not salted per process, so ids from different DDP ranks can be all-gathered and compared. None when
    the features hold no 2-d ``input_ids`` (e.g. a non-text module), which disables identical-text grouping.
    """
    ids = features.get("input_ids")
    if not isinstance(ids, Tensor) or ids.ndim != 2:
        return None
    mask = features.get("attention_mask")
    mask_rows = (
        mask.detach().cpu().bool() if isinstance(mask, Tensor) else torch.ones_like(ids, dtype=torch.bool)
    )
    rows = ids.detach().cpu()
    hashes = [hash(tuple(row[keep].tolist())) for row, keep in zip(rows, mask_rows, strict=True)]
    return torch.tensor(hashes, dtype=torch.int64, device=ids.device)


class PairLoss(nn.Module):
    """Base for pairank losses: sentence-transformers contract, label mapping and loss-owned parameters."""

    def __init__(self, model: nn.Module, label_min: float = 0.0, label_max: float = 1.0) -> None:
        super().__init__()
        if not label_max > label_min:
            raise ValueError(f"label_max ({label_max}) must be greater than label_min ({label_min})")
        self.model = model
        self.label_min = float(label_min)
        self.label_max = float(label_max)

    def embed(self, sentence_features: Iterable[dict[str, Tensor]]) -> list[Tensor]:
        """Sentence embeddings for each column of tokenized features."""
        return [self.model(features)["sentence_embedding"] for features in sentence_features]

    def scale_labels(self, labels: Tensor | None) -> Tensor | None:
        """Map raw labels from [label_min, label_max] to [0, 1] (None stays None)."""
        if labels is None:
            return None
        return (labels.float().reshape(-1) - self.label_min) / (self.label_max - self.label_min)

    def model_device(self) -> torch.device | None:
        """Device of the wrapped model, used to create loss-owned parameters next to it."""
        device = getattr(self.model, "device", None)
        return device if isinstance(device, torch.device) else None

    def extra_parameters(self) -> list[nn.Parameter]:
        """Trainable parameters owned by the loss, not the model (temperature, heads), for the optimizer."""
        model_params = {id(p) for p in self.model.parameters()}
        return [p for p in self.parameters() if id(p) not in model_params]

    def temperature_parameters(self) -> list[nn.Parameter]:
        """Trainable temperature parameters (for their own learning rate); empty unless the loss has one."""
        return []

    def get_config_dict(self) -> dict[str, Any]:
        """Constructor parameters, as sentence-transformers losses report them."""
        return {"label_min": self.label_min, "label_max": self.label_max}
