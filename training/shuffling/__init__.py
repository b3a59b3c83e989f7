"""Batch orderings for BSC training (paper 001, section 3.2) and their registry.

Each strategy returns, per epoch, a permutation of the training pairs whose consecutive slices are
the batches. `build_batch_order(name, **params)` builds one by name for configs and the CLI.
"""

from __future__ import annotations

import inspect
from typing import Any

from training.shuffling.base import BatchOrder, Encoder
from training.shuffling.example import ExampleOrder
from training.shuffling.fast_clusters import FastClustersOrder
from training.shuffling.fast_neighbours import FastNeighboursOrder
from training.shuffling.fast_words import FastWordsOrder
from training.shuffling.file_order import FileOrder
from training.shuffling.overhead import measure_order_seconds
from training.shuffling.random_order import RandomOrder

__all__ = [
    "BATCH_ORDERS",
    "BatchOrder",
    "Encoder",
    "ExampleOrder",
    "FastClustersOrder",
    "FastNeighboursOrder",
    "FastWordsOrder",
    "FileOrder",
    "RandomOrder",
    "batch_order_params",
    "build_batch_order",
    "measure_order_seconds",
]

BATCH_ORDERS: dict[str, type[BatchOrder]] = {
    cls.name: cls
    for cls in (
        RandomOrder,
        FileOrder,
        ExampleOrder,
        FastWordsOrder,
        FastClustersOrder,
        FastNeighboursOrder,
    )
}


def batch_order_params(name: str) -> dict[str, Any]:
    """The parameters a strategy accepts, with their defaults."""
    cls = _lookup(name)
    return {
        p.name: p.default
        for p in inspect.signature(cls.__init__).parameters.values()
        if p.name != "self"
        and p.kind is not inspect.Parameter.VAR_KEYWORD
        and p.kind is not inspect.Parameter.VAR_POSITIONAL
    }


def build_batch_order(name: str, **params: Any) -> BatchOrder:
    """Build the strategy registered as `name`; ValueError on an unknown name or parameter."""
    cls = _lookup(name)
    accepted = batch_order_params(name)
    unknown = sorted(set(params) - set(accepted))
    if unknown:
        valid = ", ".join(accepted) or "none"
        raise ValueError(f"unknown parameter(s) {unknown} for batch order {name!r}; valid: {valid}")
    return cls(**params)


def _lookup(name: str) -> type[BatchOrder]:
    try:
        return BATCH_ORDERS[name]
    except KeyError:
        raise ValueError(f"unknown batch order {name!r}; valid names: {', '.join(BATCH_ORDERS)}") from None
