"""One training epoch: tokenised batches in the batch order, mixed precision, data-parallel gradients.

Multi-GPU runs do not wrap the model in DistributedDataParallel: sentence-transformers losses call the
encoder once per text column (queries, then documents) before a single backward, which DDP's reducer
does not support with unused parameters (the BERT pooler). Instead every rank embeds its share of the
global batch, embeddings are all-gathered with gradients (`distributed.GatheredEmbeddings`) and the
parameter gradients are averaged with one all-reduce per step, which is what DDP computes.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch import nn
from tqdm.auto import tqdm

from training.data import PairSet, batch_slices, move_features
from training.distributed import DistInfo

StepCallback = Callable[[int, float, float], None]  # (global step, loss, learning rate)


@dataclass
class AmpSettings:
    """Autocast dtype (None: full precision) and whether a GradScaler is needed (fp16 only)."""

    dtype: torch.dtype | None = None

    @property
    def use_scaler(self) -> bool:
        """fp16 gradients underflow without loss scaling; bf16 and fp32 do not need it."""
        return self.dtype == torch.float16

    def autocast(self, device: torch.device) -> AbstractContextManager[Any]:
        """torch.autocast for the device, or a no-op in full precision."""
        if self.dtype is None:
            return nullcontext()
        return torch.autocast(device_type=device.type, dtype=self.dtype)


def resolve_amp(setting: str, device: torch.device) -> AmpSettings:
    """`auto`: fp16 on CUDA (with a GradScaler), full precision on CPU; or an explicit fp16/bf16/off."""
    if setting == "off" or (setting == "auto" and device.type != "cuda"):
        return AmpSettings(None)
    if setting in {"auto", "fp16"}:
        if device.type != "cuda":
            raise ValueError("amp=fp16 needs a CUDA device; use amp=bf16 or amp=off on the CPU")
        return AmpSettings(torch.float16)
    return AmpSettings(torch.bfloat16)


def tokenize(model: Any, texts: list[str]) -> dict[str, Any]:
    """Tokenise with sentence-transformers' `preprocess` (>= 5.2) or the older `tokenize`."""
    prepare = getattr(model, "preprocess", None) or model.tokenize
    return dict(prepare(texts))


def average_gradients(parameters: list[nn.Parameter], world_size: int) -> None:
    """All-reduce and average gradients over ranks (flattened, one collective per dtype)."""
    if world_size <= 1:
        return
    import torch.distributed as dist

    grads = [p.grad for p in parameters if p.grad is not None]
    by_dtype: dict[torch.dtype, list[torch.Tensor]] = {}
    for g in grads:
        by_dtype.setdefault(g.dtype, []).append(g)
    for group in by_dtype.values():
        flat = torch.cat([g.reshape(-1) for g in group])
        dist.all_reduce(flat)
        flat /= world_size
        offset = 0
        for g in group:
            g.copy_(flat[offset : offset + g.numel()].view_as(g))
            offset += g.numel()


@dataclass
class EpochStats:
    """What one epoch cost and how its loss went."""

    steps: int = 0
    mean_loss: float = float("nan")
    seconds: float = 0.0
    losses: list[tuple[int, float]] = field(default_factory=list)


@dataclass
class StepContext:
    """Everything a training step needs besides the batch."""

    model: Any
    loss_fn: nn.Module
    optimizer: torch.optim.Optimizer
    scheduler: Any
    scaler: torch.amp.GradScaler
    amp: AmpSettings
    device: torch.device
    dist: DistInfo
    max_grad_norm: float | None
    parameters: list[nn.Parameter]


def train_epoch(
    ctx: StepContext,
    pairs: PairSet,
    order: np.ndarray,
    batch_size: int,
    start_step: int,
    on_step: StepCallback | None = None,
    description: str = "train",
    progress_bar: bool = True,
) -> EpochStats:
    """Run the batches (consecutive slices of `order`) through one optimiser step each."""
    batches = batch_slices(order, batch_size)
    if ctx.dist.enabled:
        # Every rank must embed at least one row of a batch, so drop a final batch smaller than the world.
        batches = [b for b in batches if len(b) >= ctx.dist.world_size]
    ctx.model.train()
    stats = EpochStats()
    started = time.perf_counter()
    total = 0.0
    show = progress_bar and ctx.dist.is_main
    bar = tqdm(batches, desc=description, unit="batch", disable=not show, leave=False)
    for batch in bar:
        lr = ctx.optimizer.param_groups[0]["lr"]  # the rate this step uses (the scheduler moves it after)
        loss = _train_step(ctx, pairs, batch)
        step = start_step + stats.steps + 1
        stats.steps += 1
        total += loss
        stats.losses.append((step, loss))
        bar.set_postfix(loss=f"{loss:.4f}", lr=f"{lr:.2e}")
        if on_step is not None:
            on_step(step, loss, lr)
    bar.close()
    stats.seconds = time.perf_counter() - started
    stats.mean_loss = total / stats.steps if stats.steps else float("nan")
    return stats


def _train_step(ctx: StepContext, pairs: PairSet, batch: np.ndarray) -> float:
    """Forward, backward (scaled under fp16), gradient averaging, clipping and the optimiser step."""
    firsts = [pairs.firsts[i] for i in batch]
    seconds = [pairs.seconds[i] for i in batch]
    features = [
        move_features(tokenize(ctx.model, firsts), ctx.device),
        move_features(tokenize(ctx.model, seconds), ctx.device),
    ]
    if pairs.negatives is not None:  # hard negatives: extra document columns of the BSC loss
        for column in range(len(pairs.negatives[int(batch[0])])):
            texts = [pairs.negatives[i][column] for i in batch]
            features.append(move_features(tokenize(ctx.model, texts), ctx.device))
    labels = torch.as_tensor(pairs.labels[batch], dtype=torch.float32, device=ctx.device)
    with ctx.amp.autocast(ctx.device):
        loss = ctx.loss_fn(features, labels)
    if not torch.isfinite(loss):
        raise FloatingPointError(f"non-finite training loss {loss.item()} (learning rate or temperature?)")
    ctx.scaler.scale(loss).backward()
    average_gradients(ctx.parameters, ctx.dist.world_size)
    if ctx.max_grad_norm:
        ctx.scaler.unscale_(ctx.optimizer)
        torch.nn.utils.clip_grad_norm_(ctx.parameters, ctx.max_grad_norm)
    ctx.scaler.step(ctx.optimizer)
    ctx.scaler.update()
    ctx.scheduler.step()
    ctx.optimizer.zero_grad(set_to_none=True)
    value = float(loss.detach().item())
    return value if math.isfinite(value) else float("nan")
