"""Multiple negatives ranking (MNR) loss: one-sided in-batch softmax over scaled cosine similarities.

For each positive pair i: -log( exp(s * cos(q_i, d_i)) / sum_j exp(s * cos(q_i, c_j)) ), where the
candidates c are all documents of the batch followed by all hard negatives, and s is the scale (20, that
is tau = 0.05).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from training.losses.base import PairLoss, full_precision, masked_row_mean, negative_columns, positive_rows


@full_precision
def mnr_loss_from_embeddings(
    q: Tensor,
    d: Tensor,
    labels: Tensor | None = None,
    *,
    scale: float = 20.0,
    threshold: float = 0.0,
    negatives: Tensor | Sequence[Tensor] | None = None,
) -> Tensor:
    """Cross-entropy of scale * cos(q_i, candidates) against d_i, averaged over positive pairs only.

    Pairs with labels <= threshold (labels in [0, 1]) have no positive, so their rows are skipped, but their
    documents stay candidates of every other row. Unlike BSC the mean is over the positive rows, as
    cross-entropy with ignored targets does.
    """
    if q.ndim != 2 or q.shape != d.shape:
        raise ValueError(f"q and d must both be (m, dim); got {tuple(q.shape)} and {tuple(d.shape)}")
    size = q.shape[0]
    candidates = torch.cat([d.float(), *(n.float() for n in negative_columns(negatives))], dim=0)
    scores = scale * (F.normalize(q.float(), dim=1) @ F.normalize(candidates, dim=1).T)
    idx = torch.arange(size, device=q.device)
    per_row = torch.logsumexp(scores, dim=1) - scores[idx, idx]
    return masked_row_mean(per_row, positive_rows(labels, threshold, size, q.device))


class MNRLoss(PairLoss):
    """One-sided multiple negatives ranking loss with scaled cosine (sentence-transformers' MNR)."""

    def __init__(
        self,
        model: nn.Module,
        scale: float = 20.0,
        threshold: float = 0.0,
        label_min: float = 0.0,
        label_max: float = 1.0,
    ) -> None:
        """Build the loss; a pair counts as positive when its label mapped to [0, 1] is > threshold."""
        super().__init__(model, label_min=label_min, label_max=label_max)
        self.scale = float(scale)
        self.threshold = float(threshold)

    def forward(self, sentence_features: Iterable[dict[str, Tensor]], labels: Tensor | None = None) -> Tensor:
        """Scalar MNR loss of one batch of tokenized columns [queries, documents, *hard negatives]."""
        embeddings = self.embed(sentence_features)
        if len(embeddings) < 2:
            raise ValueError("MNRLoss needs at least 2 columns (queries, documents)")
        return mnr_loss_from_embeddings(
            embeddings[0],
            embeddings[1],
            self.scale_labels(labels),
            scale=self.scale,
            threshold=self.threshold,
            negatives=embeddings[2:] or None,
        )

    def get_config_dict(self) -> dict[str, Any]:
        """Constructor parameters, as sentence-transformers losses report them."""
        return {"scale": self.scale, "threshold": self.threshold, **super().get_config_dict()}
