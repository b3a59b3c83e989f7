"""Helpers shared by the loss tests (imported by module name: this folder has no __init__.py)."""

from __future__ import annotations

import math
from typing import Any

import torch
from torch import Tensor, nn

R2 = 1.0 / math.sqrt(2.0)


def lse(*xs: float) -> float:
    """log(sum(exp(x))) written out, for hand-computed expectations."""
    return math.log(sum(math.exp(x) for x in xs))


class EmbeddingModel(nn.Module):
    """Stands in for a SentenceTransformer: each feature dict carries its embeddings under "embedding"."""

    def __init__(self, dim: int = 2) -> None:
        super().__init__()
        self.scale = nn.Parameter(torch.ones(()))
        self.dim = dim

    def get_sentence_embedding_dimension(self) -> int:
        """Embedding size, as SentenceTransformer reports it."""
        return self.dim

    def forward(self, features: dict[str, Any]) -> dict[str, Tensor]:
        """Return the carried embeddings (times a trainable scale, so gradients have somewhere to go)."""
        return {"sentence_embedding": features["embedding"] * self.scale}


def column(rows: list[list[float]], token_ids: list[list[int]] | None = None) -> dict[str, Tensor]:
    """A feature dict for EmbeddingModel, optionally with right-padded input_ids/attention_mask."""
    features: dict[str, Tensor] = {"embedding": torch.tensor(rows, dtype=torch.float32)}
    if token_ids is not None:
        width = max(len(t) for t in token_ids)
        features["input_ids"] = torch.tensor([t + [0] * (width - len(t)) for t in token_ids])
        features["attention_mask"] = torch.tensor([[1] * len(t) + [0] * (width - len(t)) for t in token_ids])
    return features


def t(rows: list[list[float]] | list[float]) -> Tensor:
    """Float32 tensor from nested lists."""
    return torch.tensor(rows, dtype=torch.float32)
