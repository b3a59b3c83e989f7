"""Timing of one batch ordering, for the trainer's benchmark of the shuffling overhead per epoch."""

from __future__ import annotations

import time
from collections.abc import Sequence

from training.shuffling.base import BatchOrder, Encoder

__all__ = ["measure_order_seconds"]


def measure_order_seconds(
    strategy: BatchOrder,
    firsts: Sequence[str],
    seconds: Sequence[str],
    batch_size: int,
    encode: Encoder | None = None,
    *,
    epoch: int = 0,
    seed: int = 0,
) -> float:
    """Wall-clock seconds of one `strategy.order` call, including the encoding it triggers."""
    # The encoder is passed exactly as the trainer does, so the time counts what an epoch pays:
    # re-encoding all distinct texts with the current model plus the grouping itself.
    start = time.perf_counter()
    strategy.order(
        firsts,
        seconds,
        batch_size=batch_size,
        epoch=epoch,
        seed=seed,
        encode=encode if strategy.needs_encoder else None,
    )
    return time.perf_counter() - start
