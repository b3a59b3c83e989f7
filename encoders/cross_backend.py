"""Cross-encoder backends: score (query, document) pairs read together, on torch or on an export.

A pair is tokenized as one sequence (`[CLS] query [SEP] document [SEP]`, cut longest-first to the
model's limit, as sentence-transformers' `CrossEncoder.predict` does) into one int64 array per pair
holding each token's id in its low 32 bits and its segment (token type) above them. So a pair is a
single id array like a text, and the micro-batcher (encoders/batcher.py), which only measures lengths,
queues, batches and length-sorts pairs exactly as it does texts. `forward` returns the raw logits, one
row per pair; `scores` applies the model's activation (sigmoid for a one-logit re-ranker).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from encoders.backend import MODEL_INPUTS, TokenizerSettings, padded, read_tokenizer_settings
from encoders.exported import OpenVinoBackend, Runner, inference_threads, open_onnx, open_openvino

Pair = tuple[str, str]
SEGMENT_SHIFT = 32
_ID_MASK = (1 << SEGMENT_SHIFT) - 1
CROSS_FILE = "cross_encoder.json"  # beside an export: its activation
ACTIVATIONS = {"Sigmoid": "sigmoid", "Identity": "identity"}


class PairTokenizer:
    """The model's `tokenizer.json` over pairs, run by the `tokenizers` library (no transformers needed)."""

    def __init__(self, settings: TokenizerSettings, tokenizer: Any = None) -> None:
        from tokenizers import Tokenizer

        loaded = tokenizer or Tokenizer.from_file(str(settings.tokenizer_file))
        self._tokenizer = Tokenizer.from_str(loaded.to_str())  # a private copy: settings live on it
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(max_length=settings.max_seq_length, strategy="longest_first")

    def __call__(self, pairs: Sequence[Pair]) -> list[np.ndarray]:
        """One packed array (id | segment << 32) per pair."""
        encodings = self._tokenizer.encode_batch([(q, d) for q, d in pairs], add_special_tokens=True)
        return [
            np.asarray(e.ids, dtype=np.int64) | (np.asarray(e.type_ids, dtype=np.int64) << SEGMENT_SHIFT)
            for e in encodings
        ]


def pair_inputs(
    token_ids: Sequence[np.ndarray], pad_id: int, names: Sequence[str], multiple: int = 1
) -> dict[str, np.ndarray]:
    """Right-pad packed pair arrays to the longest (rounded up to `multiple`: masked, so no score
    changes); the model's named int64 inputs."""
    packed, mask = padded(token_ids, pad_id, multiple)
    inputs = {
        "input_ids": packed & _ID_MASK,
        "attention_mask": mask,
        "token_type_ids": packed >> SEGMENT_SHIFT,
    }
    return {name: inputs[name] for name in names}


def activate(logits: np.ndarray, activation: str) -> np.ndarray:
    """Scores from logits (first column): sigmoid or unchanged, as float64 (no ties from rounding)."""
    values = np.asarray(logits, dtype=np.float64).reshape(len(logits), -1)[:, 0]
    return 1.0 / (1.0 + np.exp(-values)) if activation == "sigmoid" else values


class CrossTorchBackend:
    """A sentence-transformers CrossEncoder folder on torch (fp32, or fp16 on CUDA)."""

    name = "torch"
    dimension = 1

    def __init__(
        self, folder: Path | str, device: str = "cpu", precision: str = "fp32", max_length: int | None = None
    ) -> None:
        import torch
        from sentence_transformers import CrossEncoder

        self.model = CrossEncoder(str(folder), device=device, max_length=max_length, local_files_only=True)
        if precision == "fp16" and device.startswith("cuda"):
            self.model.half()
        elif precision != "fp32":
            raise ValueError(f"the torch backend runs fp32 (or fp16 on CUDA), not {precision}")
        self.precision = precision
        self.device = device
        self.network: Any = self.model.model
        self.network.eval()
        hf_tokenizer: Any = self.model.tokenizer
        activation = type(self.model.activation_fn).__name__
        if activation not in ACTIVATIONS:
            raise ValueError(f"unsupported cross-encoder activation {activation}")
        self.activation = ACTIVATIONS[activation]
        limit = int(max_length or self.model.max_length or hf_tokenizer.model_max_length or 512)
        self.settings = TokenizerSettings(
            tokenizer_file=Path("tokenizer.json"),
            max_seq_length=min(limit, int(self.network.config.max_position_embeddings)),
            pad_token_id=int(hf_tokenizer.pad_token_id or 0),
            lowercase=False,
            input_names=tuple(n for n in hf_tokenizer.model_input_names if n in MODEL_INPUTS),
        )
        self.backend_tokenizer = hf_tokenizer.backend_tokenizer
        self._tokenize = PairTokenizer(self.settings, self.backend_tokenizer)
        self._torch = torch

    def tokenize(self, pairs: Sequence[Pair]) -> list[np.ndarray]:
        """Packed token ids per pair."""
        return self._tokenize(pairs)

    def forward(self, token_ids: Sequence[np.ndarray], spare_core: bool = False) -> np.ndarray:
        """Logits of one padded batch, one row per pair (torch's threads are process-wide: no spare core)."""
        torch = self._torch
        inputs = pair_inputs(token_ids, self.settings.pad_token_id, self.settings.input_names)
        features = {k: torch.from_numpy(v).to(self.device) for k, v in inputs.items()}
        with torch.inference_mode():
            logits = self.network(**features).logits
        return np.ascontiguousarray(logits.float().cpu().numpy()[:, :1])


class _CrossExportedBackend:
    """A cross-encoder export (its graph, `tokenizer.json`, `tokenizer_settings.json`, CROSS_FILE)."""

    name = "exported"
    dimension = 1
    pad_multiple = 1

    def __init__(self, folder: Path, precision: str, threads: int | None = None) -> None:
        self.folder = folder
        self.precision = precision
        self.threads = inference_threads(threads)
        self.settings = read_tokenizer_settings(folder)
        self.activation = str(json.loads((folder / CROSS_FILE).read_text())["activation"])
        self._tokenize = PairTokenizer(self.settings)
        self._runners: dict[int, Runner] = {}

    def tokenize(self, pairs: Sequence[Pair]) -> list[np.ndarray]:
        """Packed token ids per pair."""
        return self._tokenize(pairs)

    def forward(self, token_ids: Sequence[np.ndarray], spare_core: bool = False) -> np.ndarray:
        """Logits of one padded batch, on every core even when several callers share the pass: unlike a
        query's encoding, scoring the pairs is most of a re-ranked request, and the callers' threads
        wait for it (measured: a core spared halved re-ranking throughput, benchmarks/rerank_latency.md)."""
        runner = self._runners.get(self.threads)
        if runner is None:
            runner = self._runners[self.threads] = self._open(self.threads)
        settings = self.settings
        inputs = pair_inputs(token_ids, settings.pad_token_id, settings.input_names, self.pad_multiple)
        logits = np.asarray(runner(inputs), dtype=np.float32).reshape(len(token_ids), -1)
        return np.ascontiguousarray(logits[:, :1])

    def _open(self, threads: int) -> Runner:
        raise NotImplementedError


class CrossOnnxBackend(_CrossExportedBackend):
    """ONNX Runtime on the CPU (dynamically quantized for int8)."""

    name = "onnx"

    def _open(self, threads: int) -> Runner:
        return open_onnx(self.folder, threads)


class CrossOpenVinoBackend(_CrossExportedBackend):
    """OpenVINO on the CPU (statically quantized with NNCF for int8), with the encoder's bounded kernel
    cache and lengths rounded up to 16 (encoders/exported.py's OpenVinoBackend: the same shape growth)."""

    name = "openvino"
    pad_multiple = OpenVinoBackend.pad_multiple

    def _open(self, threads: int) -> Runner:
        return open_openvino(self.folder, threads, OpenVinoBackend.shape_cache)


CROSS_EXPORTED_BACKENDS: dict[str, type[_CrossExportedBackend]] = {
    "onnx": CrossOnnxBackend,
    "openvino": CrossOpenVinoBackend,
}
