"""AdamW with a bias-correction switch, and the linear warm-up / linear decay schedule.

torch.optim.AdamW always bias-corrects. The BSC paper (section 5.2) trained without bias correction
for every task but CQA, as BERT's original optimiser and the old `transformers.AdamW(correct_bias=False)`
allowed; this module reimplements that update (decoupled weight decay applied after the step, as
there) so the setting is reproducible with current libraries.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import torch
from torch import nn
from torch.optim import Optimizer
from torch.optim.lr_scheduler import LambdaLR

# Parameters that sentence-transformers and BERT never weight-decay.
NO_DECAY = ("bias", "LayerNorm.bias", "LayerNorm.weight", "layer_norm", "norm.weight")


class AdamW(Optimizer):
    """Adam with decoupled weight decay; `bias_correction=False` skips the 1 - beta**t corrections.

    Per parameter p with gradient g at step t:
        m = b1 * m + (1 - b1) * g;   v = b2 * v + (1 - b2) * g**2
        step = lr * sqrt(1 - b2**t) / (1 - b1**t)   if bias_correction else lr
        p -= step * m / (sqrt(v) + eps);   p -= lr * weight_decay * p
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 2e-5,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-6,
        weight_decay: float = 0.0,
        bias_correction: bool = True,
    ) -> None:
        if lr < 0 or eps < 0 or not (0 <= betas[0] < 1 and 0 <= betas[1] < 1):
            raise ValueError(f"invalid AdamW settings lr={lr} betas={betas} eps={eps}")
        defaults = {
            "lr": lr,
            "betas": tuple(betas),
            "eps": eps,
            "weight_decay": weight_decay,
            "bias_correction": bias_correction,
        }
        super().__init__(params, defaults)

    @torch.no_grad()
    def step(self, closure: Any = None) -> Any:  # type: ignore[override]
        """Perform one optimisation step."""
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = p.grad
                if grad.is_sparse:
                    raise RuntimeError("AdamW does not support sparse gradients")
                state = self.state[p]
                if not state:
                    state["step"] = 0
                    # Moments at least in fp32, also for half-precision parameters.
                    dtype = torch.float32 if p.dtype in (torch.float16, torch.bfloat16) else p.dtype
                    state["exp_avg"] = torch.zeros_like(p, dtype=dtype)
                    state["exp_avg_sq"] = torch.zeros_like(p, dtype=dtype)
                state["step"] += 1
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                grad32 = grad.to(exp_avg.dtype)
                exp_avg.mul_(beta1).add_(grad32, alpha=1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(grad32, grad32, value=1 - beta2)
                step_size = group["lr"]
                if group["bias_correction"]:
                    t = state["step"]
                    step_size = step_size * math.sqrt(1 - beta2**t) / (1 - beta1**t)
                update = exp_avg / (exp_avg_sq.sqrt() + group["eps"])
                p.add_(update.to(p.dtype), alpha=-step_size)
                if group["weight_decay"] > 0:
                    p.add_(p, alpha=-group["lr"] * group["weight_decay"])
        return loss


def warmup_steps_for(total_steps: int, warmup_ratio: float) -> int:
    """Number of warm-up steps: `warmup_ratio` of the total, rounded up (the paper: 10%)."""
    return min(total_steps, math.ceil(total_steps * warmup_ratio))


def linear_warmup_decay(step: int, total_steps: int, warmup_steps: int) -> float:
    """Learning-rate multiplier: 0 -> 1 linearly over the warm-up, then linearly down to 0 at the end."""
    if warmup_steps > 0 and step < warmup_steps:
        return step / warmup_steps
    return max(0.0, (total_steps - step) / max(1, total_steps - warmup_steps))


def build_scheduler(optimizer: Optimizer, total_steps: int, warmup_ratio: float) -> LambdaLR:
    """LambdaLR with linear warm-up over `warmup_ratio` of the steps, then linear decay."""
    warmup = warmup_steps_for(total_steps, warmup_ratio)
    return LambdaLR(optimizer, lambda step: linear_warmup_decay(step, total_steps, warmup))


def param_groups(
    model: nn.Module,
    lr: float,
    weight_decay: float,
    extra: Iterable[nn.Parameter] = (),
    temperature: Iterable[nn.Parameter] = (),
    temperature_lr: float | None = None,
) -> list[dict[str, Any]]:
    """Optimizer groups: decayed weights, undecayed biases/norms, extra loss parameters, temperatures."""
    decay: list[nn.Parameter] = []
    no_decay: list[nn.Parameter] = []
    for name, p in model.named_parameters():
        if p.requires_grad:
            (no_decay if any(tag in name for tag in NO_DECAY) else decay).append(p)
    groups: list[dict[str, Any]] = [
        {"params": decay, "weight_decay": weight_decay, "lr": lr},
        {"params": no_decay, "weight_decay": 0.0, "lr": lr},
    ]
    taken = {id(p) for p in decay + no_decay}
    temps = [p for p in temperature if p.requires_grad and id(p) not in taken]
    taken |= {id(p) for p in temps}
    others = [p for p in extra if p.requires_grad and id(p) not in taken]
    if others:
        groups.append({"params": others, "weight_decay": weight_decay, "lr": lr})
    if temps:
        # A temperature must not be pulled to 0 by weight decay; it gets its own learning rate.
        groups.append({"params": temps, "weight_decay": 0.0, "lr": temperature_lr or lr})
    return [g for g in groups if g["params"]]
