"""The base model's vectors of texts, kept for the training process's life.

A cross-validated job (`pairank train --cv`, the retraining gate) trains K fold models and a final one
from the same base weights, and before its first step each one scores its dev set (for a retrieval set,
the whole corpus: the 10,369 PFCC-S claims) and mines its hard negatives from the same corpus with those
weights: the same texts, the same vectors, up to 2 (K + 1) times. On PFCC-S on 2 CPU cores these two
encodings were about 40% of a fold's time. Vectors of the untrained weights are kept by text, so each
text is encoded once per process; a model that has taken a step never reads them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

Encoder = Callable[[Sequence[str]], np.ndarray]

_KEPT: dict[str, dict[str, np.ndarray]] = {}


def base_key(model: str, max_seq_length: int | None) -> str:
    """What makes two untrained models encode alike: the weights (version or path) and the length cap."""
    return f"{model}|{max_seq_length or 0}"


def base_encoder(encode: Encoder, key: str) -> Encoder:
    """`encode` (of the untrained weights named by `key`) that encodes each text once per process;
    `encode` itself where there is no key."""
    if not key:
        return encode
    kept = _KEPT.setdefault(key, {})

    def encode_kept(texts: Sequence[str]) -> np.ndarray:
        missing = list(dict.fromkeys(text for text in texts if text not in kept))
        if missing:
            kept.update(zip(missing, encode(missing), strict=True))
        if not texts:
            return encode(texts)
        return np.stack([kept[text] for text in texts])

    return encode_kept


def forget() -> None:
    """Drop every kept vector (tests; a long-lived process that trains many bases)."""
    _KEPT.clear()
