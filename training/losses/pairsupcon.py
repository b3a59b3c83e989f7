"""PairSupCon (Zhang et al., EMNLP 2021; paper 004): weighted bidirectional instance discrimination + head.

For a batch of M pairs, the 2M sentences z (first texts, then second texts) are compared by cosine s. For the
first text x_i of a positive pair, with partner x_i' and the other 2M - 2 sentences as negatives (eq. 3):

    l_wID^i = log(1 + sum_{j != i, i'} exp[(alpha_j s(z_i, z_j) - s(z_i, z_i')) / tau])
    alpha_j = exp(s(z_i, z_j) / tau) / ((1 / (2M - 2)) sum_{k != i, i'} exp(s(z_i, z_k) / tau))

and l_wID^i' the same with x_i' as anchor and x_i as positive. The pair head is a linear classifier f on
(u, v, |u - v|) of the sentence embeddings, trained with cross-entropy (eq. 4) to tell positive (label > t)
from negative pairs. The overall loss (eq. 5) is sum_i l_C^i + beta 1[y_i = 1] (l_wID^i + l_wID^i').
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from training.losses.base import PairLoss, full_precision, masked_row_mean, positive_rows

WEIGHTINGS: tuple[str, ...] = ("eq3", "importance")


@full_precision
def weighted_instance_discrimination(
    z1: Tensor, z2: Tensor, positive: Tensor, temperature: float = 0.05, weighting: str = "eq3"
) -> Tensor:
    """(1 / P_M) sum over positive pairs i of (l_wID^i + l_wID^i') (eq. 2 with eq. 3's weighted terms).

    ``positive`` is the (M,) boolean mask of positive pairs; sentences of negative pairs are still negatives
    of every anchor. With M = 1 there are no negatives and the term is log(1) = 0. The weights alpha_j are
    not detached: the loss is the printed function of the similarities and gets its exact gradient (with a
    detached alpha, eq. 3's update is no descent direction: alpha_j grows as negatives spread, and the loss
    of a tiny model rose from 8 to 33 in 8 steps).

    ``weighting="eq3"`` is eq. 3 as printed: alpha_j multiplies the similarity inside the exponent.
    ``"importance"`` reads alpha_j as an importance weight on each negative's term instead,
    log(1 + sum_j alpha_j exp[(s_ij - s_ii') / tau]), the usual importance-sampling estimate.
    """
    if weighting not in WEIGHTINGS:
        raise ValueError(f"unknown weighting {weighting!r}; valid: {', '.join(WEIGHTINGS)}")
    size = z1.shape[0]
    z = F.normalize(torch.cat([z1.float(), z2.float()], dim=0), dim=1)
    sim = z @ z.T
    idx = torch.arange(2 * size, device=z.device)
    partner = (idx + size) % (2 * size)
    positive_sim = sim[idx, partner]
    is_negative = torch.ones_like(sim, dtype=torch.bool)
    is_negative[idx, idx] = False
    is_negative[idx, partner] = False
    n_negatives = 2 * size - 2
    minus_inf = torch.full_like(sim, float("-inf"))
    # Without negatives (M = 1) every logit is masked; where() still ties the result to the graph.
    logits = torch.where(is_negative, sim, minus_inf)
    if n_negatives > 0:
        scaled = torch.where(is_negative, sim / temperature, minus_inf)
        # alpha_j = (2M - 2) * softmax of s / tau over the anchor's negatives: weight relative to the mean.
        log_alpha = math.log(n_negatives) + torch.log_softmax(scaled, dim=1)
        if weighting == "eq3":
            logits = (log_alpha.exp() * sim - positive_sim[:, None]) / temperature
        else:
            logits = log_alpha + (sim - positive_sim[:, None]) / temperature
        logits = torch.where(is_negative, logits, minus_inf)
    # log(1 + sum exp(x)) = logsumexp over [0, x...], stable and exactly 0 when there is no negative.
    per_anchor = torch.logsumexp(torch.cat([torch.zeros_like(sim[:, :1]), logits], dim=1), dim=1)
    per_pair = per_anchor[:size] + per_anchor[size:]
    return masked_row_mean(per_pair, positive)


@full_precision
def pairsupcon_loss_from_embeddings(
    u: Tensor,
    v: Tensor,
    labels: Tensor | None = None,
    *,
    classifier: nn.Module | None = None,
    projector: nn.Module | None = None,
    temperature: float = 0.05,
    beta: float = 1.0,
    threshold: float = 0.0,
    weighting: str = "eq3",
) -> Tensor:
    """mean_i CE(f(u_i, v_i, |u_i - v_i|), 1[y_i > t]) + beta * weighted_instance_discrimination(h(u), h(v)).

    u, v: (M, dim) sentence embeddings of the first and second texts; labels in [0, 1] (None: all positive).
    ``classifier`` maps (M, 3 dim) to (M, 2) logits (class 1 = positive pair); None drops the head term.
    ``projector`` is the optional instance-discrimination head h (identity when None). The paper sums eq. 5
    over the batch; we average each part instead (CE over all M pairs, ID over the P_M positive pairs as in
    eq. 2) so beta keeps the paper's meaning while the scale does not grow with the batch size.
    """
    if u.ndim != 2 or u.shape != v.shape:
        raise ValueError(f"u and v must both be (M, dim); got {tuple(u.shape)} and {tuple(v.shape)}")
    positive = positive_rows(labels, threshold, u.shape[0], u.device)
    u, v = u.float(), v.float()
    z1, z2 = (u, v) if projector is None else (projector(u), projector(v))
    loss = beta * weighted_instance_discrimination(z1, z2, positive, temperature, weighting)
    if classifier is not None:
        pair_logits = classifier(torch.cat([u, v, (u - v).abs()], dim=1))
        loss = loss + F.cross_entropy(pair_logits.float(), positive.long())
    return loss


class PairSupConLoss(PairLoss):
    """PairSupCon: weighted instance discrimination plus a (u, v, |u - v|) classifier owned by the loss."""

    def __init__(
        self,
        model: nn.Module,
        temperature: float = 0.05,
        beta: float = 1.0,
        weighting: str = "eq3",
        use_classifier: bool = True,
        projection_dim: int | None = None,
        embedding_dim: int | None = None,
        threshold: float = 0.0,
        label_min: float = 0.0,
        label_max: float = 1.0,
    ) -> None:
        """Build the loss and its heads (see ``extra_parameters()``: they must be given to the optimizer).

        Args:
            temperature: tau of the instance discrimination.
            beta: weight of the instance-discrimination term (paper: 1).
            weighting: ``eq3`` (alpha_j multiplies the similarity, as printed) or ``importance`` (alpha_j
                weighs each negative's exponential), see weighted_instance_discrimination.
            use_classifier: add the linear (3 dim -> 2) pair classifier with cross-entropy.
            projection_dim: if set, instance discrimination runs on a 2-layer MLP head h (dim -> dim ->
                projection_dim), as in the paper's appendix (128); None runs it on the sentence embeddings
                themselves, which are what the service ranks with.
            embedding_dim: the sentence embedding size; read from the model when None.
        """
        super().__init__(model, label_min=label_min, label_max=label_max)
        if not temperature > 0:
            raise ValueError(f"temperature must be positive, got {temperature}")
        self.temperature = float(temperature)
        if weighting not in WEIGHTINGS:
            raise ValueError(f"unknown weighting {weighting!r}; valid: {', '.join(WEIGHTINGS)}")
        self.beta = float(beta)
        self.weighting = weighting
        self.threshold = float(threshold)
        self.use_classifier = bool(use_classifier)
        self.projection_dim = projection_dim
        dim = embedding_dim or self._model_dimension()
        device = self.model_device()
        self.classifier: nn.Module | None = None
        if self.use_classifier:
            self.classifier = nn.Linear(3 * dim, 2, device=device)
        self.projector: nn.Module | None = None
        if projection_dim is not None:
            self.projector = nn.Sequential(
                nn.Linear(dim, dim, device=device), nn.ReLU(), nn.Linear(dim, projection_dim, device=device)
            )

    def _model_dimension(self) -> int:
        """Sentence embedding size reported by the model."""
        # get_embedding_dimension is the newer name (sentence-transformers >= 6); older ones have the other.
        for name in ("get_embedding_dimension", "get_sentence_embedding_dimension"):
            getter = getattr(self.model, name, None)
            dim = getter() if callable(getter) else None
            if isinstance(dim, int) and dim > 0:
                return dim
        raise ValueError("cannot read the embedding size from the model; pass embedding_dim")

    def forward(self, sentence_features: Iterable[dict[str, Tensor]], labels: Tensor | None = None) -> Tensor:
        """Scalar PairSupCon loss of one batch of tokenized columns [first texts, second texts]."""
        features = list(sentence_features)
        if len(features) < 2:
            raise ValueError("PairSupConLoss needs 2 columns (first texts, second texts)")
        # Extra columns have no place in eq. 5 (every sentence already serves as a negative): unused.
        u, v = self.embed(features[:2])
        return pairsupcon_loss_from_embeddings(
            u,
            v,
            self.scale_labels(labels),
            classifier=self.classifier,
            projector=self.projector,
            temperature=self.temperature,
            beta=self.beta,
            threshold=self.threshold,
            weighting=self.weighting,
        )

    def get_config_dict(self) -> dict[str, Any]:
        """Constructor parameters, as sentence-transformers losses report them."""
        return {
            "temperature": self.temperature,
            "beta": self.beta,
            "weighting": self.weighting,
            "use_classifier": self.use_classifier,
            "projection_dim": self.projection_dim,
            "threshold": self.threshold,
            **super().get_config_dict(),
        }
