"""The one encoder every part of the service uses: a quality-gated backend behind one micro-batcher.

Interactive calls (rank, duplicates, similarity) use `encode`; bulk work (upserts, index builds,
evaluations, calibration, the retraining gate) uses `encode_bulk`, which goes through the same worker in
chunks behind any waiting query and logs its progress.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from app.config import Settings
from app.core.errors import OverloadedError
from app.observability.timing import record_encoding
from encoders.batcher import BatchingConfig, BatchObserver, EncoderOverloaded, MicroBatcher, Priority
from encoders.loader import EncoderOptions, LoadedEncoder, load_encoder_backend
from pairank.models import ModelSpec

log = logging.getLogger(__name__)
_PROGRESS_EVERY = 2048


def encoder_options(settings: Settings, max_seq_length: int | None = None) -> EncoderOptions:
    """How this service runs a model (bi-encoder or cross-encoder): backend, precision, export cache,
    device and threads from the settings; `max_seq_length` a token limit other than the model's."""
    return EncoderOptions(
        backend=settings.encoder_backend,
        precision=settings.encoder_precision,
        cache_root=settings.export_dir,
        device=settings.device,
        max_seq_length=max_seq_length,
        threads=settings.encoder_threads,
    )


def batching_config(settings: Settings, reranker: bool = False) -> BatchingConfig:
    """The micro-batcher's settings: the encoder's, or a re-ranker's (its passes and queue count pairs)."""
    config = BatchingConfig(
        max_batch_texts=settings.encode_batch_size,
        max_batch_tokens=settings.max_batch_tokens,
        wait_ms=settings.batch_wait_ms,
        max_queued_texts=settings.max_queued_texts,
        enabled=settings.micro_batching,
        bulk_batch_texts=settings.bulk_batch_texts,
        bulk_max_wait_ms=settings.bulk_max_wait_ms,
    )
    if not reranker:
        return config
    return replace(
        config, max_batch_texts=settings.rerank_batch_pairs, max_queued_texts=settings.rerank_max_queued_pairs
    )


class Encoder:
    """Turns texts into L2-normalized float32 vectors with one loaded model version."""

    def __init__(
        self,
        loaded: LoadedEncoder,
        spec: ModelSpec,
        batching: BatchingConfig | None = None,
        observer: BatchObserver | None = None,
    ) -> None:
        self.loaded = loaded
        self.spec = spec
        self.dimension = int(loaded.backend.dimension)
        self.batcher = MicroBatcher(loaded.backend, batching, observer)

    @classmethod
    def load(
        cls,
        spec: ModelSpec,
        options: EncoderOptions,
        batching: BatchingConfig | None = None,
        observer: BatchObserver | None = None,
    ) -> Encoder:
        """Load the best passing variant of a model version (exported and cached on first use)."""
        return cls(load_encoder_backend(spec, options), spec, batching, observer)

    @property
    def version(self) -> str:
        """The model version every response names."""
        return self.spec.version

    @property
    def backend(self) -> str:
        """The runtime serving this model: torch, onnx or openvino."""
        return self.loaded.variant.backend

    @property
    def precision(self) -> str:
        """fp32, int8 or fp16."""
        return self.loaded.variant.precision

    def describe(self) -> dict[str, Any]:
        """Backend, precision and quality-gate outcome, for /ready and the model registry."""
        return {
            "backend": self.backend,
            "precision": self.precision,
            "quality": self.loaded.quality,
            "fallbacks": self.loaded.attempts,
            "micro_batching": self.batcher.config.enabled,
        }

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Encode an interactive request; OverloadedError (429) when the queue is over its limit."""
        try:
            return self.batcher.encode(texts, Priority.INTERACTIVE, timings=record_encoding)
        except EncoderOverloaded as error:
            raise OverloadedError(str(error), error.retry_after, error.limit) from error

    def encode_bulk(self, texts: Sequence[str], *, label: str = "texts") -> np.ndarray:
        """Encode bulk work behind interactive calls, logging progress on large inputs."""
        started = time.monotonic()
        last_logged = [0]

        def progress(done: int) -> None:
            if len(texts) > _PROGRESS_EVERY and (
                done - last_logged[0] >= _PROGRESS_EVERY or done == len(texts)
            ):
                last_logged[0] = done
                rate = done / max(time.monotonic() - started, 1e-9)
                log.info("encoding %s: %d/%d (%.0f texts/s)", label, done, len(texts), rate)

        return self.batcher.encode(texts, Priority.BULK, progress)

    def close(self) -> None:
        """Stop the encoder's worker thread."""
        self.batcher.close()
