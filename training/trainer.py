"""The trainer: seed runs x stages x epochs, dev evaluation after every epoch, best checkpoint kept.

`train(config)` is the whole job: it loads the base model and the pairs, trains every stage
(sequential training) with its loss from `training.losses` and its batch order from
`training.shuffling` (re-ordered every epoch, batches are consecutive slices), scores the dev set
after every epoch, keeps the best checkpoint over all seed runs and writes the run folder.
"""

from __future__ import annotations

import copy
import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from pairank.models import load_sentence_transformer, pick_device, resolve_model
from training import distributed as D
from training.config import StageConfig, TrainConfig, config_to_dict, resolve_paths
from training.data import PairSet, load_train_pairs, sample_negatives, split_by_query
from training.evaluators import DevEvaluator, build_dev_evaluator, model_encoder
from training.loop import StepContext, resolve_amp, train_epoch
from training.losses import build_loss
from training.optim import AdamW, build_scheduler, param_groups
from training.run_folder import EventWriter, RunFolder, default_run_dir, utc_timestamp
from training.run_summary import finish_run
from training.shuffling import build_batch_order


@dataclass
class Best:
    """The best checkpoint so far: its dev score, history record and weights (CPU copies)."""

    score: float = float("-inf")
    record: dict[str, Any] | None = None
    state: dict[str, torch.Tensor] | None = None

    def offer(self, score: float | None, record: dict[str, Any], model: torch.nn.Module) -> bool:
        """Keep the model's weights if `score` beats the best; None (no dev set) always replaces."""
        if score is not None and not score > self.score:
            return False
        self.score = float("-inf") if score is None else score
        self.record = record
        self.state = {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}
        return True


@dataclass
class RunState:
    """Shared state of a training job (all seed runs)."""

    config: TrainConfig
    run: RunFolder | None
    events: EventWriter
    dist: D.DistInfo
    device: torch.device
    evaluator: DevEvaluator | None
    history: list[dict[str, Any]] = field(default_factory=list)
    step_losses: dict[int, list[tuple[int, float]]] = field(default_factory=dict)
    best: Best = field(default_factory=Best)
    best_by_run: dict[int, Best] = field(default_factory=dict)  # per seed run: where `init: best` restarts
    total_steps: int = 0
    done_steps: int = 0
    base_metrics: dict[str, float] | None = None


def set_seed(seed: int) -> None:
    """Seed Python, NumPy and torch (all devices)."""
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def _steps_per_epoch(n_pairs: int, batch_size: int, world_size: int) -> int:
    """Optimizer steps in one epoch (DDP drops a final batch smaller than the world)."""
    full, rest = divmod(n_pairs, batch_size)
    return full + (1 if rest and rest >= world_size else 0)


def _evaluate(state: RunState, model: Any) -> tuple[dict[str, float] | None, float | None, float]:
    """Score the dev set on rank 0 and share the primary metric with every rank."""
    if state.evaluator is None:
        return None, None, 0.0
    started = time.perf_counter()
    metrics = state.evaluator(model) if state.dist.is_main else None
    metrics = D.broadcast_object(metrics)
    model.train()
    assert metrics is not None
    return metrics, float(metrics[_primary(state)]), time.perf_counter() - started


def _primary(state: RunState) -> str:
    """Key of the selection metric in the evaluator's metrics dict."""
    return str(state.evaluator.primary_metric) if state.evaluator else ""


def _build_loss(stage: StageConfig, model: Any, dist: D.DistInfo) -> torch.nn.Module:
    """The stage's loss; with several GPUs its model is the all-gathering wrapper (global negatives)."""
    target = D.GatheredEmbeddings(model, model, dist.rank, dist.world_size) if dist.enabled else model
    return build_loss(stage.loss, target, **stage.loss_params)


def _train_stage(state: RunState, model: Any, pairs: PairSet, seed_run: int, seed: int, s: int) -> None:
    """Train one stage for its epochs, evaluating after each and offering checkpoints to the bests."""
    cfg = state.config
    stage = cfg.stages[s]
    loss_fn = _build_loss(stage, model, state.dist).to(state.device)
    extra = list(getattr(loss_fn, "extra_parameters", lambda: [])())
    temps = list(getattr(loss_fn, "temperature_parameters", lambda: [])())
    groups = param_groups(model, stage.lr, stage.weight_decay, extra, temps, stage.temperature_lr)
    optimizer = AdamW(
        groups,
        lr=stage.lr,
        betas=(stage.betas[0], stage.betas[1]),
        eps=stage.eps,
        bias_correction=stage.bias_correction,
    )
    per_epoch = _steps_per_epoch(len(pairs), stage.batch_size, state.dist.world_size)
    scheduler = build_scheduler(optimizer, per_epoch * stage.epochs, stage.warmup_ratio)
    amp = resolve_amp(cfg.amp, state.device)
    ctx = StepContext(
        model,
        loss_fn,
        optimizer,
        scheduler,
        torch.amp.GradScaler(state.device.type, enabled=amp.use_scaler),
        amp,
        state.device,
        state.dist,
        stage.max_grad_norm,
        [p for g in groups for p in g["params"]],
    )
    orderer = build_batch_order(stage.shuffle, **stage.shuffle_params)
    encode = model_encoder(model, cfg.dev.encode_batch_size)
    losses = state.step_losses.setdefault(seed_run, [])
    run_best = state.best_by_run[seed_run]
    for epoch in range(1, stage.epochs + 1):
        started = time.perf_counter()
        order = None
        if state.dist.is_main:
            order = orderer.order(
                pairs.firsts,
                pairs.seconds,
                batch_size=stage.batch_size,
                epoch=epoch - 1,
                seed=seed,
                encode=encode if orderer.needs_encoder else None,
            )
        order = np.asarray(D.broadcast_object(order), dtype=np.int64)
        shuffle_seconds = time.perf_counter() - started

        def on_step(step: int, loss: float, lr: float, epoch: int = epoch) -> None:
            state.done_steps += 1
            if state.dist.is_main and (step % max(1, cfg.log_every) == 0 or step == 1):
                state.events.emit(
                    "step",
                    seed_run=seed_run,
                    stage=s,
                    epoch=epoch,
                    step=step,
                    loss=round(loss, 6),
                    lr=lr,
                    progress=round(state.done_steps / max(1, state.total_steps), 4),
                )

        first_step = losses[-1][0] if losses else 0
        stats = train_epoch(
            ctx,
            pairs,
            order,
            stage.batch_size,
            first_step,
            on_step,
            f"seed {seed_run} {stage.name} epoch {epoch}/{stage.epochs}",
            cfg.progress_bar,
        )
        losses.extend(stats.losses)
        metrics, score, eval_seconds = _evaluate(state, model)
        record = {
            "seed_run": seed_run,
            "seed": seed,
            "stage": s,
            "stage_name": stage.name,
            "loss": stage.loss,
            "epoch": epoch,
            "epoch_index": len([h for h in state.history if h["seed_run"] == seed_run]),
            "step": stats.losses[-1][0] if stats.losses else first_step,
            "train_loss": stats.mean_loss,
            "dev_metric": score,
            "dev": metrics,
            "train_seconds": round(stats.seconds, 3),
            "shuffle_seconds": round(shuffle_seconds, 3),
            "eval_seconds": round(eval_seconds, 3),
            "stage_end": epoch == stage.epochs,
        }
        temperature = getattr(loss_fn, "temperature", None)
        if torch.is_tensor(temperature):
            record["temperature"] = float(temperature.detach())
        run_best.offer(score, record, model)
        record["is_best"] = state.best.offer(score, record, model)
        state.history.append(record)
        if state.dist.is_main:
            state.events.emit(
                "epoch_end",
                seed_run=seed_run,
                stage=s,
                epoch=epoch,
                step=record["step"],
                train_loss=stats.mean_loss,
                dev_metric=score,
                metric=cfg.dev.metric,
                is_best=record["is_best"],
                progress=round(state.done_steps / max(1, state.total_steps), 4),
            )
            if state.run is not None:
                state.run.write_metrics(_metrics_doc(state))


def _metrics_doc(state: RunState) -> dict[str, Any]:
    """metrics.json: the primary metric, the zero-shot scores and one record per epoch."""
    return {
        "primary_metric": state.config.dev.metric,
        "base_model_dev": state.base_metrics,
        "best": state.best.record,
        "history": state.history,
    }


def _seed_run(state: RunState, spec: Any, pairs: PairSet, seed_run: int) -> None:
    """Train every stage from a fresh copy of the base model with seed `config.seed + seed_run`."""
    cfg = state.config
    seed = cfg.seed + seed_run
    set_seed(seed)
    model = load_sentence_transformer(spec, device=str(state.device))
    if cfg.max_seq_length:
        model.max_seq_length = cfg.max_seq_length
    state.best_by_run[seed_run] = Best()
    if cfg.eval_before_training and state.evaluator is not None:
        if state.base_metrics is None:  # every seed run starts from the same weights: score them once
            state.base_metrics, _, _ = _evaluate(state, model)
            if state.dist.is_main:
                score = state.base_metrics[_primary(state)] if state.base_metrics else None
                state.events.emit(
                    "epoch_end",
                    seed_run=seed_run,
                    stage=-1,
                    epoch=0,
                    step=0,
                    train_loss=None,
                    dev_metric=score,
                    metric=cfg.dev.metric,
                    is_best=False,
                    progress=0.0,
                )
        score = state.base_metrics[_primary(state)] if state.base_metrics else None
        base_record = {
            "seed_run": seed_run,
            "seed": seed,
            "stage": -1,
            "stage_name": "base",
            "loss": None,
            "epoch": 0,
            "epoch_index": 0,
            "step": 0,
            "train_loss": None,
            "dev_metric": score,
            "dev": state.base_metrics,
            "stage_end": False,
            "is_best": False,
        }
        if cfg.select_base:
            base_record["is_best"] = state.best.offer(score, base_record, model)
        state.history.append(base_record)
    for s, stage in enumerate(cfg.stages):
        run_best = state.best_by_run[seed_run]
        if s > 0 and stage.init == "best" and run_best.state is not None:
            model.load_state_dict(run_best.state)
        _train_stage(state, model, pairs, seed_run, seed, s)
    del model


def train(
    config: TrainConfig, output: Path | None = None, events: EventWriter | None = None
) -> dict[str, Any]:
    """Run a whole training job; returns the manifest (rank 0) after writing the run folder."""
    config = resolve_paths(config)
    dist = D.init_from_env(config.device)
    events = events or EventWriter(enabled=dist.is_main)
    try:
        return _train(config, output, events, dist)
    except BaseException as error:
        if dist.is_main:
            events.emit("error", message=f"{type(error).__name__}: {error}")
        raise
    finally:
        D.shutdown()


def _train(config: TrainConfig, output: Path | None, events: EventWriter, dist: D.DistInfo) -> dict[str, Any]:
    if config.seeds > 1 and config.dev.kind == "none":
        raise ValueError("seed search (seeds > 1) needs a dev set to pick the best run")
    if dist.enabled and torch.cuda.is_available() and config.device in {"auto", "cuda"}:
        device = torch.device(f"cuda:{dist.local_rank}")
    else:
        device = torch.device(pick_device(None if config.device == "auto" else config.device))
    timestamp = utc_timestamp()
    run = RunFolder(output or default_run_dir(config.name, timestamp)) if dist.is_main else None
    if run is not None:
        run.prepare()
        run.write_config(config_to_dict(config))
    if run is not None and events.log_path is None:
        events.log_path = run.root / "events.jsonl"
    spec = resolve_model(config.base_model)
    pairs = load_train_pairs(config.data)
    held_out = None
    if config.dev.kind == "split":
        pairs, held_out = split_by_query(pairs, config.dev.fraction, config.seed)
    if config.data.negatives is not None:
        base = load_sentence_transformer(spec, device=str(device))
        if config.max_seq_length:
            base.max_seq_length = config.max_seq_length
        pairs = sample_negatives(
            pairs, config.data.negatives, model_encoder(base, config.dev.encode_batch_size)
        )
        del base
    evaluator = build_dev_evaluator(config.dev, held_out)
    state = RunState(config, run, events, dist, device, evaluator)
    state.total_steps = config.seeds * sum(
        _steps_per_epoch(len(pairs), s.batch_size, dist.world_size) * s.epochs for s in config.stages
    )
    events.emit(
        "start",
        run_dir=str(run.root) if run else None,
        config=config.name,
        base_model=spec.model_id,
        device=str(device),
        world_size=dist.world_size,
        train_pairs=len(pairs),
        dev_size=evaluator.size if evaluator else 0,
        total_steps=state.total_steps,
        seeds=config.seeds,
        epochs=sum(s.epochs for s in config.stages),
        metric=config.dev.metric,
    )
    started = time.perf_counter()
    for seed_run in range(config.seeds):
        _seed_run(state, spec, pairs, seed_run)
    if run is None:  # other ranks are done once every step has run
        return {}
    return finish_run(
        state,
        spec,
        run,
        timestamp,
        len(pairs),
        time.perf_counter() - started,
        _metrics_doc(state),
        copy.deepcopy(config),
    )
