"""Pictures of a match calibration: predicted against observed probability (reliability), and each
decision's precision and coverage as its threshold moves, with the chosen thresholds marked."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from evaluation.decisions import Thresholds
from evaluation.open_world import Outcome, rates


def threshold_curves(
    found: Sequence[Outcome], absent_share: float, min_words: int, points: int = 41
) -> dict[str, list[float | None]]:
    """Match precision and coverage for auto-match thresholds from 0 to 1, and new precision and
    coverage for `new` thresholds over the same range."""
    grid = np.linspace(0.0, 1.0, points)
    names = ("match_precision", "match_coverage", "new_precision", "new_coverage")
    curves: dict[str, list[float | None]] = {"threshold": grid.tolist(), **{name: [] for name in names}}
    for cut in grid:
        as_match = rates(found, Thresholds(float(cut), 0.0), absent_share, min_words)
        as_new = rates(found, Thresholds(1.1, float(cut)), absent_share, min_words)
        curves["match_precision"].append(as_match.match_precision)
        curves["match_coverage"].append(as_match.match_coverage)
        curves["new_precision"].append(as_new.new_precision)
        curves["new_coverage"].append(as_new.new_coverage)
    return curves


def calibration_figure(
    reliability: Sequence[Mapping[str, float]],
    curves: Mapping[str, Sequence[float | None]],
    thresholds: Mapping[str, float],
    title: str,
) -> bytes:
    """Both panels as PNG bytes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (left, right) = plt.subplots(1, 2, figsize=(10, 4), dpi=100)
    left.plot([0, 1], [0, 1], color="#bbbbbb", linestyle="--", label="perfectly calibrated")
    left.plot([b["predicted"] for b in reliability], [b["observed"] for b in reliability], marker="o",
              label="best candidate")  # fmt: skip
    left.set(xlabel="predicted probability of a right match", ylabel="observed rate", xlim=(0, 1),
             ylim=(0, 1), title="reliability (forward, both worlds)")  # fmt: skip
    left.legend(loc="upper left")
    grid: Any = curves["threshold"]
    for name, style in (("match_precision", "-"), ("match_coverage", ":"), ("new_precision", "-"),
                        ("new_coverage", ":")):  # fmt: skip
        values = [np.nan if v is None else v for v in curves[name]]
        color = "#2a7ab0" if name.startswith("match") else "#c0504d"
        right.plot(grid, values, style, color=color, label=name.replace("_", " "))
    for name, color in (("match", "#2a7ab0"), ("new", "#c0504d")):
        if 0.0 <= thresholds[name] <= 1.0:
            right.axvline(thresholds[name], color=color, alpha=0.4)
    right.set(xlabel="threshold on the best candidate's probability", ylim=(0, 1.02), xlim=(0, 1),
              title="precision and coverage by threshold")  # fmt: skip
    right.legend(loc="lower center", fontsize=8)
    figure.suptitle(title)
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    plt.close(figure)
    return buffer.getvalue()
