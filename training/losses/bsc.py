"""Batch-softmax contrastive (BSC) loss: Chernyavskiy, Ilvovsky and Nakov (NAACL 2022), section 3, eq. 1-5.

For a batch of m pairs with (normalized) query embeddings Q and document embeddings A, the paper defines

    L_BSC(X) = L0(X) + L1(X)
             = -mean(log(diag(softmax(Q A^T / tau)))) - mean(log(diag(softmax(A Q^T / tau))))      (eq. 1)
    L0(X)    = -1/(m tau) sum_i q_i^T a_i + 1/m sum_i log sum_j exp(q_i^T a_j / tau)                  (eq. 2)

with labeled negatives masked out of the positive terms only (eq. 5):

    L0(X) = -1/(m tau) sum_i 1[y_i = 1] q_i^T a_i + 1/m sum_i 1[y_i = 1] log sum_j exp(q_i^T a_j / tau)

and, for repeated texts, every q~ in P_q placed in the numerator with the average taken outside the log
(Khosla et al. 2020, as the paper prescribes for eq. 3-4).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

import torch
from torch import Tensor, nn

from training.losses.base import (
    NORMALIZATIONS,
    PairLoss,
    full_precision,
    negative_columns,
    normalize_embeddings,
    positive_pair_mask,
    positive_rows,
    text_group_ids,
)


def _direction_term(logits: Tensor, positives: Tensor, active: Tensor) -> Tensor:
    """(1/m) sum over active rows i of [log sum_j exp(logits_ij) - mean of logits_ij over i's positives]."""
    size = logits.shape[0]
    weights = positives.to(logits.dtype)
    # The positive logits sit in the first m columns (the batch's own documents / queries).
    positive_logit = (logits[:, :size] * weights).sum(dim=1) / weights.sum(dim=1).clamp_min(1.0)
    per_row = torch.logsumexp(logits, dim=1) - positive_logit
    # where() rather than multiplying by the mask, so a non-finite inactive row cannot poison the sum.
    return torch.where(active, per_row, torch.zeros_like(per_row)).sum() / size


@full_precision
def bsc_loss_from_embeddings(
    q: Tensor,
    d: Tensor,
    labels: Tensor | None = None,
    *,
    temperature: float | Tensor = 0.1,
    symmetric: bool = True,
    normalization: str = "l2_rows",
    threshold: float = 0.0,
    q_groups: Tensor | None = None,
    d_groups: Tensor | None = None,
    negatives: Tensor | Sequence[Tensor] | None = None,
) -> Tensor:
    """BSC loss (eq. 1-5) of m pairs (q_i, d_i) from their embeddings; the module docstring has the equations.

    Args:
        q, d: (m, dim) embeddings of the first texts (queries) and of the second texts (documents).
        labels: (m,) labels already mapped to [0, 1]; pair i is positive when labels[i] > threshold.
            None: every pair is positive.
        temperature: tau, a float or a (trainable) scalar tensor.
        symmetric: L0 + L1 (query->document and document->query); False gives L0 alone.
        normalization: ``l2_rows`` (cosine), ``l2_cols`` (unit L2 norm of each coordinate over the batch),
            ``minmax_cols`` (each coordinate min-max scaled to [0, 1] over the batch) or ``none``. Q is
            normalized on its own; the documents together with the hard negatives, as one candidate matrix.
        q_groups, d_groups: (m,) ids, equal for identical first (second) texts; None: all distinct.
        negatives: hard-negative documents, (rows, dim) or a list/stack of such columns. They become extra
            columns of Q A^T, so they enter the query->document denominator of every query (as in-batch
            negatives do), and never the document->query term.

    Averaging, per the paper: each direction is a sum over the *positive* rows i of
    ``log sum_j exp(s_ij / tau) - (1/|P_i|) sum_{j in P_i} s_ij / tau``, divided by m, the number of pairs
    in the batch *including* labeled negatives (eq. 5 keeps the 1/m). P_i holds i's positives: (q_i, d_j)
    is positive when some positive pair k has q_k == q_i and d_k == d_j as texts (P_i = {i} without
    repeats). Denominators always run over all m documents (queries), labeled negatives and repeated texts
    included, plus the hard negatives in L0. The symmetric loss is the sum L0 + L1, not their mean (eq. 1).
    When identical texts get identical embeddings (no dropout) the grouped loss equals the ungrouped one,
    as the paper shows in eq. 3-4; grouping changes how the gradient is shared among the group.
    """
    if normalization not in NORMALIZATIONS:
        raise ValueError(f"unknown normalization {normalization!r}; valid: {', '.join(NORMALIZATIONS)}")
    if q.ndim != 2 or q.shape != d.shape:
        raise ValueError(f"q and d must both be (m, dim); got {tuple(q.shape)} and {tuple(d.shape)}")
    size = q.shape[0]
    # Embeddings from an fp16/bf16 forward are upcast; @full_precision keeps the math below in float32.
    q = q.float()
    candidates = torch.cat([d.float(), *(n.float() for n in negative_columns(negatives))], dim=0)
    q_n = normalize_embeddings(q, normalization)
    candidates_n = normalize_embeddings(candidates, normalization)
    d_n = candidates_n[:size]
    positive = positive_rows(labels, threshold, size, q.device)
    pair_mask = positive_pair_mask(positive, q_groups, d_groups)
    loss = _direction_term(q_n @ candidates_n.T / temperature, pair_mask, positive)
    if symmetric:
        # L1: row i is document d_i against all queries; its positives are the q_j with (q_j, d_i) positive.
        loss = loss + _direction_term(d_n @ q_n.T / temperature, pair_mask.T, positive)
    return loss


class BSCLoss(PairLoss):
    """Batch-softmax contrastive loss (BSC paper, eq. 1-5) under the sentence-transformers loss contract."""

    def __init__(
        self,
        model: nn.Module,
        temperature: float = 0.1,
        symmetric: bool = True,
        normalization: str = "l2_rows",
        trainable_temperature: bool = False,
        threshold: float = 0.0,
        group_identical: bool = True,
        label_min: float = 0.0,
        label_max: float = 1.0,
    ) -> None:
        """Build the loss; ``sentence_features`` columns are [queries, documents, *hard negatives].

        Args:
            model: the SentenceTransformer being trained.
            temperature: tau (paper: 0.1 with ``l2_rows``, 1.2 with ``minmax_cols`` for PFCC-S and QQP).
            symmetric: L0 + L1; False keeps only the query->document term L0.
            normalization: ``l2_rows``, ``l2_cols``, ``minmax_cols`` or ``none``, see
                bsc_loss_from_embeddings.
            trainable_temperature: learn tau, parametrized as log(tau) so that it stays positive; the
                parameter is returned by ``temperature_parameters()`` for its own learning rate.
            threshold: a pair is positive when its label mapped to [0, 1] is > threshold (eq. 5, 3.4).
            group_identical: pairs with identical first or second texts (same input_ids where
                attention_mask is 1) are positives of each other (eq. 3-4).
            label_min, label_max: raw label range, mapped to [0, 1] before thresholding.
        """
        super().__init__(model, label_min=label_min, label_max=label_max)
        if normalization not in NORMALIZATIONS:
            raise ValueError(f"unknown normalization {normalization!r}; valid: {', '.join(NORMALIZATIONS)}")
        if not temperature > 0:
            raise ValueError(f"temperature must be positive, got {temperature}")
        self.symmetric = bool(symmetric)
        self.normalization = normalization
        self.threshold = float(threshold)
        self.group_identical = bool(group_identical)
        self.trainable_temperature = bool(trainable_temperature)
        self.initial_temperature = float(temperature)
        self.log_temperature: nn.Parameter | None = None
        if self.trainable_temperature:
            init = torch.tensor(math.log(temperature), dtype=torch.float32, device=self.model_device())
            self.log_temperature = nn.Parameter(init)

    @property
    def temperature(self) -> Tensor | float:
        """Current tau: a tensor attached to the graph when trainable, else the fixed float."""
        if self.log_temperature is None:
            return self.initial_temperature
        return self.log_temperature.exp()

    @property
    def temperature_value(self) -> float:
        """Current tau as a plain float, e.g. for logging a trainable temperature."""
        temperature = self.temperature
        return float(temperature.detach()) if isinstance(temperature, Tensor) else temperature

    def temperature_parameters(self) -> list[nn.Parameter]:
        """[log_temperature] when the temperature is trainable, else []."""
        return [] if self.log_temperature is None else [self.log_temperature]

    def _bsc_inputs(
        self, sentence_features: Iterable[dict[str, Tensor]], labels: Tensor | None
    ) -> tuple[list[Tensor], Tensor | None, dict[str, Any]]:
        """Embeddings, mapped labels and the keyword arguments of bsc_loss_from_embeddings for one batch."""
        features = list(sentence_features)
        if len(features) < 2:
            raise ValueError(f"{type(self).__name__} needs at least 2 columns (queries, documents)")
        # Group ids are read before the forward pass, which adds outputs to the feature dicts.
        groups = [text_group_ids(f) for f in features[:2]] if self.group_identical else [None, None]
        embeddings = self.embed(features)
        temperature = self.temperature
        if isinstance(temperature, Tensor):
            temperature = temperature.to(embeddings[0].device)
        kwargs: dict[str, Any] = {
            "temperature": temperature,
            "symmetric": self.symmetric,
            "normalization": self.normalization,
            "threshold": self.threshold,
            "q_groups": groups[0],
            "d_groups": groups[1],
            "negatives": embeddings[2:] or None,
        }
        return embeddings, self.scale_labels(labels), kwargs

    def forward(self, sentence_features: Iterable[dict[str, Tensor]], labels: Tensor | None = None) -> Tensor:
        """Scalar BSC loss of one batch of tokenized columns [queries, documents, *hard negatives]."""
        embeddings, scaled, kwargs = self._bsc_inputs(sentence_features, labels)
        return bsc_loss_from_embeddings(embeddings[0], embeddings[1], scaled, **kwargs)

    def get_config_dict(self) -> dict[str, Any]:
        """Constructor parameters, as sentence-transformers losses report them."""
        return {
            "temperature": self.initial_temperature,
            "symmetric": self.symmetric,
            "normalization": self.normalization,
            "trainable_temperature": self.trainable_temperature,
            "threshold": self.threshold,
            "group_identical": self.group_identical,
            **super().get_config_dict(),
        }
