"""Cross-encoder re-rankers of registered versions: loaded on first use, each behind its own micro-batcher.

A re-ranker is exported and gated like the encoder (encoders/cross_export.py: int8 where it passes the
score-order gate, else torch fp32, the reason logged), and concurrent re-rank requests queue their
(query, document) pairs in one `MicroBatcher` (the encoder's wait and token settings) whose passes
hold at most PAIRANK_RERANK_BATCH_PAIRS pairs: one request's top 20 by default, since pooling requests
into passes of 64 pairs served no more on 2 CPU cores and made each wait for the others' pairs (smaller
requests still share passes); more than PAIRANK_RERANK_MAX_QUEUED_PAIRS waiting pairs answer 429 with
Retry-After. At most `keep` versions stay loaded (least recently used dropped; its worker closed a
while later).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from app.config import Settings
from app.core.errors import RetryLaterError
from app.observability.timing import record
from app.serving.encoder import batching_config, encoder_options
from app.serving.other_models import OtherModels
from app.serving.registry import ModelRegistry
from encoders.batcher import BatchingConfig, EncoderOverloaded, MicroBatcher
from encoders.cross_backend import activate
from encoders.cross_export import CrossEncoderLoader
from encoders.loader import LoadedEncoder
from pairank.models import CROSS_ENCODER, ModelSpec

log = logging.getLogger(__name__)
QUEUE_SETTING = "PAIRANK_RERANK_MAX_QUEUED_PAIRS"


class Reranker:
    """Scores (query, document) pairs with one loaded cross-encoder version."""

    def __init__(
        self, loaded: LoadedEncoder, spec: ModelSpec, batching: BatchingConfig | None = None
    ) -> None:
        self.loaded = loaded
        self.spec = spec
        self.activation = str(getattr(loaded.backend, "activation", "identity"))
        self.batcher = MicroBatcher(loaded.backend, batching)

    @property
    def version(self) -> str:
        """The cross-encoder's registered version."""
        return self.spec.version

    def describe(self) -> dict[str, Any]:
        """Backend, precision and quality-gate outcome."""
        variant = self.loaded.variant
        return {"backend": variant.backend, "precision": variant.precision, "quality": self.loaded.quality,
                "fallbacks": self.loaded.attempts}  # fmt: skip

    def score(self, query: str, documents: Sequence[str]) -> np.ndarray:
        """The cross-encoder's score of each (query, document), in order; RetryLaterError (429) when more
        pairs wait than the queue's limit."""
        started = time.perf_counter()
        pairs = [(query, document) for document in documents]
        try:
            logits = self.batcher.encode_tokens(self.loaded.backend.tokenize(pairs), timings=_timings)
        except EncoderOverloaded as error:
            message = (f"the re-ranker queue holds {error.queued} pairs, over the limit of {error.limit} "
                       f"({QUEUE_SETTING}); retry after {error.retry_after} s")  # fmt: skip
            raise RetryLaterError(message, error.retry_after, error.limit, QUEUE_SETTING) from error
        finally:
            record("rerank", time.perf_counter() - started)
        return activate(logits, self.activation)

    def close(self) -> None:
        """Stop the re-ranker's worker thread."""
        self.batcher.close()


def _timings(queued: float, scoring: float) -> None:
    record("rerank_queue", queued)


def load_reranker(settings: Settings, spec: ModelSpec) -> Reranker:
    """Load a cross-encoder with the service's backend, precision, device and batching settings."""
    options = encoder_options(settings)  # pairs keep the cross-encoder's own token limit
    batching = batching_config(settings, reranker=True)
    log.info("loading re-ranker %s from %s", spec.version, spec.path)
    reranker = Reranker(CrossEncoderLoader(spec, options).load(), spec, batching)
    log.info("re-ranker %s runs on %s", spec.version, reranker.loaded.variant.key)
    return reranker


class Rerankers:
    """The re-rankers this process has loaded, by version (resolved through the model registry)."""

    def __init__(self, settings: Settings, registry: ModelRegistry, keep: int = 2) -> None:
        self._registry = registry
        self._models: OtherModels[Reranker] = OtherModels(lambda spec: load_reranker(settings, spec), keep)

    def get(self, version: str) -> Reranker:
        """The re-ranker of a registered cross-encoder version, loaded (exported, gated) on first use;
        NotFoundError when not registered, ConflictError when it is not a cross-encoder."""
        return self._models.encoder(version, lambda: self._registry.spec(version, CROSS_ENCODER))

    def loaded(self) -> list[str]:
        """The versions loaded now, least recently used first."""
        return self._models.loaded()

    def close(self) -> None:
        """Close every loaded re-ranker (process shutdown)."""
        self._models.close()
