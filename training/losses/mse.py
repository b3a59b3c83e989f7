"""Pointwise MSE between each pair's cosine similarity and its target (SBERT's regression objective).

L_MSE(X) = 1/m sum_i (cos(q_i, d_i) - y_i)^2, with y_i the label mapped to [0, 1] (BSC paper, section 3.4).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import torch
from torch import Tensor, nn

from training.losses.base import PairLoss, float_labels, full_precision


@full_precision
def mse_loss_from_embeddings(q: Tensor, d: Tensor, labels: Tensor | None = None) -> Tensor:
    """Mean over all m pairs of (cos(q_i, d_i) - labels_i)^2; labels in [0, 1], None meaning all 1."""
    if q.ndim != 2 or q.shape != d.shape:
        raise ValueError(f"q and d must both be (m, dim); got {tuple(q.shape)} and {tuple(d.shape)}")
    target = float_labels(labels, q.shape[0], q.device)
    cosine = torch.cosine_similarity(q.float(), d.float(), dim=1)
    return ((cosine - target) ** 2).mean()


class CosineMSELoss(PairLoss):
    """MSE of cos(query, document) against the label mapped to [0, 1]; hard-negative columns are ignored."""

    def __init__(self, model: nn.Module, label_min: float = 0.0, label_max: float = 1.0) -> None:
        """Build the loss; raw labels in [label_min, label_max] become targets in [0, 1]."""
        super().__init__(model, label_min=label_min, label_max=label_max)

    def forward(self, sentence_features: Iterable[dict[str, Tensor]], labels: Tensor | None = None) -> Tensor:
        """Scalar MSE loss of one batch of tokenized columns [queries, documents, ...]."""
        features = list(sentence_features)
        if len(features) < 2:
            raise ValueError("CosineMSELoss needs at least 2 columns (queries, documents)")
        # Only the two paired columns have targets, so extra columns are not even encoded.
        q, d = self.embed(features[:2])
        return mse_loss_from_embeddings(q, d, self.scale_labels(labels))

    def get_config_dict(self) -> dict[str, Any]:
        """Constructor parameters, as sentence-transformers losses report them."""
        return super().get_config_dict()
