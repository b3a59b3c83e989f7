"""The state of one training job: the best checkpoint so far and the per-epoch bookkeeping shared by
the trainer, its stages and the run summary (a module of its own so none of them imports another)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import torch

from pairank import train_events
from training import distributed as D
from training.config import TrainConfig
from training.evaluators import DevEvaluator
from training.runs.folder import EventWriter, RunFolder


@dataclass
class Best:
    """The best checkpoint so far: its dev score, history record and weights (CPU copies)."""

    score: float = float("-inf")
    record: dict[str, Any] | None = None
    state: dict[str, torch.Tensor] | None = None

    def offer(self, score: float | None, record: dict[str, Any], model: torch.nn.Module) -> bool:
        """Keep the model's weights if `score` beats the best (ties keep the earlier); None always wins."""
        if score is not None and not score > self.score:
            return False
        self.score = float("-inf") if score is None else score
        self.record = record
        self.state = {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}
        return True


@dataclass
class RunState:
    """Shared state of a training job (all seed runs), and the bookkeeping after each epoch."""

    config: TrainConfig
    run: RunFolder | None
    events: EventWriter
    dist: D.DistInfo
    device: torch.device
    evaluator: DevEvaluator | None
    history: list[dict[str, Any]] = field(default_factory=list)
    step_losses: dict[int, list[tuple[int, float]]] = field(default_factory=dict)
    best: Best = field(default_factory=Best)
    best_by_run: dict[int, Best] = field(default_factory=dict)  # where a stage with `init: best` restarts
    total_steps: int = 0
    done_steps: int = 0
    base_metrics: dict[str, float] | None = None
    base_key: str = ""  # the untrained weights' key into training/base_vectors.py ("": none kept)

    def emit(self, event: str, **fields: Any) -> None:
        """A progress event (rank 0 only) with the overall fraction of optimizer steps done."""
        if self.dist.is_main:
            self.events.emit(event, **fields, progress=round(self.done_steps / max(1, self.total_steps), 4))

    def evaluate(self, model: Any, encode: Any = None) -> tuple[dict[str, float] | None, float | None, float]:
        """Score the dev set on rank 0 and share it with every rank: (metrics, primary value, seconds).
        `encode`: the model's encoder where it is not the plain one (the base model's kept vectors)."""
        if self.evaluator is None:
            return None, None, 0.0
        started = time.perf_counter()
        metrics = self.evaluator(model, encode=encode) if self.dist.is_main else None
        metrics = D.broadcast_object(metrics)
        model.train()
        assert metrics is not None
        return metrics, float(metrics[str(self.evaluator.primary_metric)]), time.perf_counter() - started

    def finish_epoch(self, record: dict[str, Any], model: Any) -> None:
        """Offer the checkpoint to the run's and the job's bests, log the epoch, rewrite metrics.json."""
        # keep: last offers every epoch unscored (None always wins): the weights are the last epoch's,
        # never chosen on the dev set (cross-validation's held-out fold must not pick its own model).
        score = record["dev_metric"] if self.config.keep == "best" else None
        # keep: best never offers an epoch the dev set did not score (eval_epochs: last).
        unscored = self.config.keep == "best" and self.evaluator is not None and score is None
        if (record["stage"] >= 0 or self.config.select_base) and not unscored:
            self.best_by_run[record["seed_run"]].offer(score, record, model)
            record["is_best"] = self.best.offer(score, record, model)
        else:
            record["is_best"] = False
        self.history.append(record)
        keys = ("seed_run", "stage", "epoch", "step", "train_loss", "dev_metric", "is_best")
        self.emit(train_events.EPOCH_END, **{k: record[k] for k in keys}, metric=self.config.dev.metric)
        if self.run is not None:
            self.run.write_metrics(self.metrics_doc())

    def metrics_doc(self) -> dict[str, Any]:
        """metrics.json: the selection metric, the base model's scores, the best epoch and every epoch."""
        return {
            "primary_metric": self.config.dev.metric,
            "base_model_dev": self.base_metrics,
            "best": self.best.record,
            "history": self.history,
        }
