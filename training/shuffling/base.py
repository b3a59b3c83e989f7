"""The common interface of batch orderers and the helpers they share.

A batch orderer turns the training pairs into a permutation of their indices; the trainer cuts
consecutive slices of `batch_size` from it as batches (its loader must not reshuffle) and asks for
a new order at every epoch. Strategies that group by embeddings receive `encode`, the *current*
model's encoder, so groups follow the model as it trains (paper 001, end of section 3.2: "we apply
the current model to encode all pairs at each epoch").
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import ClassVar, Literal

import numpy as np

from indexes.knn import as_float32_matrix, l2_normalize

Encoder = Callable[[Sequence[str]], np.ndarray]
Side = Literal["first", "second"]

__all__ = [
    "BatchOrder",
    "Encoder",
    "Side",
    "check_group_size",
    "check_pairs",
    "check_side",
    "encode_unique",
    "epoch_rng",
    "resolve_group_size",
    "unique_ids",
]


class BatchOrder(ABC):
    """A batch-ordering strategy: a permutation of the pairs per epoch, batches are its slices."""

    #: registry name, set by each subclass
    name: ClassVar[str]
    #: whether `order` needs `encode` (the current model's normalized embeddings)
    needs_encoder: ClassVar[bool] = False

    def order(
        self,
        firsts: Sequence[str],
        seconds: Sequence[str],
        *,
        batch_size: int,
        epoch: int,
        seed: int,
        encode: Encoder | None = None,
    ) -> np.ndarray:
        """Return a permutation (int64) of range(len(firsts)) for this epoch."""
        n = check_pairs(firsts, seconds, batch_size)
        rng = epoch_rng(seed, epoch)
        if n == 0:
            return np.zeros(0, dtype=np.int64)
        return self.permutation(firsts, seconds, batch_size=batch_size, rng=rng, encode=encode)

    @abstractmethod
    def permutation(
        self,
        firsts: Sequence[str],
        seconds: Sequence[str],
        *,
        batch_size: int,
        rng: np.random.Generator,
        encode: Encoder | None,
    ) -> np.ndarray:
        """This strategy's order of at least one validated pair, drawing randomness from `rng` only."""

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in sorted(vars(self).items()))
        return f"{type(self).__name__}({params})"


def check_pairs(firsts: Sequence[str], seconds: Sequence[str], batch_size: int) -> int:
    """Validate the pair lists and batch size; return the number of pairs."""
    if len(firsts) != len(seconds):
        raise ValueError(f"firsts and seconds differ in length: {len(firsts)} != {len(seconds)}")
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    return len(firsts)


def epoch_rng(seed: int, epoch: int) -> np.random.Generator:
    """A generator determined by (seed, epoch): reproducible runs, a fresh order every epoch."""
    if seed < 0 or epoch < 0:
        raise ValueError(f"seed and epoch must be >= 0, got seed={seed}, epoch={epoch}")
    # SeedSequence mixes both numbers, so (seed, epoch) pairs do not collide the way seed + epoch would.
    return np.random.default_rng(np.random.SeedSequence([seed, epoch]))


def check_side(by: str) -> Side:
    """Validate the `by` parameter: group by the first or the second texts of the pairs."""
    if by not in ("first", "second"):
        raise ValueError(f"by must be 'first' or 'second', got {by!r}")
    return "first" if by == "first" else "second"


def resolve_group_size(group_size: int | None, batch_size: int) -> int:
    """The group size to use: `group_size`, or the batch size when it is None."""
    size = batch_size if group_size is None else group_size
    if size < 1:
        raise ValueError(f"group size must be >= 1, got {size}")
    return size


def check_group_size(group_size: int | None) -> int | None:
    """Validate a constructor's `group_size` (None means the batch size)."""
    if group_size is not None and (isinstance(group_size, bool) or group_size < 1):
        raise ValueError(f"group_size must be >= 1 or None, got {group_size!r}")
    return group_size


def unique_ids(texts: Sequence[str]) -> tuple[list[str], np.ndarray]:
    """De-duplicate texts in first-seen order: (unique texts, id of each input text among them)."""
    position: dict[str, int] = {}
    ids = np.fromiter(
        (position.setdefault(t, len(position)) for t in texts), dtype=np.int64, count=len(texts)
    )
    return list(position), ids


def encode_unique(
    texts: Sequence[str], encode: Encoder | None, strategy: str
) -> tuple[np.ndarray, np.ndarray]:
    """Encode each distinct text once: (L2-normalized float32 embeddings of the unique texts, ids).

    Identical texts (e.g. a question with ten answers) are encoded once, which saves model calls
    and guarantees that duplicates get exactly the same vector.
    """
    if encode is None:
        raise ValueError(f"batch order {strategy!r} needs an encoder: pass encode=<current model's encoder>")
    unique, ids = unique_ids(texts)
    emb = as_float32_matrix(np.asarray(encode(unique)), name="encoded texts")
    if emb.shape[0] != len(unique):
        raise ValueError(f"encode returned {emb.shape[0]} vectors for {len(unique)} texts")
    # Normalizing again is idempotent for a normalized encoder and makes inner product = cosine.
    return l2_normalize(emb), ids
