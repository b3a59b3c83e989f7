"""A retraining job's curve: every epoch, step losses thinned evenly to a bound, the last always kept."""

from __future__ import annotations

from app.control.retraining.curve import TrainingCurve


def test_the_curve_keeps_epochs_and_thins_steps() -> None:
    curve = TrainingCurve(max_points=10)
    assert curve.progress() == {}
    for step in range(1, 101):
        curve.add({"event": "step", "epoch": 1 + (step > 50), "step": step, "loss": 1.0 / step})
        if step in (50, 100):
            curve.add({"event": "epoch_end", "epoch": step // 50, "step": step, "train_loss": 0.5,
                       "dev_metric": 0.9, "metric": "MRR"})  # fmt: skip
    curve.add({"event": "start", "total_steps": 100})  # not a point
    curve.add({"event": "step", "epoch": 2, "step": 101, "loss": None})  # a step without a loss: skipped
    shown = curve.progress()["curve"]
    assert [e["epoch"] for e in shown["epochs"]] == [1, 2] and [e["x"] for e in shown["epochs"]] == [50, 100]
    steps = shown["steps"]
    assert len(steps) == 10 and steps[0]["step"] == 1 and steps[-1]["step"] == 100
    assert [s["x"] for s in steps] == sorted(s["x"] for s in steps)
    assert len(curve.steps) == 100  # the whole history stays; only what is shown is thinned


def test_a_later_run_continues_the_step_axis() -> None:
    curve = TrainingCurve()
    curve.add({"event": "epoch_end", "epoch": 0, "step": 0, "dev_metric": 0.5})  # the base model
    for step in (1, 10, 20):
        curve.add({"event": "step", "epoch": 1, "step": step, "loss": 1.0})
    curve.add({"event": "epoch_end", "epoch": 1, "step": 20, "train_loss": 0.9})
    for step in (1, 10):  # a second stage counts from 1 again
        curve.add({"event": "step", "epoch": 1, "step": step, "loss": 0.5})
    shown = curve.progress()["curve"]
    assert [p["x"] for p in shown["steps"]] == [1, 10, 20, 21, 30]
    assert [e["x"] for e in shown["epochs"]] == [0, 20]
