"""BSC loss (paper 001, eq. 1-5) against values computed by hand on 2-3 pairs of 2-d embeddings."""

from __future__ import annotations

import inspect
import math

import pytest
import torch
from loss_test_utils import R2, EmbeddingModel, column, lse, t

from training.losses import BSCLoss, bsc_loss_from_embeddings

# Base case: q = [(1,0), (0,1)], d = [(2,0), (1,1)], no normalization.
# Q D^T = [[2, 1], [0, 1]]  and  D Q^T = [[2, 0], [1, 1]].
Q = [[1.0, 0.0], [0.0, 1.0]]
D = [[2.0, 0.0], [1.0, 1.0]]


def bsc(q, d, labels=None, **kwargs):
    """The pure function on nested lists, as a float."""
    label_tensor = None if labels is None else t(labels)
    return bsc_loss_from_embeddings(t(q), t(d), label_tensor, **kwargs).item()


def test_one_sided_no_normalization() -> None:
    expected = 0.5 * ((lse(2, 1) - 2) + (lse(0, 1) - 1))
    assert bsc(Q, D, symmetric=False, normalization="none", temperature=1.0) == pytest.approx(expected)


def test_symmetric_adds_the_document_to_query_term() -> None:
    l0 = 0.5 * ((lse(2, 1) - 2) + (lse(0, 1) - 1))
    l1 = 0.5 * ((lse(2, 0) - 2) + (lse(1, 1) - 1))
    assert bsc(Q, D, normalization="none", temperature=1.0) == pytest.approx(l0 + l1)


def test_temperature_divides_the_logits() -> None:
    # tau = 0.5 doubles every dot product.
    expected = 0.5 * ((lse(4, 2) - 4) + (lse(0, 2) - 2))
    assert bsc(Q, D, symmetric=False, normalization="none", temperature=0.5) == pytest.approx(expected)


def test_l2_rows_is_cosine() -> None:
    # d -> [(1,0), (r,r)]: Q D^T = [[1, r], [0, r]], D Q^T = [[1, 0], [r, r]]; tau = 0.1.
    r = R2
    l0 = 0.5 * ((lse(10, 10 * r) - 10) + (lse(0, 10 * r) - 10 * r))
    l1 = 0.5 * ((lse(10, 0) - 10) + (lse(10 * r, 10 * r) - 10 * r))
    assert bsc(Q, D, normalization="l2_rows", temperature=0.1) == pytest.approx(l0 + l1, rel=1e-5)


def test_l2_cols_normalizes_each_coordinate_over_the_batch() -> None:
    # Q's columns already have unit norm. D's columns (2,1) and (0,1) -> D' = [(2/s5, 0), (1/s5, 1)].
    s5 = math.sqrt(5)
    l0 = 0.5 * ((lse(2 / s5, 1 / s5) - 2 / s5) + (lse(0, 1) - 1))
    l1 = 0.5 * ((lse(2 / s5, 0) - 2 / s5) + (lse(1 / s5, 1) - 1))
    assert bsc(Q, D, normalization="l2_cols", temperature=1.0) == pytest.approx(l0 + l1, rel=1e-5)


def test_minmax_cols_scales_each_coordinate_to_unit_range() -> None:
    # Q columns (1,0,2), (0,1,2) -> Q' = [(.5,0), (0,.5), (1,1)];
    # D columns (2,1,0), (0,1,4) -> D' = [(1,0), (.5,.25), (0,1)];
    # Q' D'^T = [[.5, .25, 0], [0, .125, .5], [1, .75, 1]].
    q = [[1.0, 0.0], [0.0, 1.0], [2.0, 2.0]]
    d = [[2.0, 0.0], [1.0, 1.0], [0.0, 4.0]]
    expected = ((lse(0.5, 0.25, 0) - 0.5) + (lse(0, 0.125, 0.5) - 0.125) + (lse(1, 0.75, 1) - 1)) / 3
    got = bsc(q, d, symmetric=False, normalization="minmax_cols", temperature=1.0)
    assert got == pytest.approx(expected, rel=1e-5)


# Three pairs for labeled negatives: Q D^T = [[1,1,0], [0,1,1], [1,2,1]], D Q^T = [[1,0,1], [1,1,2], [0,1,1]].
Q3 = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
D3 = [[1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]
# Pair 1 is a labeled negative: its rows drop out, its column stays in every denominator, and the 1/m is 1/3.
L0_NEG = ((lse(1, 1, 0) - 1) + (lse(1, 2, 1) - 1)) / 3
L1_NEG = ((lse(1, 0, 1) - 1) + (lse(0, 1, 1) - 1)) / 3


def test_labeled_negative_leaves_positives_but_stays_in_denominators() -> None:
    got = bsc(Q3, D3, [1, 0, 1], normalization="none", temperature=1.0)
    assert got == pytest.approx(L0_NEG + L1_NEG)
    one_sided = bsc(Q3, D3, [1, 0, 1], symmetric=False, normalization="none", temperature=1.0)
    assert one_sided == pytest.approx(L0_NEG)


def test_graded_labels_use_the_threshold() -> None:
    got = bsc(Q3, D3, [0.9, 0.5, 0.7], threshold=0.6, normalization="none", temperature=1.0)
    assert got == pytest.approx(L0_NEG + L1_NEG)


def test_module_maps_raw_labels_before_thresholding() -> None:
    loss = BSCLoss(EmbeddingModel(), temperature=1.0, normalization="none", threshold=0.6, label_max=5.0)
    got = loss([column(Q3), column(D3)], t([4.5, 2.5, 3.5])).item()  # -> 0.9, 0.5, 0.7
    assert got == pytest.approx(L0_NEG + L1_NEG)


# Repeated anchors: q_0 and q_1 are the same text, embedded differently (as under dropout).
QR = [[1.0, 0.0], [0.8, 0.2], [0.0, 1.0]]
DR = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
# Q D^T = [[1, 0, 1], [.8, .2, 1], [0, 1, 1]];  D Q^T = [[1, .8, 0], [0, .2, 1], [1, 1, 1]].


def test_repeated_first_texts_are_positives_of_each_other() -> None:
    # Rows 0 and 1 both have positives {d_0, d_1}: averaged outside the log (eq. 3); denominators unchanged.
    l0 = ((lse(1, 0, 1) - (1 + 0) / 2) + (lse(0.8, 0.2, 1) - (0.8 + 0.2) / 2) + (lse(0, 1, 1) - 1)) / 3
    # Documents d_0 and d_1 both have positives {q_0, q_1} (eq. 4).
    l1 = ((lse(1, 0.8, 0) - (1 + 0.8) / 2) + (lse(0, 0.2, 1) - (0 + 0.2) / 2) + (lse(1, 1, 1) - 1)) / 3
    got = bsc(QR, DR, normalization="none", temperature=1.0, q_groups=torch.tensor([7, 7, 3]))
    assert got == pytest.approx(l0 + l1)


def test_repeated_second_texts_are_positives_of_each_other() -> None:
    # d_0 and d_2 are the same text: Q D^T = [[1, 0, .9], [0, 1, .1], [1, 1, 1]].
    q = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
    d = [[1.0, 0.0], [0.0, 1.0], [0.9, 0.1]]
    expected = ((lse(1, 0, 0.9) - (1 + 0.9) / 2) + (lse(0, 1, 0.1) - 1) + (lse(1, 1, 1) - (1 + 1) / 2)) / 3
    got = bsc(q, d, symmetric=False, normalization="none", temperature=1.0, d_groups=torch.tensor([5, 6, 5]))
    assert got == pytest.approx(expected)


def test_repeated_anchor_with_a_labeled_negative_answer() -> None:
    # Same question twice, once with a good answer (d_0) and once with a bad one (d_1, label 0): d_1 is
    # not a positive of the question, stays in the denominators; q_1 (same text as q_0) is a positive of d_0.
    l0 = ((lse(1, 0, 1) - 1) + (lse(0, 1, 1) - 1)) / 3
    l1 = ((lse(1, 0.8, 0) - (1 + 0.8) / 2) + (lse(1, 1, 1) - 1)) / 3
    got = bsc(QR, DR, [1, 0, 1], normalization="none", temperature=1.0, q_groups=torch.tensor([7, 7, 3]))
    assert got == pytest.approx(l0 + l1)


def test_grouping_leaves_the_loss_unchanged_for_identical_embeddings() -> None:
    # The paper's point under eq. 3-4: with identical q for identical texts, the value does not change.
    q = t([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    d = t(DR)
    grouped = bsc_loss_from_embeddings(q, d, q_groups=torch.tensor([7, 7, 3]), temperature=0.5)
    plain = bsc_loss_from_embeddings(q, d, temperature=0.5)
    assert grouped.item() == pytest.approx(plain.item())


def test_hard_negatives_enter_only_query_to_document_denominators() -> None:
    # n = [(1,1), (0,2)]: Q N^T = [[1, 0], [1, 2]] are extra columns of every L0 row; L1 is unchanged.
    n = t([[1.0, 1.0], [0.0, 2.0]])
    l0 = 0.5 * ((lse(2, 1, 1, 0) - 2) + (lse(0, 1, 1, 2) - 1))
    l1 = 0.5 * ((lse(2, 0) - 2) + (lse(1, 1) - 1))
    got = bsc_loss_from_embeddings(t(Q), t(D), normalization="none", temperature=1.0, negatives=[n])
    assert got.item() == pytest.approx(l0 + l1)


def test_coordinate_normalization_includes_the_hard_negatives() -> None:
    # Candidates [d; n] have columns (2,1,1,0) and (0,1,1,2), both of norm sqrt(6): all divided by sqrt(6).
    c = 1 / math.sqrt(6)
    n = t([[1.0, 1.0], [0.0, 2.0]])
    expected = 0.5 * ((lse(2 * c, c, c, 0) - 2 * c) + (lse(0, c, c, 2 * c) - c))
    got = bsc_loss_from_embeddings(
        t(Q), t(D), symmetric=False, normalization="l2_cols", temperature=1.0, negatives=n
    )
    assert got.item() == pytest.approx(expected, rel=1e-5)


def test_module_reads_repeated_texts_from_the_tokenized_rows() -> None:
    # Same token ids for q_0 and q_1 (with different padding widths in play) -> grouped like q_groups above.
    tokens = [[2, 14, 3], [2, 14, 3], [2, 50, 51, 3]]
    loss = BSCLoss(EmbeddingModel(), temperature=1.0, normalization="none")
    got = loss([column(QR, tokens), column(DR, [[2, 7, 3], [2, 8, 3], [2, 9, 3]])], t([1, 1, 1])).item()
    expected = bsc(QR, DR, normalization="none", temperature=1.0, q_groups=torch.tensor([7, 7, 3]))
    assert got == pytest.approx(expected)
    ungrouped = BSCLoss(EmbeddingModel(), temperature=1.0, normalization="none", group_identical=False)
    plain = ungrouped([column(QR, tokens), column(DR)], None).item()
    assert plain == pytest.approx(bsc(QR, DR, normalization="none", temperature=1.0))
    assert plain != pytest.approx(got)


def test_trainable_temperature_gets_a_gradient() -> None:
    loss = BSCLoss(EmbeddingModel(), temperature=0.5, normalization="none", trainable_temperature=True)
    assert loss.temperature_parameters() == [loss.log_temperature]
    assert loss.extra_parameters() == [loss.log_temperature]
    value = loss([column(Q), column(D)], None)
    fixed = bsc(Q, D, normalization="none", temperature=0.5)
    assert value.item() == pytest.approx(fixed)
    value.backward()
    assert loss.log_temperature is not None
    grad = loss.log_temperature.grad
    assert grad is not None and grad.item() != 0.0
    # d loss / d log(tau) matches a finite difference of the hand-checked pure function.
    eps = 1e-3
    up = bsc(Q, D, normalization="none", temperature=0.5 * math.exp(eps))
    down = bsc(Q, D, normalization="none", temperature=0.5 * math.exp(-eps))
    assert grad.item() == pytest.approx((up - down) / (2 * eps), rel=1e-3)


def test_fixed_temperature_has_no_parameters_and_embeddings_get_gradients() -> None:
    model = EmbeddingModel()
    loss = BSCLoss(model, temperature=0.5, normalization="minmax_cols")
    assert loss.temperature_parameters() == [] and loss.extra_parameters() == []
    q = t(QR).requires_grad_()
    loss_value = bsc_loss_from_embeddings(q, t(DR), normalization="l2_cols", negatives=t(Q3))
    loss_value.backward()
    assert q.grad is not None and torch.isfinite(q.grad).all() and q.grad.abs().sum() > 0


def test_all_pairs_negative_gives_zero_with_a_graph() -> None:
    q = t(Q).requires_grad_()
    value = bsc_loss_from_embeddings(q, t(D), t([0, 0]))
    assert value.item() == 0.0
    value.backward()


def test_config_and_validation() -> None:
    loss = BSCLoss(EmbeddingModel(), temperature=1.2, normalization="minmax_cols", symmetric=False)
    config = loss.get_config_dict()
    assert config["temperature"] == 1.2 and config["normalization"] == "minmax_cols"
    assert config["symmetric"] is False and config["threshold"] == 0.0
    with pytest.raises(ValueError, match="normalization"):
        BSCLoss(EmbeddingModel(), normalization="l3")
    with pytest.raises(ValueError, match="temperature"):
        BSCLoss(EmbeddingModel(), temperature=0.0)
    with pytest.raises(ValueError, match="labels"):
        bsc_loss_from_embeddings(t(Q), t(D), t([1, 1, 1]))


def test_loss_math_stays_float32_under_autocast() -> None:
    # bf16 keeps ~3 significant digits: with tau = 0.01 its rounding would move the logits by ~0.5.
    q = t([[1.001, 0.302], [0.203, 1.007], [0.999, 1.013]])
    d = t([[1.013, 0.001], [0.997, 1.009], [0.004, 0.991]])
    plain = bsc_loss_from_embeddings(q, d, normalization="none", temperature=0.01)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        got = bsc_loss_from_embeddings(q, d, normalization="none", temperature=0.01)
        # The same math without the float32 guard, to show the test can tell the difference.
        unguarded = inspect.unwrap(bsc_loss_from_embeddings)(q, d, normalization="none", temperature=0.01)
    assert unguarded.item() != pytest.approx(plain.item(), rel=1e-3)
    assert got.dtype == torch.float32 and got.item() == pytest.approx(plain.item(), rel=1e-6)
