"""Combo loss, BSC paper eq. 6: L(X) = mu * L_BSC(X) + (1 - mu) * L_MSE(X), both on the same batch.

Labels, per the paper (sections 3.4 and 4): graded scores are normalized to [0, 1] (e.g. STS-b 0-5 with
``label_max=5``, ANTIQUE 1-4 with ``label_min=1, label_max=4``); the MSE part regresses cos(q_i, d_i) on that
normalized score for every pair, labeled negatives included, and the BSC part binarizes it with the indicator
1[y_i > t] (``threshold``; the paper uses 0.6 on STS-b). Hard-negative columns only enter the BSC part.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from torch import Tensor, nn

from training.losses.base import full_precision
from training.losses.bsc import BSCLoss, bsc_loss_from_embeddings
from training.losses.mse import mse_loss_from_embeddings


@full_precision
def combo_loss_from_embeddings(
    q: Tensor,
    d: Tensor,
    labels: Tensor | None = None,
    *,
    mu: float = 0.5,
    temperature: float | Tensor = 0.1,
    symmetric: bool = True,
    normalization: str = "l2_rows",
    threshold: float = 0.0,
    q_groups: Tensor | None = None,
    d_groups: Tensor | None = None,
    negatives: Tensor | Sequence[Tensor] | None = None,
) -> Tensor:
    """mu * bsc_loss_from_embeddings(...) + (1 - mu) * mse_loss_from_embeddings(q, d, labels) (eq. 6).

    ``labels`` are already in [0, 1]: the MSE target as they are, BSC positives where labels > threshold.
    The MSE uses the cosine of the raw embeddings whatever BSC's ``normalization`` is, since the model is
    served with cosine similarity.
    """
    if not 0.0 <= mu <= 1.0:
        raise ValueError(f"mu must be in [0, 1], got {mu}")
    bsc = bsc_loss_from_embeddings(
        q,
        d,
        labels,
        temperature=temperature,
        symmetric=symmetric,
        normalization=normalization,
        threshold=threshold,
        q_groups=q_groups,
        d_groups=d_groups,
        negatives=negatives,
    )
    return mu * bsc + (1.0 - mu) * mse_loss_from_embeddings(q, d, labels)


class ComboLoss(BSCLoss):
    """mu * BSC + (1 - mu) * MSE(cosine, target) (BSC paper, eq. 6); takes every BSCLoss parameter plus mu."""

    def __init__(
        self,
        model: nn.Module,
        mu: float = 0.5,
        temperature: float = 0.1,
        symmetric: bool = True,
        normalization: str = "l2_rows",
        trainable_temperature: bool = False,
        threshold: float = 0.0,
        group_identical: bool = True,
        label_min: float = 0.0,
        label_max: float = 1.0,
    ) -> None:
        """Build the loss; mu weighs BSC (paper: 0.1 for CQA-A, MRPC, QQP, STS-b; 0.9 otherwise)."""
        super().__init__(
            model,
            temperature=temperature,
            symmetric=symmetric,
            normalization=normalization,
            trainable_temperature=trainable_temperature,
            threshold=threshold,
            group_identical=group_identical,
            label_min=label_min,
            label_max=label_max,
        )
        if not 0.0 <= mu <= 1.0:
            raise ValueError(f"mu must be in [0, 1], got {mu}")
        self.mu = float(mu)

    def forward(self, sentence_features: Iterable[dict[str, Tensor]], labels: Tensor | None = None) -> Tensor:
        """Scalar combo loss of one batch of tokenized columns [queries, documents, *hard negatives]."""
        embeddings, scaled, kwargs = self._bsc_inputs(sentence_features, labels)
        return combo_loss_from_embeddings(embeddings[0], embeddings[1], scaled, mu=self.mu, **kwargs)

    def get_config_dict(self) -> dict[str, Any]:
        """Constructor parameters, as sentence-transformers losses report them."""
        return {"mu": self.mu, **super().get_config_dict()}
