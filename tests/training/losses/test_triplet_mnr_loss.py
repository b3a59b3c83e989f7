"""Triplet and MNR losses against hand-computed values."""

from __future__ import annotations

import math

import pytest
import torch
from loss_test_utils import R2, EmbeddingModel, column, lse, t

from training.losses import MNRLoss, TripletLoss, mnr_loss_from_embeddings, triplet_loss_from_embeddings


def test_triplet_with_a_hard_negative_column() -> None:
    # Cosine distance 1 - cos, margin 0.5.
    # Row 0: d(q,p) = 1 - r, d(q,n) = 1        -> max(1 - r - 1 + 0.5, 0) = 0 (r > 0.5).
    # Row 1: d(q,p) = 0,     d(q,n) = 1 - r    -> max(0 - (1 - r) + 0.5, 0) = r - 0.5.
    q = t([[1.0, 0.0], [0.0, 1.0]])
    d = t([[1.0, 1.0], [0.0, 1.0]])
    n = t([[0.0, 1.0], [1.0, 1.0]])
    got = triplet_loss_from_embeddings(q, d, margin=0.5, negatives=[n]).item()
    assert got == pytest.approx((0.0 + (R2 - 0.5)) / 2, rel=1e-5)


# In-batch case: q = [(1,0), (0,1), (1,1)], d = [(1,0), (0,1), (1,2)].
# cos(q_i, d_j) = [[1, 0, 1/s5], [0, 1, 2/s5], [r, r, 3/s10]].
Q = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
D = [[1.0, 0.0], [0.0, 1.0], [1.0, 2.0]]
S5, S10 = math.sqrt(5), math.sqrt(10)
ROW0 = max(0.0 - (1 - 1 / S5) + 0.5, 0.0)  # hardest negative d_2 (1/s5 < 0.5: hinge 0)
ROW1 = max(0.0 - (1 - 2 / S5) + 0.5, 0.0)  # hardest negative d_2
ROW2 = max((1 - 3 / S10) - (1 - R2) + 0.5, 0.0)  # hardest negative d_0 (or d_1, same distance)


def test_triplet_uses_the_hardest_in_batch_negative() -> None:
    got = triplet_loss_from_embeddings(t(Q), t(D), margin=0.5).item()
    assert got == pytest.approx((ROW0 + ROW1 + ROW2) / 3, rel=1e-5)


def test_triplet_skips_negative_anchors_but_keeps_their_documents() -> None:
    got = triplet_loss_from_embeddings(t(Q), t(D), t([1, 1, 0]), margin=0.5).item()
    assert got == pytest.approx((ROW0 + ROW1) / 2, rel=1e-5)


def test_triplet_never_uses_an_identical_positive_document_as_negative() -> None:
    # d_1 and d_2 are the same text: for rows 1 and 2 both are positives, only d_0 is left.
    got = triplet_loss_from_embeddings(t(Q), t(D), margin=0.5, d_groups=torch.tensor([0, 1, 1])).item()
    row1 = max(0.0 - 1.0 + 0.5, 0.0)
    assert got == pytest.approx((ROW0 + row1 + ROW2) / 3, rel=1e-5)


def test_triplet_euclidean_module() -> None:
    # Euclidean: row 0 |q-p| = 1, |q-n| = sqrt(2) -> 1 - sqrt(2) + 1; row 1 |q-p| = 0, |q-n| = 1 -> 0.
    loss = TripletLoss(EmbeddingModel(), margin=1.0, distance="euclidean")
    q = [[1.0, 0.0], [0.0, 1.0]]
    d = [[1.0, 1.0], [0.0, 1.0]]
    n = [[0.0, 1.0], [1.0, 1.0]]
    got = loss([column(q), column(d), column(n)], t([1, 1])).item()
    assert got == pytest.approx((2 - math.sqrt(2) + 0.0) / 2, rel=1e-5)
    assert loss.get_config_dict()["distance"] == "euclidean"
    with pytest.raises(ValueError, match="distance"):
        TripletLoss(EmbeddingModel(), distance="manhattan")


def test_triplet_single_pair_without_negatives_is_zero() -> None:
    q = t([[1.0, 0.0]]).requires_grad_()
    value = triplet_loss_from_embeddings(q, t([[0.0, 1.0]]))
    assert value.item() == 0.0
    value.backward()
    assert torch.isfinite(q.grad).all()


# MNR: q = [(1,0), (0,1)], d = [(1,1), (0,1)]; cos = [[r, 0], [r, 1]]; scale 20.
MQ = [[1.0, 0.0], [0.0, 1.0]]
MD = [[1.0, 1.0], [0.0, 1.0]]


def test_mnr_scaled_cosine_cross_entropy() -> None:
    expected = ((lse(20 * R2, 0) - 20 * R2) + (lse(20 * R2, 20) - 20)) / 2
    assert mnr_loss_from_embeddings(t(MQ), t(MD)).item() == pytest.approx(expected, rel=1e-5, abs=1e-5)


def test_mnr_hard_negatives_and_labeled_negatives() -> None:
    # n = [(1,0), (-1,0)]: cos(q_0, n) = [1, -1], cos(q_1, n) = [0, 0], in every row's denominator.
    n = t([[1.0, 0.0], [-1.0, 0.0]])
    both = ((lse(20 * R2, 0, 20, -20) - 20 * R2) + (lse(20 * R2, 20, 0, 0) - 20)) / 2
    assert mnr_loss_from_embeddings(t(MQ), t(MD), negatives=n).item() == pytest.approx(
        both, rel=1e-5, abs=1e-5
    )
    # Pair 1 labeled negative: only row 0 is averaged; d_1 stays in its denominator.
    only_row0 = lse(20 * R2, 0) - 20 * R2
    got = mnr_loss_from_embeddings(t(MQ), t(MD), t([1, 0])).item()
    assert got == pytest.approx(only_row0, rel=1e-5, abs=1e-5)


def test_mnr_module_scale_and_config() -> None:
    loss = MNRLoss(EmbeddingModel(), scale=10.0)
    expected = ((lse(10 * R2, 0) - 10 * R2) + (lse(10 * R2, 10) - 10)) / 2
    assert loss([column(MQ), column(MD)], t([1, 1])).item() == pytest.approx(expected, rel=1e-5, abs=1e-5)
    assert loss.get_config_dict()["scale"] == 10.0
