"""Fixtures for the loss tests: one tiny sentence-transformers model per session, loaded fresh per test."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import torch

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer


@pytest.fixture(scope="session")
def tiny_model_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Folder of a tiny BERT bi-encoder, built once for the whole session."""
    from pairank.tiny import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny_loss_model"))


@pytest.fixture
def tiny_model(tiny_model_path: Path) -> SentenceTransformer:
    """A fresh copy of the tiny model (tests train it), with fixed seeds."""
    from sentence_transformers import SentenceTransformer

    torch.manual_seed(0)
    return SentenceTransformer(str(tiny_model_path), device="cpu")
