"""The torch backend: the sentence-transformers model itself (fp32, or fp16 on CUDA)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from encoders.backend import MODEL_INPUTS, FastTokenizer, TokenizerSettings, normalize, pad_batch

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer


def tokenizer_settings(model: SentenceTransformer, max_seq_length: int | None = None) -> TokenizerSettings:
    """How the model tokenizes: its fast tokenizer, sequence limit, padding id and input names."""
    first: Any = model[0]
    hf_tokenizer: Any = first.tokenizer
    names = tuple(n for n in hf_tokenizer.model_input_names if n in MODEL_INPUTS)
    if "input_ids" not in names or "attention_mask" not in names:
        raise ValueError(f"unsupported tokenizer inputs {hf_tokenizer.model_input_names}")
    return TokenizerSettings(
        tokenizer_file=Path("tokenizer.json"),
        max_seq_length=int(max_seq_length or model.max_seq_length or 512),
        pad_token_id=int(hf_tokenizer.pad_token_id or 0),
        lowercase=bool(getattr(first, "do_lower_case", False)),
        input_names=names,
    )


def model_tokenizer(model: SentenceTransformer, settings: TokenizerSettings) -> FastTokenizer:
    """The model's own fast tokenizer with the given settings."""
    first: Any = model[0]
    backend = getattr(first.tokenizer, "backend_tokenizer", None)
    if backend is None:
        raise ValueError("the model has no fast (Rust) tokenizer; only fast tokenizers are supported")
    return FastTokenizer(settings, backend)


class TorchBackend:
    """Runs the loaded SentenceTransformer on padded batches of token ids."""

    name = "torch"

    def __init__(
        self,
        model: SentenceTransformer,
        precision: str = "fp32",
        max_seq_length: int | None = None,
    ) -> None:
        # torch's thread count is process-wide: the process's entry point sets it (app.main), not a model.
        import torch

        self.model = model
        self.device = str(model.device)
        if precision == "fp16":
            if not self.device.startswith("cuda"):
                raise ValueError("precision fp16 needs a CUDA device; use fp32 (or int8 with onnx/openvino)")
            model.half()
        elif precision != "fp32":
            raise ValueError(f"the torch backend runs fp32 (or fp16 on CUDA), not {precision}")
        self.precision = precision
        self.settings = tokenizer_settings(model, max_seq_length)
        self._tokenize = model_tokenizer(model, self.settings)
        self._torch = torch
        model.eval()
        self.dimension = int(self.forward(self.tokenize(["dimension probe"])).shape[1])

    def tokenize(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Token ids per text."""
        return self._tokenize(texts)

    def forward(self, token_ids: Sequence[np.ndarray], spare_core: bool = False) -> np.ndarray:
        """Normalized embeddings of one padded batch (torch's threads are process-wide: no spare core)."""
        torch = self._torch
        inputs = pad_batch(token_ids, self.settings.pad_token_id, self.settings.input_names)
        features: dict[str, Any] = {k: torch.from_numpy(v).to(self.device) for k, v in inputs.items()}
        with torch.inference_mode():
            embeddings = self.model(features)["sentence_embedding"]
        return normalize(embeddings.float().cpu().numpy())
