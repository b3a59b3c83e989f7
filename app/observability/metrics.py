"""Prometheus metrics with prometheus-client, correct under several uvicorn workers.

`pairank serve` points PROMETHEUS_MULTIPROC_DIR at an emptied folder before uvicorn starts its workers;
each worker then writes its counters and histograms to memory-mapped files there, and a scrape answered
by any worker sums every worker's (prometheus-client's multiprocess mode). Without the variable (tests,
an embedded app) the process's own registry is used. Values that live in the database (documents per
corpus, jobs by state) or describe the answering worker (model, index checkpoints) are read at scrape
time instead of being kept as counters.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
    values,
)
from prometheus_client.core import GaugeMetricFamily, InfoMetricFamily, Metric
from prometheus_client.registry import Collector

# Decided by prometheus-client when it was first imported (from the environment variable).
_MULTIPROCESS = values.ValueClass is not values.MutexValue
_LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)

REQUESTS = Counter("pairank_http_requests_total", "HTTP requests answered.", ["method", "route", "status"])
LATENCY = Histogram(
    "pairank_http_request_duration_seconds",
    "Time from request to the last byte of the response.",
    ["method", "route"],
    buckets=_LATENCY_BUCKETS,
)
BATCH_TEXTS = Histogram(
    "pairank_encoder_batch_texts",
    "Texts per encoder forward pass (micro-batching gathers concurrent requests into one).",
    buckets=(1, 2, 4, 8, 16, 32, 64, 128, 256),
)
BATCH_SECONDS = Histogram(
    "pairank_encoder_batch_seconds", "Time of one encoder pass.", buckets=_LATENCY_BUCKETS
)
QUEUED_TEXTS = Gauge(
    "pairank_encoder_queued_texts",
    "Texts waiting for the encoder after the latest pass, summed over live workers.",
    multiprocess_mode="livesum",
)
REJECTED_TEXTS = Counter(
    "pairank_encoder_rejected_texts_total", "Texts refused with 429 because the encoder queue was full."
)
STAGE_SECONDS = Histogram(
    "pairank_request_stage_seconds",
    "Time a request spent in each stage (queue, encode, search, resolve): the Server-Timing header's.",
    ["stage"],
    buckets=(0.0005, 0.001, 0.0025, *_LATENCY_BUCKETS),
)
RATE_LIMITED = Counter("pairank_rate_limited_total", "Requests refused with 429 by the per-key rate limit.")


class EncoderMetrics:
    """The encoder's BatchObserver: pass sizes, pass times, queue depth and refusals."""

    def batch_done(self, texts: int, seconds: float, queued: int) -> None:
        """Record one forward pass."""
        BATCH_TEXTS.observe(texts)
        BATCH_SECONDS.observe(seconds)
        QUEUED_TEXTS.set(queued)

    def rejected(self, texts: int) -> None:
        """Record texts refused because the queue was full."""
        REJECTED_TEXTS.inc(texts)


ENCODER_METRICS = EncoderMetrics()


@dataclass
class ScrapeState:
    """What a scrape reads from the database and the answering worker."""

    ready: bool
    model: dict[str, str] | None = None
    documents: dict[str, int] = field(default_factory=dict)
    jobs: dict[tuple[str, str], int] = field(default_factory=dict)
    checkpoint_age_seconds: dict[str, float] = field(default_factory=dict)
    changes_since_checkpoint: dict[str, int] = field(default_factory=dict)
    checkpoint_failures: dict[str, int] = field(default_factory=dict)
    index_vectors: dict[str, int] = field(default_factory=dict)
    model_artifact_bytes: dict[str, int] = field(default_factory=dict)
    artifact_store_bytes: int = 0


class _StateCollector(Collector):
    def __init__(self, state: ScrapeState) -> None:
        self.state = state

    def collect(self) -> Iterable[Metric]:
        state = self.state
        yield GaugeMetricFamily(
            "pairank_ready", "1 when the model and indexes serve.", value=int(state.ready)
        )
        if state.model is not None:
            info = InfoMetricFamily("pairank_model", "The model version this worker serves.")
            info.add_metric([], state.model)
            yield info
        yield from _by("pairank_documents", "Documents per corpus (database).", "corpus", state.documents)
        jobs = GaugeMetricFamily(
            "pairank_jobs", "Admin jobs by kind and state (database).", labels=["kind", "state"]
        )
        for (kind, status), count in sorted(state.jobs.items()):
            jobs.add_metric([kind, status], count)
        yield jobs
        yield from _by(
            "pairank_index_checkpoint_age_seconds",
            "Seconds since the corpus's index snapshot was written (answering worker).",
            "corpus",
            state.checkpoint_age_seconds,
        )
        yield from _by(
            "pairank_index_changes_since_checkpoint",
            "Changes a restart would replay from the change log (answering worker).",
            "corpus",
            state.changes_since_checkpoint,
        )
        yield from _by(
            "pairank_index_checkpoint_failures",
            "Checkpoints of the corpus that failed in a row, 0 once one is written (answering worker).",
            "corpus",
            {name: state.checkpoint_failures.get(name, 0) for name in state.changes_since_checkpoint},
        )
        yield from _by(
            "pairank_index_vectors", "Vectors in the corpus's index.", "corpus", state.index_vectors
        )
        yield from _by(
            "pairank_model_artifact_bytes",
            "Bytes of each registered model's stored files (database).",
            "version",
            state.model_artifact_bytes,
        )
        yield GaugeMetricFamily(
            "pairank_artifact_store_bytes",
            "Bytes the artifact store holds for every model, shared files counted once (database).",
            value=state.artifact_store_bytes,
        )


def _by(
    name: str, documentation: str, label: str, values: dict[str, float] | dict[str, int]
) -> Iterator[Metric]:
    family = GaugeMetricFamily(name, documentation, labels=[label])
    for key, value in sorted(values.items()):
        family.add_metric([key], value)
    yield family


def render(state: ScrapeState) -> tuple[bytes, str]:
    """The exposition text for one scrape: every worker's counters, plus the scrape-time values."""
    if _MULTIPROCESS:
        shared = CollectorRegistry()
        multiprocess.MultiProcessCollector(shared)
        counters = generate_latest(shared)
    else:
        counters = generate_latest(REGISTRY)
    scraped = CollectorRegistry()
    scraped.register(_StateCollector(state))
    return counters + generate_latest(scraped), CONTENT_TYPE_LATEST


def worker_exited() -> None:
    """Drop this worker's live gauges from the sums (multiprocess mode only)."""
    if _MULTIPROCESS:
        multiprocess.mark_process_dead(os.getpid())
