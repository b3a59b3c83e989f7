"""AdamW with and without bias correction, the warm-up schedule and the optimizer parameter groups."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from training.optim import AdamW, build_scheduler, linear_warmup_decay, param_groups, warmup_steps_for


def _run(optimizer_cls, grads: list[float], **kwargs) -> float:
    """Apply the given gradients to a scalar parameter starting at 1.0; return its final value."""
    p = nn.Parameter(torch.tensor([1.0], dtype=torch.float64))
    opt = optimizer_cls([p], **kwargs)
    for g in grads:
        p.grad = torch.tensor([g], dtype=torch.float64)
        opt.step()
    return float(p.item())


def test_no_bias_correction_matches_hand_computation() -> None:
    lr, b1, b2, eps, wd = 0.1, 0.9, 0.999, 1e-6, 0.01
    p, m, v = 1.0, 0.0, 0.0
    for g in (0.5, -0.25):
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        p -= lr * m / (math.sqrt(v) + eps)  # no 1 - beta**t corrections
        p -= lr * wd * p  # decoupled decay after the step
    got = _run(AdamW, [0.5, -0.25], lr=lr, betas=(b1, b2), eps=eps, weight_decay=wd, bias_correction=False)
    assert got == pytest.approx(p, rel=1e-12)


def test_first_step_size_with_and_without_correction() -> None:
    # Step 1 without correction: m = 0.1 g and sqrt(v) = sqrt(0.001) |g|, so the move is 3.16 lr, not lr.
    got = _run(AdamW, [1.0], lr=0.01, eps=0.0, bias_correction=False)
    assert 1.0 - got == pytest.approx(0.01 * 0.1 / math.sqrt(0.001), rel=1e-9)
    corrected = _run(AdamW, [1.0], lr=0.01, eps=0.0, bias_correction=True)
    assert 1.0 - corrected == pytest.approx(0.01, rel=1e-9)  # bias-corrected Adam moves exactly lr at first


def test_bias_correction_matches_torch_adamw() -> None:
    grads = [0.3, -1.2, 0.7, 0.05, 2.0]
    ours = _run(AdamW, grads, lr=0.05, eps=1e-12, weight_decay=0.0, bias_correction=True)
    ref = _run(torch.optim.AdamW, grads, lr=0.05, eps=1e-12, weight_decay=0.0)
    assert ours == pytest.approx(ref, rel=1e-9)


def test_warmup_then_linear_decay() -> None:
    assert warmup_steps_for(100, 0.1) == 10
    assert warmup_steps_for(7, 0.1) == 1  # rounded up: a short run still warms up
    values = [linear_warmup_decay(s, 100, 10) for s in (0, 5, 10, 55, 100)]
    assert values == pytest.approx([0.0, 0.5, 1.0, 0.5, 0.0])
    assert linear_warmup_decay(10, 10, 0) == 0.0


def test_scheduler_drives_the_learning_rate() -> None:
    p = nn.Parameter(torch.zeros(1))
    opt = AdamW([p], lr=1.0)
    sched = build_scheduler(opt, total_steps=20, warmup_ratio=0.1)
    seen = []
    for _ in range(20):
        seen.append(opt.param_groups[0]["lr"])
        p.grad = torch.ones(1)
        opt.step()
        sched.step()
    assert seen[:3] == pytest.approx([0.0, 0.5, 1.0])
    assert seen[-1] == pytest.approx(1 / 18)
    assert max(seen) == pytest.approx(1.0)


def test_param_groups_skip_decay_on_bias_and_norm_and_give_temperature_its_rate() -> None:
    model = nn.Sequential(nn.Linear(3, 3))
    model.add_module("LayerNorm", nn.LayerNorm(3))
    temperature = nn.Parameter(torch.tensor(0.0))
    head = nn.Parameter(torch.zeros(2))
    groups = param_groups(
        model,
        lr=1e-3,
        weight_decay=0.01,
        extra=[head, temperature],
        temperature=[temperature],
        temperature_lr=0.1,
    )
    decay, no_decay, extra, temps = groups
    assert decay["weight_decay"] == 0.01 and len(decay["params"]) == 1  # the linear weight only
    assert no_decay["weight_decay"] == 0.0 and len(no_decay["params"]) == 3
    assert extra["params"] == [head]
    assert temps["params"] == [temperature] and temps["lr"] == 0.1 and temps["weight_decay"] == 0.0
