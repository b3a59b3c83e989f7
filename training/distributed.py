"""Multi-GPU training helpers: process groups from torchrun, and an all-gather that keeps gradients.

With DDP each device embeds its share of the batch; the BSC loss needs the *global* batch as in-batch
negatives, so embeddings are all-gathered before the loss. `torch.distributed.all_gather` returns
tensors without autograd history; `AllGatherWithGrad` keeps it: every rank computes the same global
loss, so the backward pass sums the incoming gradients over ranks (all-reduce) and hands each rank the
slice of its own rows. DDP then averages parameter gradients over the W ranks, which cancels the W
identical loss copies and leaves exactly the single-device full-batch gradient.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import torch
import torch.distributed as dist
from torch import nn


@dataclass(frozen=True)
class DistInfo:
    """Where this process sits in the (possibly single-process) job."""

    rank: int = 0
    world_size: int = 1
    local_rank: int = 0
    joined: bool = False  # a process group was joined (torchrun), even one of a single rank

    @property
    def is_main(self) -> bool:
        """Rank 0 writes files, prints progress and evaluates."""
        return self.rank == 0

    @property
    def enabled(self) -> bool:
        """True under torchrun: embeddings are gathered across the group (a no-op copy for one rank)."""
        return self.joined


def init_from_env(device: str = "auto") -> DistInfo:
    """Join the process group torchrun describes (RANK/WORLD_SIZE/LOCAL_RANK); single process otherwise.

    A torchrun job of one process joins too, so that `--nproc_per_node 1` on a one-GPU machine runs the
    same NCCL collectives as a multi-GPU job.
    """
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    if world_size <= 1 and "RANK" not in os.environ:
        return DistInfo()
    rank, local_rank = int(os.environ["RANK"]), int(os.environ.get("LOCAL_RANK", "0"))
    use_cuda = torch.cuda.is_available() and device in {"auto", "cuda"}
    if use_cuda:
        torch.cuda.set_device(local_rank)
    if not dist.is_initialized():
        dist.init_process_group(backend="nccl" if use_cuda else "gloo")
    return DistInfo(rank=rank, world_size=world_size, local_rank=local_rank, joined=True)


def shutdown() -> None:
    """Leave the process group if one was joined."""
    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()


def _joined() -> bool:
    return dist.is_available() and dist.is_initialized()


def _world() -> tuple[int, int]:
    if _joined():
        return dist.get_rank(), dist.get_world_size()
    return 0, 1


class AllGatherWithGrad(torch.autograd.Function):
    """Concatenate every rank's rows (sizes may differ) and route gradients back to their owners."""

    @staticmethod
    def forward(ctx: Any, tensor: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        rank, world = _world()
        size = torch.tensor([tensor.shape[0]], device=tensor.device)
        sizes = [torch.zeros_like(size) for _ in range(world)]
        dist.all_gather(sizes, size)
        counts = [int(s.item()) for s in sizes]
        longest = max(counts)
        # all_gather needs equal shapes: pad to the longest slice, trim afterwards.
        padded = tensor.new_zeros((longest, *tensor.shape[1:]))
        padded[: tensor.shape[0]] = tensor
        gathered = [torch.empty_like(padded) for _ in range(world)]
        dist.all_gather(gathered, padded.contiguous())
        ctx.counts, ctx.rank, ctx.longest = counts, rank, longest
        return torch.cat([g[:n] for g, n in zip(gathered, counts, strict=True)], dim=0)

    @staticmethod
    def backward(ctx: Any, grad_output: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        grad = grad_output.contiguous().clone()
        # Every rank holds the same global loss: sum their gradients w.r.t. the gathered tensor.
        dist.all_reduce(grad, op=dist.ReduceOp.SUM)
        start = sum(ctx.counts[: ctx.rank])
        return grad[start : start + ctx.counts[ctx.rank]]


def all_gather_with_grad(tensor: torch.Tensor) -> torch.Tensor:
    """All-gather rows across ranks keeping autograd; the identity without a process group.

    A group of one rank (torchrun on one GPU) still runs the collectives, so that set-up proves NCCL.
    """
    if not _joined():
        return tensor
    result: torch.Tensor = AllGatherWithGrad.apply(tensor)
    return result


def broadcast_object(value: Any, src: int = 0) -> Any:
    """Send a picklable object from `src` to every rank (batch orders, dev scores)."""
    if not _joined():
        return value
    box = [value]
    dist.broadcast_object_list(box, src=src)
    return box[0]


def barrier() -> None:
    """Wait for every rank (no-op in a single process)."""
    if _world()[1] > 1:
        dist.barrier()


def local_bounds(rows: int, world_size: int, rank: int) -> tuple[int, int]:
    """Rows [start, stop) of a global batch that `rank` embeds (np.array_split sizes: differ by <= 1)."""
    base, extra = divmod(rows, world_size)
    start = rank * base + min(rank, extra)
    return start, start + base + (1 if rank < extra else 0)


def slice_features(features: dict[str, Any], start: int, stop: int) -> dict[str, Any]:
    """Rows [start, stop) of a tokenised batch, with padding columns no row of the slice uses trimmed."""
    local = {k: v[start:stop] if torch.is_tensor(v) and v.ndim >= 1 else v for k, v in features.items()}
    mask = local.get("attention_mask")
    if torch.is_tensor(mask) and mask.ndim == 2 and mask.shape[0] > 0:
        width = int(mask.sum(dim=1).max().item())
        local = {
            k: v[:, :width] if torch.is_tensor(v) and v.ndim == 2 and v.shape[1] == mask.shape[1] else v
            for k, v in local.items()
        }
    return local


class GatheredEmbeddings(nn.Module):
    """Stands in for the model inside a loss so that the loss sees the *global* batch under DDP.

    Every rank builds the features of the whole global batch (tokenising is cheap) and passes them to
    the loss, which therefore reads global labels and global identical-text groups. When the loss
    calls the model, this wrapper embeds only this rank's rows through the DDP model and all-gathers
    the embeddings with gradients, so in-batch negatives come from every device while each device
    runs the encoder on its share only. Attribute look-ups (e.g. `get_sentence_embedding_dimension`)
    fall through to the SentenceTransformer.
    """

    def __init__(self, forward_model: nn.Module, st_model: nn.Module, rank: int, world_size: int) -> None:
        super().__init__()
        self.forward_model = forward_model
        self.rank, self.world_size = rank, world_size
        object.__setattr__(self, "_st_model", st_model)  # not registered twice as a submodule

    def forward(self, features: dict[str, Any]) -> dict[str, Any]:
        """Embed this rank's rows of the global batch, then all-gather the sentence embeddings."""
        rows = next(v.shape[0] for v in features.values() if torch.is_tensor(v))
        start, stop = local_bounds(rows, self.world_size, self.rank)
        out = dict(self.forward_model(slice_features(features, start, stop)))
        out["sentence_embedding"] = all_gather_with_grad(out["sentence_embedding"])
        return out

    def __getattr__(self, name: str) -> Any:
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(object.__getattribute__(self, "_st_model"), name)
