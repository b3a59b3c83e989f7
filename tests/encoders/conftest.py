"""Encoder fixtures: the tiny model's torch backend, loaded once per session."""

from __future__ import annotations

from pathlib import Path

import pytest

from encoders.torch_backend import TorchBackend
from pairank.models import load_sentence_transformer, resolve_model


@pytest.fixture(scope="session")
def tiny_torch_backend(tiny_model_dir: Path) -> TorchBackend:
    """The tiny model run by torch in fp32 (the reference every variant is compared with)."""
    spec = resolve_model(str(tiny_model_dir))
    return TorchBackend(load_sentence_transformer(spec, device="cpu"), "fp32")
