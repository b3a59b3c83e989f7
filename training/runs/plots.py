"""The training-curves PNG of a run: training loss per step and the dev metric per epoch."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any


def plot_training_curves(
    path: Path,
    step_losses: Mapping[int, Sequence[tuple[int, float]]],
    epochs: Sequence[dict[str, Any]],
    metric: str,
    title: str = "",
    best: dict[str, Any] | None = None,
) -> Path:
    """Write a two-panel PNG: loss by step (per seed run) and the dev metric by epoch (per seed run).

    `step_losses` maps a seed-run index to (global step, loss) points; `epochs` are metrics.json's
    history records with `seed_run`, `epoch_index` and `dev_metric`; `best` (starred) is the kept one.
    """
    import matplotlib

    matplotlib.use("Agg")  # no display on servers and in tests
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    fig, (ax_loss, ax_dev) = plt.subplots(1, 2, figsize=(11, 4))
    for run, points in sorted(step_losses.items()):
        if points:
            steps, losses = zip(*points, strict=True)
            ax_loss.plot(steps, losses, lw=0.8, alpha=0.4, label=f"seed run {run} (step)")
            ax_loss.plot(*_smooth(steps, losses), lw=1.6, label=f"seed run {run} (moving avg)")
    ax_loss.set_xlabel("optimizer step")
    ax_loss.set_ylabel("training loss")
    ax_loss.set_title("training loss")
    ax_loss.grid(alpha=0.3)
    runs = sorted({int(e["seed_run"]) for e in epochs})
    for run in runs:
        points = [(e["epoch_index"], e["dev_metric"]) for e in epochs if e["seed_run"] == run]
        points = [p for p in points if p[1] is not None]
        if points:
            xs, ys = zip(*points, strict=True)
            ax_dev.plot(xs, ys, marker="o", label=f"seed run {run}")
    if best is not None and best.get("dev_metric") is not None:
        ax_dev.plot(
            [best["epoch_index"]],
            [best["dev_metric"]],
            marker="*",
            ms=16,
            color="gold",
            markeredgecolor="black",
            ls="none",
            label="kept checkpoint",
            zorder=5,
        )
    stage_ends = sorted({e["epoch_index"] for e in epochs if e.get("stage_end")})
    for x in stage_ends[:-1]:
        ax_dev.axvline(x + 0.5, color="grey", ls=":", lw=1)
    ax_dev.set_xlabel("epoch (0 = before training)")
    ax_dev.xaxis.set_major_locator(MaxNLocator(integer=True))  # epochs are whole numbers
    ax_dev.set_ylabel(f"dev {metric}")
    ax_dev.set_title(f"dev {metric}")
    ax_dev.grid(alpha=0.3)
    for ax in (ax_loss, ax_dev):
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _smooth(xs: Sequence[int], ys: Sequence[float], window: int = 10) -> tuple[list[int], list[float]]:
    """Trailing moving average, so the trend is readable through per-batch noise."""
    out: list[float] = []
    total = 0.0
    for i, y in enumerate(ys):
        total += y
        if i >= window:
            total -= ys[i - window]
        out.append(total / min(i + 1, window))
    return list(xs), out
