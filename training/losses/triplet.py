"""Triplet loss with margin: max(dist(q_i, d_i) - dist(q_i, n_i) + margin, 0), averaged over positive pairs.

The negative n_i of anchor q_i is, when the batch has hard-negative columns (sentence_features[2:]), the
row's own hard negative in each column (the hinge is averaged over the columns); otherwise it is the
in-batch hardest negative: the closest document d_j of the batch that is not a positive of q_i (j != i,
and not a document that an identical-text positive pair vouches for, see base.positive_pair_mask).
Documents of labeled-negative pairs are candidates, which is how labeled negatives become hard negatives
here. Pairs whose label is <= threshold have no positive and are skipped as anchors.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from training.losses.base import (
    PairLoss,
    full_precision,
    masked_row_mean,
    negative_columns,
    positive_pair_mask,
    positive_rows,
    text_group_ids,
)

DISTANCES: tuple[str, ...] = ("cosine", "euclidean")


def _pairwise_distance(a: Tensor, b: Tensor, distance: str) -> Tensor:
    """(rows_a, rows_b) matrix of cosine distances (1 - cos) or Euclidean distances."""
    if distance == "cosine":
        return 1.0 - F.normalize(a, dim=1) @ F.normalize(b, dim=1).T
    if distance == "euclidean":
        return torch.cdist(a, b)
    raise ValueError(f"unknown distance {distance!r}; valid: {', '.join(DISTANCES)}")


def _row_distance(a: Tensor, b: Tensor, distance: str) -> Tensor:
    """(rows,) distances between matching rows of a and b."""
    if distance == "cosine":
        return 1.0 - torch.cosine_similarity(a, b, dim=1)
    if distance == "euclidean":
        return (a - b).norm(dim=1)
    raise ValueError(f"unknown distance {distance!r}; valid: {', '.join(DISTANCES)}")


@full_precision
def triplet_loss_from_embeddings(
    q: Tensor,
    d: Tensor,
    labels: Tensor | None = None,
    *,
    margin: float = 0.5,
    distance: str = "cosine",
    threshold: float = 0.0,
    negatives: Tensor | Sequence[Tensor] | None = None,
    q_groups: Tensor | None = None,
    d_groups: Tensor | None = None,
) -> Tensor:
    """Mean triplet hinge over positive anchors (labels in [0, 1] > threshold), see the module docstring.

    ``negatives`` are (m, dim) columns aligned with the pairs; without them the hardest in-batch negative is
    used and anchors with no candidate (a batch of one) are skipped.
    """
    if q.ndim != 2 or q.shape != d.shape:
        raise ValueError(f"q and d must both be (m, dim); got {tuple(q.shape)} and {tuple(d.shape)}")
    size = q.shape[0]
    q, d = q.float(), d.float()
    positive = positive_rows(labels, threshold, size, q.device)
    positive_distance = _row_distance(q, d, distance)
    columns = negative_columns(negatives)
    if columns:
        if any(n.shape != q.shape for n in columns):
            raise ValueError("each hard-negative column must be (m, dim), aligned with the pairs")
        hinges = [F.relu(positive_distance - _row_distance(q, n.float(), distance) + margin) for n in columns]
        return masked_row_mean(torch.stack(hinges).mean(dim=0), positive)
    eye = torch.eye(size, dtype=torch.bool, device=q.device)
    candidate = ~(positive_pair_mask(positive, q_groups, d_groups) | eye)
    distances = _pairwise_distance(q, d, distance)
    hardest = torch.where(candidate, distances, torch.full_like(distances, float("inf"))).min(dim=1).values
    valid = positive & candidate.any(dim=1)
    # Rows without a candidate have hardest = inf; where() keeps that out of the sum and the gradient.
    safe_hardest = torch.where(valid, hardest, positive_distance.detach())
    return masked_row_mean(F.relu(positive_distance - safe_hardest + margin), valid)


class TripletLoss(PairLoss):
    """Triplet loss with margin on (query, document, hard negative or hardest in-batch negative)."""

    def __init__(
        self,
        model: nn.Module,
        margin: float = 0.5,
        distance: str = "cosine",
        threshold: float = 0.0,
        group_identical: bool = True,
        label_min: float = 0.0,
        label_max: float = 1.0,
    ) -> None:
        """Build the loss; the BSC paper used margins 0.6 (PFCC-S) and 0.5 (other tasks)."""
        super().__init__(model, label_min=label_min, label_max=label_max)
        if distance not in DISTANCES:
            raise ValueError(f"unknown distance {distance!r}; valid: {', '.join(DISTANCES)}")
        self.margin = float(margin)
        self.distance = distance
        self.threshold = float(threshold)
        self.group_identical = bool(group_identical)

    def forward(self, sentence_features: Iterable[dict[str, Tensor]], labels: Tensor | None = None) -> Tensor:
        """Scalar triplet loss of one batch of tokenized columns [queries, documents, *hard negatives]."""
        features = list(sentence_features)
        if len(features) < 2:
            raise ValueError("TripletLoss needs at least 2 columns (queries, documents)")
        groups = [text_group_ids(f) for f in features[:2]] if self.group_identical else [None, None]
        embeddings = self.embed(features)
        return triplet_loss_from_embeddings(
            embeddings[0],
            embeddings[1],
            self.scale_labels(labels),
            margin=self.margin,
            distance=self.distance,
            threshold=self.threshold,
            negatives=embeddings[2:] or None,
            q_groups=groups[0],
            d_groups=groups[1],
        )

    def get_config_dict(self) -> dict[str, Any]:
        """Constructor parameters, as sentence-transformers losses report them."""
        return {
            "margin": self.margin,
            "distance": self.distance,
            "threshold": self.threshold,
            "group_identical": self.group_identical,
            **super().get_config_dict(),
        }
