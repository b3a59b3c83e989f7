"""Focal-InfoNCE (paper 002, eq. 2) and PairSupCon (paper 004, eq. 3-5) against hand-computed values."""

from __future__ import annotations

import math

import pytest
import torch
from loss_test_utils import R2, EmbeddingModel, column, lse, t
from torch import nn

from training.losses import (
    FocalInfoNCELoss,
    PairSupConLoss,
    focal_infonce_loss_from_embeddings,
    pairsupcon_loss_from_embeddings,
)
from training.losses.pairsupcon import weighted_instance_discrimination

# q = [(1,0), (0,1)], d = [(1,1), (0,1)]: s_p = (r, 1); negatives s_n(0,1) = 0, s_n(1,0) = r.
Q = [[1.0, 0.0], [0.0, 1.0]]
D = [[1.0, 1.0], [0.0, 1.0]]
TAU, M = 0.5, 0.3
# Positive logits s_p^2 / tau, negative logits s_n (s_n + m) / tau.
ROW0 = lse(R2 * R2 / TAU, 0 * (0 + M) / TAU) - R2 * R2 / TAU
ROW1 = lse(1 * 1 / TAU, R2 * (R2 + M) / TAU) - 1 * 1 / TAU


def test_focal_infonce_weights() -> None:
    got = focal_infonce_loss_from_embeddings(t(Q), t(D), temperature=TAU, m=M).item()
    assert got == pytest.approx((ROW0 + ROW1) / 2, rel=1e-5)


def test_focal_infonce_labeled_negative_and_hard_negative() -> None:
    got = focal_infonce_loss_from_embeddings(t(Q), t(D), t([0, 1]), temperature=TAU, m=M).item()
    assert got == pytest.approx(ROW1, rel=1e-5)
    # A hard negative n = (1, 0): cos with q_0 is 1, with q_1 is 0 -> extra negative logits.
    n = t([[1.0, 0.0], [1.0, 0.0]])
    row0 = lse(R2 * R2 / TAU, 0.0, 1 * (1 + M) / TAU, 1 * (1 + M) / TAU) - R2 * R2 / TAU
    row1 = lse(1 / TAU, R2 * (R2 + M) / TAU, 0.0, 0.0) - 1 / TAU
    got = focal_infonce_loss_from_embeddings(t(Q), t(D), temperature=TAU, m=M, negatives=n).item()
    assert got == pytest.approx((row0 + row1) / 2, rel=1e-5)


def test_focal_infonce_module() -> None:
    loss = FocalInfoNCELoss(EmbeddingModel(), temperature=TAU, m=M)
    assert loss([column(Q), column(D)], t([1, 1])).item() == pytest.approx((ROW0 + ROW1) / 2, rel=1e-5)
    assert loss.get_config_dict()["m"] == M


# PairSupCon: u = [(1,0), (0,1)], v = [(.8,.6), (.28,.96)], all unit vectors, tau = 0.5.
# Cosines: u1u2 = 0, u1v1 = .8, u1v2 = .28, u2v1 = .6, u2v2 = .96, v1v2 = .8.
U = [[1.0, 0.0], [0.0, 1.0]]
V = [[0.8, 0.6], [0.28, 0.96]]
PT = 0.5
E = math.exp


def wid(s_pos: float, s_a: float, s_b: float) -> float:
    """Eq. 3 for an anchor with two negatives of cosines s_a, s_b: alpha_j = exp(s_j/tau) / mean."""
    mean = (E(s_a / PT) + E(s_b / PT)) / 2
    alpha_a, alpha_b = E(s_a / PT) / mean, E(s_b / PT) / mean
    return math.log(1 + E((alpha_a * s_a - s_pos) / PT) + E((alpha_b * s_b - s_pos) / PT))


L_U1 = wid(0.8, 0.0, 0.28)  # anchor u1: positive v1; negatives u2, v2
L_V1 = wid(0.8, 0.6, 0.8)  # anchor v1: positive u1; negatives u2, v2
L_U2 = wid(0.96, 0.0, 0.6)  # anchor u2: positive v2; negatives u1, v1
L_V2 = wid(0.96, 0.28, 0.8)  # anchor v2: positive u2; negatives u1, v1


def test_weighted_instance_discrimination_both_directions() -> None:
    got = weighted_instance_discrimination(t(U), t(V), torch.tensor([True, True]), temperature=PT).item()
    assert got == pytest.approx(((L_U1 + L_V1) + (L_U2 + L_V2)) / 2, rel=1e-5)


def test_weighted_instance_discrimination_negative_pair_only_as_negatives() -> None:
    # Pair 1 negative: averaged over P_M = 1 positive pair, while u2 and v2 still are negatives.
    got = weighted_instance_discrimination(t(U), t(V), torch.tensor([True, False]), temperature=PT).item()
    assert got == pytest.approx(L_U1 + L_V1, rel=1e-5)


def test_importance_weighting_variant() -> None:
    # alpha_j weighs each exponential: log(1 + sum_j alpha_j exp((s_j - s_pos) / tau)); anchor u1 then v1.
    def importance(s_pos: float, s_a: float, s_b: float) -> float:
        mean = (E(s_a / PT) + E(s_b / PT)) / 2
        terms = E(s_a / PT) / mean * E((s_a - s_pos) / PT) + E(s_b / PT) / mean * E((s_b - s_pos) / PT)
        return math.log(1 + terms)

    expected = importance(0.8, 0.0, 0.28) + importance(0.8, 0.6, 0.8)
    got = weighted_instance_discrimination(
        t(U), t(V), torch.tensor([True, False]), temperature=PT, weighting="importance"
    ).item()
    assert got == pytest.approx(expected, rel=1e-5)


def head() -> nn.Linear:
    """Classifier on (u, v, |u - v|): logit_0 = 0, logit_1 = u_x + u_y - |u-v|_x - |u-v|_y."""
    linear = nn.Linear(6, 2)
    with torch.no_grad():
        linear.weight.copy_(t([[0, 0, 0, 0, 0, 0], [1, 1, 0, 0, -1, -1]]))
        linear.bias.zero_()
    return linear


# Pair 0: |u-v| = (.2, .6) -> logit_1 = 1 - .8 = .2, class 1. Pair 1: |u-v| = (.28, .04) -> .68, class 0.
CE = ((lse(0, 0.2) - 0.2) + (lse(0, 0.68) - 0)) / 2


def test_pairsupcon_head_and_beta() -> None:
    got = pairsupcon_loss_from_embeddings(t(U), t(V), t([1, 0]), classifier=head(), temperature=PT, beta=2.0)
    assert got.item() == pytest.approx(CE + 2.0 * (L_U1 + L_V1), rel=1e-5)


def test_pairsupcon_module_owns_the_head() -> None:
    loss = PairSupConLoss(EmbeddingModel(), temperature=PT, beta=2.0)
    assert isinstance(loss.classifier, nn.Linear)
    loss.classifier.load_state_dict(head().state_dict())
    value = loss([column(U), column(V)], t([1, 0]))
    assert value.item() == pytest.approx(CE + 2.0 * (L_U1 + L_V1), rel=1e-5)
    value.backward()
    extra = loss.extra_parameters()
    assert {id(p) for p in extra} == {id(p) for p in loss.classifier.parameters()}
    assert all(p.grad is not None for p in extra)
    assert loss.model.scale.grad is not None


def test_pairsupcon_projection_head_and_config() -> None:
    loss = PairSupConLoss(EmbeddingModel(), projection_dim=3, use_classifier=False)
    assert loss.classifier is None and loss.projector is not None
    assert len(loss.extra_parameters()) == 4  # two Linear layers, weight and bias
    value = loss([column(U), column(V)], None)
    value.backward()
    assert all(p.grad is not None for p in loss.extra_parameters())
    config = loss.get_config_dict()
    assert config["projection_dim"] == 3 and config["weighting"] == "eq3" and config["beta"] == 1.0
    with pytest.raises(ValueError, match="weighting"):
        PairSupConLoss(EmbeddingModel(), weighting="other")


@pytest.mark.parametrize("weighting", ["eq3", "importance"])
def test_pairsupcon_gradients_are_finite_even_without_negatives(weighting: str) -> None:
    u = torch.randn(5, 4, generator=torch.Generator().manual_seed(0)).requires_grad_()
    v = torch.randn(5, 4, generator=torch.Generator().manual_seed(1))
    positive = torch.tensor([True, True, False, True, True])
    weighted_instance_discrimination(u, v, positive, 0.05, weighting).backward()
    assert u.grad is not None and torch.isfinite(u.grad).all() and u.grad.abs().sum() > 0
    single = t(U[:1]).requires_grad_()
    value = weighted_instance_discrimination(single, t(V[:1]), torch.tensor([True]), 0.05, weighting)
    assert value.item() == 0.0  # M = 1: no negatives, log(1 + 0)
    value.backward()
    assert single.grad is not None and torch.isfinite(single.grad).all()
