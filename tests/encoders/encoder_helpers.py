"""A real backend whose forward passes can be held, to observe scheduling and fill the queue."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np

from encoders.backend import EncoderBackend


class GatedBackend:
    """A real backend whose forward passes wait for a gate and are recorded (to observe scheduling)."""

    def __init__(self, inner: EncoderBackend) -> None:
        self.inner = inner
        self.name, self.precision, self.dimension = inner.name, inner.precision, inner.dimension
        self.gate = threading.Event()
        self.started = threading.Event()
        self.passes: list[int] = []
        self.spare_core: list[bool] = []

    def tokenize(self, texts: Sequence[str]) -> list[np.ndarray]:
        return self.inner.tokenize(texts)

    def forward(self, token_ids: Sequence[np.ndarray], spare_core: bool = False) -> np.ndarray:
        self.started.set()
        self.gate.wait(30)
        self.passes.append(len(token_ids))
        self.spare_core.append(spare_core)
        return self.inner.forward(token_ids)
