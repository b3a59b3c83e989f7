"""The training process's progress events: one JSON object per line on stdout.

The trainer (`training/`) writes them and the service's retraining job (`app/`) reads them; both import
the names from here so that neither side can rename a key the other relies on. training/README.md
("Events") describes the fields of each event.
"""

from __future__ import annotations

EVENT = "event"  # the key naming the event
START = "start"  # run_dir, config, base_model, device, world_size, train_pairs, dev_size, total_steps, ...
STEP = "step"  # seed_run, stage, epoch, step, loss, lr, progress
EPOCH_END = "epoch_end"  # seed_run, stage, epoch, step, train_loss, dev_metric, is_best, metric, progress
DONE = "done"  # run_dir, model_id, manifest, best_epoch, dev_metric, metric, weights_sha256
ERROR = "error"  # message
CV_FOLD = "cv_fold"  # cross-validation: a fold model starts (fold, folds, seed, point, run, runs)

# What a job keeps as its progress from any event (each when present).
PROGRESS_KEYS = (
    EVENT, "epoch", "step", "total_steps", "progress", "loss", "dev_metric", "metric",
    "fold", "folds", "run", "runs",
)  # fmt: skip
