"""A multilingual model through the quality-gated exports: int8 on both runtimes passes the gate and
stays close to torch on claims in six languages and scripts."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from encoders.loader import EncoderOptions, Variant, load_encoder_backend
from encoders.torch_backend import TorchBackend
from pairank.models import load_sentence_transformer, resolve_model
from tests.helpers.tiny_model import MULTILINGUAL_CORPUS


@pytest.mark.parametrize("backend", ["onnx", "openvino"])
def test_int8_exports_of_a_multilingual_model_pass_the_gate(
    multilingual_model_dir: Path, tmp_path: Path, backend: str
) -> None:
    spec = resolve_model(str(multilingual_model_dir))
    tokenizer_words = (multilingual_model_dir / "tokenizer.json").read_text(encoding="utf-8")
    assert "العقم" in tokenizer_words or "عقم" in tokenizer_words  # an Arabic word is in its vocabulary
    loaded = load_encoder_backend(
        spec, EncoderOptions(backend=backend, precision="int8", cache_root=tmp_path)
    )
    assert loaded.variant == Variant(backend, "int8") and loaded.attempts == []
    reference = TorchBackend(load_sentence_transformer(spec, device="cpu"), "fp32")
    ours = np.vstack([loaded.backend.forward(loaded.backend.tokenize([t])) for t in MULTILINGUAL_CORPUS])
    theirs = np.vstack([reference.forward(reference.tokenize([t])) for t in MULTILINGUAL_CORPUS])
    assert np.sum(ours * theirs, axis=1).min() >= 0.97
