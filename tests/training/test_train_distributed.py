"""The gradient-keeping all-gather and the global-batch loss wrapper, on CPU with gloo process groups."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn

from training.distributed import GatheredEmbeddings, all_gather_with_grad, local_bounds, slice_features
from training.loop import average_gradients

REPO = Path(__file__).resolve().parents[2]


class BagEncoder(nn.Module):
    """A tiny stand-in for a SentenceTransformer: mean of token embeddings under the attention mask."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.emb = nn.Embedding(50, 8)

    def forward(self, features: dict[str, Any]) -> dict[str, Any]:
        mask = features["attention_mask"].unsqueeze(-1).float()
        pooled = (self.emb(features["input_ids"]) * mask).sum(1) / mask.sum(1)
        return {**features, "sentence_embedding": pooled}


def _features(seed: int, rows: int) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(1, 50, (rows, 6), generator=g)
    lengths = torch.randint(2, 7, (rows,), generator=g)
    mask = (torch.arange(6)[None, :] < lengths[:, None]).long()
    ids = ids * mask
    ids[1] = ids[0]  # two identical first rows: BSC groups them as one text (eq. 3-4)
    mask[1] = mask[0]
    return {"input_ids": ids, "attention_mask": mask}


def _global_loss_grads(rank: int, world: int, rows: int) -> dict[str, torch.Tensor]:
    """BSC on the whole batch with every rank embedding its share; gradients averaged as in training."""
    from training.losses import build_loss

    model = BagEncoder()
    target = GatheredEmbeddings(model, model, rank, world) if world > 1 else model
    loss_fn = build_loss("bsc", target, temperature=0.2, normalization="l2_rows")
    labels = torch.ones(rows)
    labels[-1] = 0.0  # a labelled negative stays in the denominators only
    loss = loss_fn([_features(1, rows), _features(2, rows)], labels)
    loss.backward()
    average_gradients(list(model.parameters()), world)
    assert model.emb.weight.grad is not None
    return {"loss": loss.detach(), "grad": model.emb.weight.grad.detach().clone()}


def _worker(rank: int, world: int, init_file: str, rows: int, out_dir: str) -> None:
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=world)
    try:
        torch.save(_global_loss_grads(rank, world, rows), os.path.join(out_dir, f"rank{rank}.pt"))
        # The raw all-gather: rank r holds r + 1 rows; gradients of sum(w * gathered) come back per owner.
        x = torch.full((rank + 1, 2), float(rank + 1), requires_grad=True)
        gathered = all_gather_with_grad(x)
        assert gathered.shape == (3, 2)
        weights = torch.arange(6.0).reshape(3, 2)
        (gathered * weights).sum().backward()
        start = 0 if rank == 0 else 1
        # Every rank computed the same loss, so the owner's gradient is world x d(loss)/dx.
        assert x.grad is not None and torch.equal(x.grad, world * weights[start : start + rank + 1])
    finally:
        dist.destroy_process_group()


def test_local_bounds_cover_the_batch() -> None:
    assert [local_bounds(7, 3, r) for r in range(3)] == [(0, 3), (3, 5), (5, 7)]
    assert [local_bounds(2, 2, r) for r in range(2)] == [(0, 1), (1, 2)]


def test_slice_features_trims_padding() -> None:
    feats = {
        "input_ids": torch.tensor([[1, 2, 0, 0], [3, 0, 0, 0]]),
        "attention_mask": torch.tensor([[1, 1, 0, 0], [1, 0, 0, 0]]),
        "modality": "text",
    }
    local = slice_features(feats, 1, 2)
    assert local["input_ids"].tolist() == [[3]] and local["modality"] == "text"


def test_single_process_group_is_the_identity(tmp_path: Path) -> None:
    dist.init_process_group("gloo", init_method=f"file://{tmp_path / 'init'}", rank=0, world_size=1)
    try:
        x = torch.randn(3, 2, requires_grad=True)
        y = all_gather_with_grad(x)
        (y * 2).sum().backward()
        assert x.grad is not None
        assert torch.equal(y, x) and torch.equal(x.grad, torch.full((3, 2), 2.0))
    finally:
        dist.destroy_process_group()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_two_ranks_reproduce_the_single_device_gradient(tmp_path: Path) -> None:
    rows = 5  # ranks hold 3 and 2 rows: unequal slices
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(_free_port()))
    mp.spawn(_worker, args=(2, str(tmp_path / "init"), rows, str(tmp_path)), nprocs=2, join=True)
    single = _global_loss_grads(0, 1, rows)
    for rank in range(2):
        got = torch.load(tmp_path / f"rank{rank}.pt")
        assert torch.allclose(got["loss"], single["loss"], atol=1e-6)
        assert torch.allclose(got["grad"], single["grad"], atol=1e-6)


def test_torchrun_two_cpu_ranks_end_to_end(tmp_path: Path) -> None:
    """`torchrun --nproc_per_node 2 -m pairank.cli train` on CPU (gloo): one run folder, rank 0's events."""
    from trainer_helpers import build_setup

    setup = build_setup(tmp_path)
    torchrun = Path(sys.executable).with_name("torchrun")
    if not torchrun.exists():
        pytest.skip("torchrun is not installed next to the interpreter")
    out = tmp_path / "run"
    args = [
        "--nproc_per_node",
        "2",
        "-m",
        "pairank.cli",
        "train",
        "--train-pairs",
        str(setup["train"]),
        "--dev-pairs",
        str(setup["dev"]),
        "--base-model",
        str(setup["model"]),
        "--epochs",
        "1",
        "--output",
        str(out),
        "--no-progress-bar",
        "--set",
        "stages.0.batch_size=8",
        "--set",
        "max_seq_length=24",
        "--set",
        "stages.0.shuffle=example",
    ]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MASTER_PORT": str(_free_port())}
    done = subprocess.run(
        [str(torchrun), *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=240
    )
    assert done.returncode == 0, done.stderr[-3000:]
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert events[0]["event"] == "start" and events[0]["world_size"] == 2
    assert events[-1]["event"] == "done" and (out / "manifest.json").is_file()
