"""MSE on cosine and the combo loss (paper 001, eq. 6) against hand-computed values."""

from __future__ import annotations

import pytest
from loss_test_utils import R2, EmbeddingModel, column, lse, t

from training.losses import ComboLoss, CosineMSELoss, combo_loss_from_embeddings, mse_loss_from_embeddings


def test_mse_on_cosine() -> None:
    # cos = 1/sqrt(2), 1, 24/25.
    q = t([[1.0, 0.0], [0.0, 1.0], [3.0, 4.0]])
    d = t([[1.0, 1.0], [0.0, 2.0], [4.0, 3.0]])
    expected = ((R2 - 0.5) ** 2 + (1 - 1) ** 2 + (0.96 - 0) ** 2) / 3
    assert mse_loss_from_embeddings(q, d, t([0.5, 1.0, 0.0])).item() == pytest.approx(expected, rel=1e-5)


def test_mse_module_scales_labels_and_ignores_extra_columns() -> None:
    q = [[1.0, 0.0], [0.0, 1.0]]
    d = [[1.0, 1.0], [0.0, 2.0]]
    loss = CosineMSELoss(EmbeddingModel(), label_min=1.0, label_max=4.0)  # ANTIQUE-style 1-4 scores
    got = loss([column(q), column(d), column([[9.0, 9.0], [9.0, 9.0]])], t([2.5, 4.0])).item()
    assert got == pytest.approx(((R2 - 0.5) ** 2 + 0.0) / 2, rel=1e-5)
    assert loss.get_config_dict() == {"label_min": 1.0, "label_max": 4.0}


# q = [(1,0), (0,1)], d = [(2,0), (1,1)], no normalization, tau = 1: Q D^T = [[2, 1], [0, 1]].
Q = [[1.0, 0.0], [0.0, 1.0]]
D = [[2.0, 0.0], [1.0, 1.0]]
# Labels (1.0, 0.2) with t = 0.5: pair 1 is a BSC negative and has MSE target 0.2.
BSC_PART = 0.5 * (lse(2, 1) - 2) + 0.5 * (lse(2, 0) - 2)
MSE_PART = ((1.0 - 1.0) ** 2 + (R2 - 0.2) ** 2) / 2


def test_combo_mixes_bsc_and_mse() -> None:
    got = combo_loss_from_embeddings(
        t(Q), t(D), t([1.0, 0.2]), mu=0.25, threshold=0.5, normalization="none", temperature=1.0
    )
    assert got.item() == pytest.approx(0.25 * BSC_PART + 0.75 * MSE_PART, rel=1e-5)


def test_combo_extremes_are_the_two_losses() -> None:
    def combo(mu: float) -> float:
        labels = t([1.0, 0.2])
        return combo_loss_from_embeddings(
            t(Q), t(D), labels, mu=mu, threshold=0.5, normalization="none", temperature=1.0
        ).item()

    only_bsc, only_mse = combo(1.0), combo(0.0)
    assert only_bsc == pytest.approx(BSC_PART) and only_mse == pytest.approx(MSE_PART, rel=1e-5)


def test_combo_module_maps_sts_scores() -> None:
    # STS-b style: scores 0-5 -> [0, 1], binarized at t = 0.5 for BSC, used as is for the MSE target.
    loss = ComboLoss(
        EmbeddingModel(), mu=0.25, threshold=0.5, label_max=5.0, normalization="none", temperature=1.0
    )
    got = loss([column(Q), column(D)], t([5.0, 1.0])).item()
    assert got == pytest.approx(0.25 * BSC_PART + 0.75 * MSE_PART, rel=1e-5)
    config = loss.get_config_dict()
    assert config["mu"] == 0.25 and config["label_max"] == 5.0 and config["threshold"] == 0.5


def test_combo_trainable_temperature_and_validation() -> None:
    loss = ComboLoss(EmbeddingModel(), trainable_temperature=True)
    value = loss([column(Q), column(D)], t([1.0, 1.0]))
    value.backward()
    assert loss.log_temperature is not None and loss.log_temperature.grad is not None
    with pytest.raises(ValueError, match="mu"):
        ComboLoss(EmbeddingModel(), mu=1.5)
    with pytest.raises(ValueError, match="label_max"):
        ComboLoss(EmbeddingModel(), label_min=1.0, label_max=1.0)
