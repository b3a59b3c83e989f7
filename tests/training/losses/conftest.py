"""Fixtures for the loss tests: one tiny sentence-transformers model per session, loaded fresh per test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import torch

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer


@pytest.fixture(scope="session")
def tiny_model_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Folder of a tiny BERT bi-encoder, built once for the whole session."""
    from tests.helpers.tiny_model import build_tiny_model

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return build_tiny_model(tmp_path_factory.mktemp("tiny_loss_model"))
    finally:
        torch.set_num_threads(threads)


@pytest.fixture
def tiny_model(tiny_model_path: Path) -> Iterator[SentenceTransformer]:
    """A fresh copy of the tiny model (tests train it), with fixed seeds and one intra-op thread."""
    from sentence_transformers import SentenceTransformer

    # On a shared 2-core machine two spinning intra-op threads made these steps ~100x slower; restored after.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    try:
        yield SentenceTransformer(str(tiny_model_path), device="cpu")
    finally:
        torch.set_num_threads(threads)
