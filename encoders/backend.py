"""The encoder port: tokenize in the caller's thread, run one padded forward pass per batch.

Every backend (torch, ONNX Runtime, OpenVINO) tokenizes with the model's own fast tokenizer and pads a
batch to its longest member, so a batch of short texts never pays for a long one elsewhere in the queue.
Rows come back L2-normalized float32, whatever the model's last module is.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

if TYPE_CHECKING:
    from tokenizers import Tokenizer

MODEL_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


class EncoderBackend(Protocol):
    """What the micro-batcher needs from a model runtime."""

    name: str
    precision: str
    dimension: int

    def tokenize(self, texts: Sequence[Any]) -> list[np.ndarray]:
        """Token ids of each text (truncated to the model's limit), one int64 array per text; a
        cross-encoder's inputs are (query, document) pairs (encoders/cross_backend.py)."""
        ...

    def forward(self, token_ids: Sequence[np.ndarray], spare_core: bool = False) -> np.ndarray:
        """Embeddings of already tokenized texts, one normalized float32 row per text; `spare_core`:
        several callers wait on this pass, so leave a core to their threads where the runtime can."""
        ...


@dataclass(frozen=True)
class TokenizerSettings:
    """How a model's texts become token ids: the tokenizer file, its limit, its padding id."""

    tokenizer_file: Path
    max_seq_length: int
    pad_token_id: int
    lowercase: bool
    input_names: tuple[str, ...]


class FastTokenizer:
    """The model's `tokenizer.json` run by the `tokenizers` library (no transformers import needed)."""

    def __init__(self, settings: TokenizerSettings, tokenizer: Tokenizer | None = None) -> None:
        from tokenizers import Tokenizer

        self.settings = settings
        loaded = tokenizer or Tokenizer.from_file(str(settings.tokenizer_file))
        # A private copy: truncation and padding are set on the object, and callers may share it.
        self._tokenizer = Tokenizer.from_str(loaded.to_str())
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(max_length=settings.max_seq_length)

    def __call__(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Token ids per text; texts are stripped (and lower-cased) as sentence-transformers does."""
        prepared = [t.strip().lower() if self.settings.lowercase else t.strip() for t in texts]
        encodings = self._tokenizer.encode_batch(prepared, add_special_tokens=True)
        return [np.asarray(e.ids, dtype=np.int64) for e in encodings]


def padded(token_ids: Sequence[np.ndarray], pad_id: int, multiple: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """(ids, attention mask): int64 arrays right-padded to the longest row, rounded up to `multiple`
    (padded positions are masked out, so the rounding changes no output)."""
    longest = -(-max(len(ids) for ids in token_ids) // multiple) * multiple
    input_ids = np.full((len(token_ids), longest), pad_id, dtype=np.int64)
    mask = np.zeros((len(token_ids), longest), dtype=np.int64)
    for row, ids in enumerate(token_ids):
        input_ids[row, : len(ids)] = ids
        mask[row, : len(ids)] = 1
    return input_ids, mask


def pad_batch(
    token_ids: Sequence[np.ndarray], pad_id: int, names: Sequence[str], multiple: int = 1
) -> dict[str, np.ndarray]:
    """Right-pad token id arrays (see `padded`); the model's named int64 inputs."""
    input_ids, mask = padded(token_ids, pad_id, multiple)
    inputs = {"input_ids": input_ids, "attention_mask": mask, "token_type_ids": np.zeros_like(input_ids)}
    return {name: inputs[name] for name in names}


def normalize(vectors: np.ndarray) -> np.ndarray:
    """float32 rows scaled to unit length (zero rows stay zero)."""
    matrix = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.ascontiguousarray(matrix / np.maximum(norms, 1e-12))


def write_tokenizer_settings(folder: Path, settings: TokenizerSettings) -> None:
    """Record how to tokenize next to an exported model (the tokenizer file is copied beside it)."""
    data = {
        "tokenizer_file": settings.tokenizer_file.name,
        "max_seq_length": settings.max_seq_length,
        "pad_token_id": settings.pad_token_id,
        "lowercase": settings.lowercase,
        "input_names": list(settings.input_names),
    }
    (folder / "tokenizer_settings.json").write_text(json.dumps(data, indent=2))


def read_tokenizer_settings(folder: Path) -> TokenizerSettings:
    """The tokenizer settings an export recorded."""
    data = json.loads((folder / "tokenizer_settings.json").read_text())
    return TokenizerSettings(
        tokenizer_file=folder / data["tokenizer_file"],
        max_seq_length=int(data["max_seq_length"]),
        pad_token_id=int(data["pad_token_id"]),
        lowercase=bool(data["lowercase"]),
        input_names=tuple(data["input_names"]),
    )
