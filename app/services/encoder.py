"""The one encoder component every endpoint uses: batching, normalization, progress logging."""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from pairank.models import ModelSpec, load_sentence_transformer, pick_device

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

log = logging.getLogger(__name__)
_PROGRESS_CHUNK = 512


def text_sha256(text: str) -> str:
    """Hash of a text, used to tell whether a document's stored vector is still valid."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class Encoder:
    """Turns texts into L2-normalized float32 vectors with one loaded model."""

    def __init__(self, model: SentenceTransformer, spec: ModelSpec, batch_size: int = 64) -> None:
        self.model = model
        self.spec = spec
        self.batch_size = batch_size
        dimension = model.get_embedding_dimension()
        if dimension is None:
            dimension = int(model.encode(["dimension probe"], convert_to_numpy=True).shape[1])
        self.dimension = int(dimension)
        # One forward pass at a time: torch already uses every core, and parallel calls only thrash.
        self._lock = threading.Lock()

    @classmethod
    def load(
        cls,
        spec: ModelSpec,
        *,
        device: str | None = None,
        batch_size: int = 64,
        max_seq_length: int | None = None,
    ) -> Encoder:
        """Load the model a spec names onto the device (cuda when present, else cpu)."""
        model = load_sentence_transformer(spec, device=pick_device(device))
        if max_seq_length:
            model.max_seq_length = max_seq_length
        model.eval()
        return cls(model, spec, batch_size=batch_size)

    @property
    def version(self) -> str:
        """The model version every response names."""
        return self.spec.version

    def encode(self, texts: Sequence[str], *, label: str = "texts") -> np.ndarray:
        """Encode texts to normalized vectors, logging progress for large inputs."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        chunks: list[np.ndarray] = []
        started = time.monotonic()
        for start in range(0, len(texts), _PROGRESS_CHUNK):
            batch = list(texts[start : start + _PROGRESS_CHUNK])
            with self._lock:
                vectors = self.model.encode(
                    batch,
                    batch_size=self.batch_size,
                    convert_to_numpy=True,
                    normalize_embeddings=True,
                    show_progress_bar=False,
                )
            chunks.append(np.asarray(vectors, dtype=np.float32))
            done = min(start + _PROGRESS_CHUNK, len(texts))
            if len(texts) > _PROGRESS_CHUNK:
                rate = done / max(time.monotonic() - started, 1e-9)
                log.info("encoding %s: %d/%d (%.0f texts/s)", label, done, len(texts), rate)
        return np.ascontiguousarray(np.vstack(chunks))
