"""The loss and dev-metric history of a retraining job, kept in its progress for live curves.

The training process reports each logged step's loss and each epoch's train loss and dev metric
(pairank/train_events.py); the job's progress only holds the latest event, so a client polling
`GET /admin/jobs/{id}` could not draw a curve. This keeps the history and hands out a copy of at most
`max_points` step points (evenly thinned; the last point always kept) and every epoch, each at `x`, its
training step counted over the whole job (a later run or stage continues the axis).
"""

from __future__ import annotations

from typing import Any

from pairank import train_events


class TrainingCurve:
    """Step losses and epoch results in the order the training process reported them."""

    def __init__(self, max_points: int = 200) -> None:
        self.max_points = max_points
        self.steps: list[dict[str, Any]] = []
        self.epochs: list[dict[str, Any]] = []
        self._offset = 0  # steps of the runs before this one (a new run or stage counts from 1 again)
        self._last = 0

    def _x(self, step: Any) -> int:
        """The step on one axis for the whole job: steps of a later run or stage follow the earlier ones."""
        if not isinstance(step, int):
            return self._offset + self._last
        if step < self._last:
            self._offset += self._last
        self._last = step
        return self._offset + step

    def add(self, event: dict[str, Any]) -> None:
        """Record a step's loss or an epoch's results; other events are not part of the curve."""
        kind = event.get(train_events.EVENT)
        if kind == train_events.STEP and isinstance(event.get("loss"), int | float):
            self.steps.append(
                {
                    "x": self._x(event.get("step")),
                    "epoch": event.get("epoch"),
                    "step": event.get("step"),
                    "loss": float(event["loss"]),
                }  # fmt: skip
            )
        elif kind == train_events.EPOCH_END:
            self.epochs.append(
                {
                    "x": self._x(event.get("step")),
                    "epoch": event.get("epoch"),
                    "train_loss": event.get("train_loss"),
                    "dev_metric": event.get("dev_metric"),
                    "metric": event.get("metric"),
                }  # fmt: skip
            )

    def progress(self) -> dict[str, Any]:
        """`{"curve": {"steps": [...], "epochs": [...]}}` to merge into the job's progress (empty before
        the first point)."""
        if not self.steps and not self.epochs:
            return {}
        steps = self.steps
        if len(steps) > self.max_points:
            stride = len(steps) / (self.max_points - 1)
            steps = [steps[int(i * stride)] for i in range(self.max_points - 1)] + [steps[-1]]
        return {"curve": {"steps": steps, "epochs": list(self.epochs)}}
