"""One training stage: its loss, optimiser, schedule and batch order, and the epoch loop around them."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from evaluation.datasets import read_texts
from pairank import train_events
from training import distributed as D
from training.base_vectors import base_encoder
from training.config import StageConfig
from training.data import PairSet
from training.evaluators import model_encoder
from training.hard_negatives import mine_hard_negatives
from training.loop import StepContext, resolve_amp, train_epoch
from training.losses import build_loss
from training.optim import AdamW, build_scheduler, param_groups
from training.regularize import freeze_lower_layers
from training.shuffling import build_batch_order

if TYPE_CHECKING:
    from training.runs.state import RunState


def steps_per_epoch(n_pairs: int, batch_size: int, world_size: int) -> int:
    """Optimizer steps in one epoch (multi-GPU drops a final batch smaller than the world)."""
    full, rest = divmod(n_pairs, batch_size)
    return full + (1 if rest and rest >= world_size else 0)


def build_stage_loss(stage: StageConfig, model: Any, dist: D.DistInfo) -> torch.nn.Module:
    """The stage's loss; with several GPUs its model is the all-gathering wrapper (global negatives)."""
    target = D.GatheredEmbeddings(model, model, dist.rank, dist.world_size) if dist.enabled else model
    return build_loss(stage.loss, target, **stage.loss_params)


def step_context(state: RunState, stage: StageConfig, model: Any, n_pairs: int) -> StepContext:
    """Loss, AdamW (its own group for a trainable temperature), warm-up schedule and AMP for a stage."""
    freeze_lower_layers(model, stage.freeze_layers)  # before the optimizer: it takes trainable ones only
    loss_fn = build_stage_loss(stage, model, state.dist).to(state.device)
    extra = list(getattr(loss_fn, "extra_parameters", list)())
    temperatures = list(getattr(loss_fn, "temperature_parameters", list)())
    groups = param_groups(model, stage.lr, stage.weight_decay, extra, temperatures, stage.temperature_lr)
    betas = (float(stage.betas[0]), float(stage.betas[1]))
    optimizer = AdamW(groups, lr=stage.lr, betas=betas, eps=stage.eps, bias_correction=stage.bias_correction)
    total = steps_per_epoch(n_pairs, stage.batch_size, state.dist.world_size) * stage.epochs
    amp = resolve_amp(state.config.amp, state.device)
    return StepContext(
        model=model,
        loss_fn=loss_fn,
        optimizer=optimizer,
        scheduler=build_scheduler(optimizer, total, stage.warmup_ratio),
        scaler=torch.amp.GradScaler(state.device.type, enabled=amp.use_scaler),
        amp=amp,
        device=state.device,
        dist=state.dist,
        max_grad_norm=stage.max_grad_norm,
        parameters=[p for g in groups for p in g["params"]],
    )


def train_stage(state: RunState, model: Any, pairs: PairSet, seed_run: int, seed: int, s: int) -> None:
    """Train stage `s` for its epochs; after each, score the dev set and offer the checkpoint."""
    cfg, stage = state.config, state.config.stages[s]
    ctx = step_context(state, stage, model, len(pairs))
    orderer = build_batch_order(stage.shuffle, **stage.shuffle_params)
    encode = model_encoder(model, cfg.dev.encode_batch_size)
    losses = state.step_losses.setdefault(seed_run, [])
    hard = stage.hard_negatives
    extra_pool = list(read_texts(Path(hard.corpus), with_title=True).values()) if hard and hard.corpus else []
    for epoch in range(1, stage.epochs + 1):
        mining_started = time.perf_counter()
        if hard is not None and (hard.remine == "epoch" or epoch == 1):
            # Rank 0 mines with the model as it is now; every rank trains on the same negatives.
            # Before stage 0's first step the model is the base one: its kept vectors serve.
            miner = base_encoder(encode, state.base_key) if s == 0 and epoch == 1 else encode
            mined = (
                mine_hard_negatives(pairs, miner, hard, seed + epoch, extra_pool)
                if state.dist.is_main
                else None
            )
            pairs = replace(pairs, negatives=D.broadcast_object(mined))
        mining_seconds = time.perf_counter() - mining_started
        started = time.perf_counter()
        if state.device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(state.device)
        order = None
        if state.dist.is_main:  # one rank orders (it may encode), all ranks use the same batches
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
        where = {"seed_run": seed_run, "stage": s, "epoch": epoch}

        def on_step(step: int, loss: float, lr: float, where: dict[str, int] = where) -> None:
            state.done_steps += 1
            if step % max(1, cfg.log_every) == 0 or step == 1:
                state.emit(train_events.STEP, **where, step=step, loss=round(loss, 6), lr=lr)

        first_step = losses[-1][0] if losses else 0
        desc = f"seed run {seed_run} {stage.name} epoch {epoch}/{stage.epochs}"
        stats = train_epoch(ctx, pairs, order, stage.batch_size, first_step, on_step, desc, cfg.progress_bar)
        losses.extend(stats.losses)
        scored = cfg.eval_epochs == "all" or epoch == stage.epochs
        metrics, score, eval_seconds = state.evaluate(model) if scored else (None, None, 0.0)
        record: dict[str, Any] = {
            "seed_run": seed_run,
            "seed": seed,
            "stage": s,
            "stage_name": stage.name,
            "loss": stage.loss,
            "epoch": epoch,
            # Epochs trained so far in this seed run, across stages; 0 is reserved for the base model.
            "epoch_index": 1 + sum(1 for h in state.history if h["seed_run"] == seed_run and h["stage"] >= 0),
            "step": losses[-1][0] if losses else first_step,
            "train_loss": stats.mean_loss,
            "dev_metric": score,
            "dev": metrics,
            "train_seconds": round(stats.seconds, 3),
            "shuffle_seconds": round(shuffle_seconds, 3),
            "mining_seconds": round(mining_seconds, 3),
            "eval_seconds": round(eval_seconds, 3),
            "stage_end": epoch == stage.epochs,
        }
        if state.device.type == "cuda":  # peak of this epoch: training, ordering and the dev evaluation
            record["peak_gpu_mib"] = round(torch.cuda.max_memory_allocated(state.device) / 2**20, 1)
        temperature = getattr(ctx.loss_fn, "temperature", None)
        if torch.is_tensor(temperature):  # a trainable temperature: record where it went
            record["temperature"] = float(temperature.detach())
        state.finish_epoch(record, model)
