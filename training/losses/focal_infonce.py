"""Focal-InfoNCE (Hou and Li, paper 002, eq. 2), applied to (query, document) pairs.

    l_i = -log( exp(s_p^2 / tau) / ( sum_{j != i} exp(s_n^{ij} (s_n^{ij} + m) / tau) + exp(s_p^2 / tau) ) )

with s_p = cos(q_i, d_i) and s_n^{ij} = cos(q_i, c_j) for every other candidate c_j (the other documents of
the batch and all hard negatives). Negatives with cosine above 1 - m are up-weighted, easier ones
down-weighted; the squared positive term down-weights dissimilar positives.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from training.losses.base import PairLoss, full_precision, masked_row_mean, negative_columns, positive_rows


@full_precision
def focal_infonce_loss_from_embeddings(
    q: Tensor,
    d: Tensor,
    labels: Tensor | None = None,
    *,
    temperature: float = 0.07,
    m: float = 0.3,
    threshold: float = 0.0,
    negatives: Tensor | Sequence[Tensor] | None = None,
) -> Tensor:
    """Focal-InfoNCE (eq. 2) averaged over positive pairs (labels in [0, 1] > threshold; None: all).

    The paper sums l_i over the batch (eq. 3); we take the mean over positive rows so the scale does not grow
    with the batch size. Labeled-negative pairs contribute no row but their documents stay negatives.
    """
    if q.ndim != 2 or q.shape != d.shape:
        raise ValueError(f"q and d must both be (m, dim); got {tuple(q.shape)} and {tuple(d.shape)}")
    size = q.shape[0]
    candidates = torch.cat([d.float(), *(n.float() for n in negative_columns(negatives))], dim=0)
    sim = F.normalize(q.float(), dim=1) @ F.normalize(candidates, dim=1).T
    idx = torch.arange(size, device=q.device)
    is_positive = torch.zeros_like(sim, dtype=torch.bool)
    is_positive[idx, idx] = True
    logits = torch.where(is_positive, sim * sim, sim * (sim + m)) / temperature
    per_row = torch.logsumexp(logits, dim=1) - logits[idx, idx]
    return masked_row_mean(per_row, positive_rows(labels, threshold, size, q.device))


class FocalInfoNCELoss(PairLoss):
    """Focal-InfoNCE over in-batch (and hard) negatives, one-sided query->document."""

    def __init__(
        self,
        model: nn.Module,
        temperature: float = 0.07,
        m: float = 0.3,
        threshold: float = 0.0,
        label_min: float = 0.0,
        label_max: float = 1.0,
    ) -> None:
        """Build the loss; m is the hardness hyperparameter (paper: 0.2-0.3), tau the temperature."""
        super().__init__(model, label_min=label_min, label_max=label_max)
        if not temperature > 0:
            raise ValueError(f"temperature must be positive, got {temperature}")
        self.temperature = float(temperature)
        self.m = float(m)
        self.threshold = float(threshold)

    def forward(self, sentence_features: Iterable[dict[str, Tensor]], labels: Tensor | None = None) -> Tensor:
        """Scalar Focal-InfoNCE loss of a batch of tokenized columns [queries, documents, *hard negatives]."""
        embeddings = self.embed(sentence_features)
        if len(embeddings) < 2:
            raise ValueError("FocalInfoNCELoss needs at least 2 columns (queries, documents)")
        return focal_infonce_loss_from_embeddings(
            embeddings[0],
            embeddings[1],
            self.scale_labels(labels),
            temperature=self.temperature,
            m=self.m,
            threshold=self.threshold,
            negatives=embeddings[2:] or None,
        )

    def get_config_dict(self) -> dict[str, Any]:
        """Constructor parameters, as sentence-transformers losses report them."""
        return {
            "temperature": self.temperature,
            "m": self.m,
            "threshold": self.threshold,
            **super().get_config_dict(),
        }
