"""The end of a run: save the best model, draw the curves, write metrics.json and, last, the manifest."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pairank import train_events
from pairank.models import ModelSpec, file_sha256, folder_weights_sha256, load_sentence_transformer
from training.config import TrainConfig
from training.regularize import interpolate_state
from training.runs.folder import MODEL_DIR, RunFolder, dump_json
from training.runs.plots import plot_training_curves

if TYPE_CHECKING:
    from training.runs.state import RunState


def model_id_for(config_name: str, timestamp: str) -> str:
    """The fine-tuned model's name: `pairank-<config>-<timestamp>`."""
    return f"pairank-{config_name}-{timestamp}"


def _data_summary(config: TrainConfig, n_pairs: int, dev_size: int) -> dict[str, Any]:
    """Where the pairs came from (with the train file's hash) and what the dev set was."""
    train = Path(config.data.train_pairs)
    return {
        "train_pairs": str(train),
        "train_pairs_sha256": file_sha256(train) if train.is_file() else None,
        "train_examples": n_pairs,
        "label_range": config.data.label_range,
        "negatives": dataclasses.asdict(config.data.negatives) if config.data.negatives else None,
        "dev": {
            "kind": config.dev.kind,
            "path": config.dev.path,
            "split": config.dev.split,
            "task": config.dev.task,
            "metric": config.dev.metric,
            "size": dev_size,
        },
    }


def _loss_summary(config: TrainConfig) -> dict[str, Any]:
    """The loss of each stage; `name` joins them (`bsc+mse` for sequential training)."""
    return {
        "name": "+".join(stage.loss for stage in config.stages),
        "stages": [{"stage": s.name, "loss": s.loss, "params": s.loss_params} for s in config.stages],
    }


def _settings(config: TrainConfig, state: RunState) -> dict[str, Any]:
    """Optimisation settings that shaped the model."""
    keys = (
        "epochs",
        "lr",
        "batch_size",
        "warmup_ratio",
        "weight_decay",
        "bias_correction",
        "temperature_lr",
        "shuffle",
        "shuffle_params",
        "init",
        "max_grad_norm",
    )
    return {
        "max_seq_length": config.max_seq_length,
        "seed": config.seed,
        "seeds": config.seeds,
        "amp": config.amp,
        "device": str(state.device),
        "world_size": state.dist.world_size,
        "stages": [{k: getattr(stage, k) for k in keys} for stage in config.stages],
    }


def finish_run(
    state: RunState,
    spec: ModelSpec,
    run: RunFolder,
    timestamp: str,
    n_pairs: int,
    seconds: float,
    config: TrainConfig,
) -> dict[str, Any]:
    """Save the best checkpoint as `model/`, write metrics.json and the plot, then manifest.json (last)."""
    best = state.best
    if best.state is None or best.record is None:
        raise RuntimeError("no checkpoint to save: every dev score was missing or not a number")
    model_id = model_id_for(config.name, timestamp)
    model = load_sentence_transformer(spec, device="cpu")
    if config.max_seq_length:
        model.max_seq_length = config.max_seq_length
    # WiSE-FT: the weights saved lie between the base model's (just loaded) and the fine-tuned ones.
    weights = best.state
    if config.wise_ft is not None:
        weights = interpolate_state(model.state_dict(), best.state, config.wise_ft)
    model.load_state_dict(weights)

    def save(path: str) -> None:
        model.save(path)
        # Lets `resolve_model` name the model even when model/ is copied out of its run folder.
        info = {"model_id": model_id, "base_model": spec.model_id, "base_model_version": spec.version}
        (Path(path) / "pairank_model.json").write_text(json.dumps(info, indent=2) + "\n")

    run.save_model(save)
    run.write_metrics(state.metrics_doc())
    plot_training_curves(
        run.root / "training_curves.png",
        state.step_losses,
        state.history,
        config.dev.metric if state.evaluator else "(no dev set)",
        title=f"{config.name}: {_loss_summary(config)['name']} on {spec.model_id}",
        best=best.record,
    )
    record = best.record
    manifest = {
        "model_id": model_id,
        "model_path": MODEL_DIR,
        "base_model": spec.model_id,
        "base_model_version": spec.version,
        "config": config.name,
        "data": _data_summary(config, n_pairs, state.evaluator.size if state.evaluator else 0),
        "loss": _loss_summary(config),
        "settings": _settings(config, state),
        "dev_metric": config.dev.metric if state.evaluator else None,
        "dev_metrics": record.get("dev"),
        "base_dev_metrics": state.base_metrics,
        "best_epoch": record["epoch_index"],
        "best": {
            k: record.get(k) for k in ("seed_run", "seed", "stage", "stage_name", "epoch", "dev_metric")
        },
        "weights_sha256": folder_weights_sha256(run.model_dir),
        "training_seconds": round(seconds, 1),
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    run.write_manifest(manifest)
    state.events.emit(
        train_events.DONE,
        run_dir=str(run.root),
        model_id=model_id,
        manifest=str(run.manifest_path),
        best_epoch=manifest["best_epoch"],
        dev_metric=record.get("dev_metric"),
        metric=manifest["dev_metric"],
        weights_sha256=manifest["weights_sha256"],
    )
    return manifest


__all__ = ["dump_json", "finish_run", "model_id_for"]
