"""Service settings, read once from the environment (prefix `PAIRANK_`) through `get_settings()`."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """Every knob of the service; the environment variable is `PAIRANK_<FIELD NAME IN CAPITALS>`."""

    model_config = SettingsConfigDict(env_prefix="PAIRANK_", env_file=None, extra="ignore")

    data_dir: Path = Field(
        Path("./data"),
        description="On PostgreSQL a cache only, safe to lose: models fetched from the database, exported "
        "variants, index snapshots, training runs; on SQLite also the database file and the models' files "
        "(one machine).",
    )
    database_url: str | None = Field(
        None,
        description="Any SQLAlchemy URL; production: `postgresql+psycopg://user:pass@host/db`. "
        "Default: the SQLite file `<data dir>/pairank.db`.",
    )
    vector_store: Literal["faiss", "pgvector"] = Field(
        "faiss",
        description="`faiss`: Faiss indexes in each process, following the change log (the embedded "
        "default); `pgvector`: vectors in PostgreSQL rows beside their documents, searched with pgvector "
        "HNSW, so replicas hold no index state (needs a PostgreSQL URL).",
    )
    model: str = Field(
        "default",
        description="`default` (the bundled all-MiniLM-L6-v2), a local sentence-transformers folder or "
        "training run folder, or a hub name (needs network).",
    )
    admin_api_key: str | None = Field(
        None,
        description="An admin key that lives only in the environment (never in the database); prefer "
        "database keys (`pairank keys`). Unset: no such key.",
    )
    auth: Literal["required", "disabled"] = Field(
        "required",
        description="`required`: every route but `/health` and `/ready` needs an API key; `disabled`: read "
        "and write routes are open (admin routes still need an admin key; `pairank serve --demo` sets it).",
    )
    key_cache_seconds: float = Field(
        5.0,
        ge=0.0,
        le=300.0,
        description="Seconds each process remembers a key check (so a request with a key reads no "
        "database); a key revoked through another process or `pairank keys revoke` still works this long "
        "there; 0: check every request.",
    )
    bootstrap_admin_key: str | None = Field(
        None,
        description="Stored (hashed) as the first admin key by `pairank migrate` / `serve` when the database "
        "has no active admin key; make one with `pairank keys generate`. Unset: the first admin key comes "
        "from `pairank keys create --scope admin`.",
    )
    rate_limit: float = Field(
        100.0,
        ge=0.0,
        description="Requests/s per key (per client address when auth is disabled), per worker process; "
        "0: off.",
    )
    rate_burst: int = Field(
        200, ge=1, description="Requests a caller may send at once before the rate limit answers 429."
    )
    log_format: Literal["text", "json"] = Field(
        "text",
        description="`json`: one JSON object per line with request id, route, status, duration, key id and "
        "model version; `text` reads well in a terminal.",
    )
    device: str | None = Field(
        None, description="Torch device for the model. Default: `cuda` when present, else `cpu`."
    )
    encoder_backend: Literal["auto", "torch", "onnx", "openvino"] = Field(
        "auto", description="Inference runtime; `auto`: the fastest variant that passes the quality gate."
    )
    encoder_precision: Literal["auto", "fp32", "int8", "fp16"] = Field(
        "auto",
        description="Numeric precision; `auto`: int8 on CPU, fp16 on CUDA; `int8` needs onnx or openvino, "
        "`fp16` torch on CUDA.",
    )
    encoder_threads: int | None = Field(
        None,
        ge=1,
        le=256,
        description="Threads per forward pass. Default: every core the process may use (set cores / workers "
        "when running several).",
    )
    artifact_store: Literal["auto", "database", "local"] = Field(
        "auto",
        description="Where registered models' files live: `database` (blobs; any machine loads them), "
        "`local` (the folder a model was registered from, one machine); `auto`: `database` on PostgreSQL, "
        "`local` on SQLite.",
    )
    model_cache_dir: Path | None = Field(
        None,
        description="Exported and quantized models, one folder per model version and variant. "
        "Default: `<data dir>/models`.",
    )
    micro_batching: bool = Field(
        True,
        description="Gather concurrent encode calls into shared forward passes (`false`: one pass per "
        "request, for comparison).",
    )
    encode_batch_size: int = Field(64, ge=1, le=4096, description="Most texts per model forward pass.")
    max_batch_tokens: int = Field(
        16384, ge=64, description="Most padded tokens (texts x longest) per model forward pass."
    )
    batch_wait_ms: float = Field(
        0.0,
        ge=0.0,
        le=1000.0,
        description="How long a pass of queries waits for company while callers overlap and it is not full "
        "(a lone query and bulk work start at once). 0: never; on a CPU a pass takes what queued during the "
        "one before, and a 2 ms wait measured slower at 1 to 32 clients (benchmarks/batch_wait.md).",
    )
    max_queued_texts: int = Field(
        1024,
        ge=1,
        description="Texts waiting for the encoder above which rank, duplicates and similarity answer 429 "
        "with `Retry-After`.",
    )
    bulk_batch_texts: int = Field(
        16,
        ge=1,
        le=4096,
        description="Texts per bulk encoder pass (imports, upserts, index builds) while queries are being "
        "served: a query waits for at most one such pass.",
    )
    bulk_max_wait_ms: float = Field(
        200.0,
        ge=0.0,
        le=60_000.0,
        description="A bulk chunk that waited this long runs even while queries keep coming, so bulk work "
        "slows under query load but never stops.",
    )
    rerank_batch_pairs: int = Field(
        20,
        ge=1,
        le=4096,
        description="Most (query, document) pairs per re-ranker forward pass: one request's top 20 (on 2 CPU "
        "cores bigger passes served no more and made calls wait for each other's pairs; raise it on a GPU).",
    )
    rerank_max_queued_pairs: int = Field(
        1024,
        ge=1,
        description="(query, document) pairs waiting for a re-ranker above which rank calls get 429.",
    )
    max_seq_length: int | None = Field(
        None,
        ge=8,
        le=8192,
        description="Truncate inputs to this many tokens. Default: the model's own limit.",
    )
    duplicate_threshold: float = Field(
        0.8, ge=-1.0, le=1.0, description="Cosine threshold for duplicates when a corpus has none calibrated."
    )
    embedded_worker: bool = Field(
        True,
        description="Run a job worker thread in each serving process (set `false` where `pairank worker` "
        "processes run the jobs, as in docker compose).",
    )
    job_lease_seconds: float = Field(
        30.0,
        gt=0.0,
        le=3600.0,
        description="A running job whose worker stops renewing its lease this long (killed, host lost) is "
        "failed.",
    )
    sync_seconds: float = Field(
        1.0,
        ge=0.0,
        description="How often a process polls for other processes' writes and model activations (on "
        "PostgreSQL, writes also wake it at once through `NOTIFY`); 0: never.",
    )
    checkpoint_changes: int = Field(
        1000,
        ge=1,
        description="Changes to a corpus after which its index snapshot is rewritten in the background "
        "(10x as many while queries are being served: a checkpoint rewrites the whole index).",
    )
    checkpoint_seconds: float = Field(
        60.0,
        gt=0.0,
        description="Seconds after a change when a corpus's snapshot is rewritten (and at clean shutdown).",
    )
    checkpoint_nice: int = Field(
        10,
        ge=0,
        le=19,
        description="Nice levels by which the background checkpoint thread (and the threads it starts) "
        "yields the CPU to requests (Linux; 0: the same priority as requests).",
    )
    seed_demo: bool = Field(
        False, description="Create the demo corpus at start-up (`pairank serve --demo` sets it)."
    )
    # Request limits: exceeding one is answered with 413 naming the field and the limit.
    max_text_chars: int = Field(
        10_000, ge=1, description="Characters per text (query, document, pair side); 413 above."
    )
    max_documents_per_request: int = Field(
        1_000, ge=1, description="Documents per upsert or `/v1/rank` call; 413 above."
    )
    max_pairs_per_request: int = Field(
        1_000, ge=1, description="Pairs or targets per similarity call; 413 above."
    )
    max_candidates_per_request: int = Field(
        1_000, ge=1, description="Candidate ids per corpus rank call; 413 above."
    )
    max_texts_per_request: int = Field(100, ge=1, description="Input texts per duplicates call; 413 above.")
    max_request_bytes: int = Field(
        32 * 1024 * 1024, ge=1024, description="Largest request body in bytes; 413 above."
    )
    max_import_bytes: int = Field(
        2 * 1024**3, ge=1024, description="Largest JSON-lines upload of a bulk import in bytes; 413 above."
    )
    max_evaluation_queries: int = Field(
        10_000, ge=1, description="Queries per evaluation request; 413 above."
    )
    max_evaluation_documents: int = Field(
        100_000, ge=1, description="Inline documents per evaluation request; 413 above."
    )
    # The tips inbox (docs/guides/inbox.md).
    max_inbox_items_per_request: int = Field(
        1_000, ge=1, description="Items per POST to an inbox; 413 above."
    )
    inbox_cluster_threshold: float = Field(
        0.65,
        ge=-1.0,
        le=1.0,
        description="Cosine to a cluster's centroid from which an incoming item joins it, until the desk's "
        "moves and splits calibrate the inbox's own.",
    )
    inbox_join_probability: float = Field(
        0.5,
        ge=0.0,
        le=1.0,
        description="Probability of its most probable check from which an item joins the cluster led by the "
        "same check, however far its centroid (an auto-match always does).",
    )
    inbox_rematch_seconds: float = Field(
        2.0,
        ge=0.0,
        description="How often a process re-matches inboxes' clusters against newly published documents "
        "(on PostgreSQL a document write also wakes it, at most once per this period); 0: never in this "
        "process.",
    )
    inbox_rematch_floor: float = Field(
        0.5,
        ge=-1.0,
        le=1.0,
        description="Cosine of a new document to a cluster's centroid from which it is decided again.",
    )
    webhook_attempts: int = Field(8, ge=1, le=100, description="Attempts per webhook event before it fails.")
    webhook_backoff_seconds: float = Field(
        2.0, gt=0.0, description="First retry delay of a webhook event; doubled each attempt, with jitter."
    )
    webhook_timeout_seconds: float = Field(5.0, gt=0.0, description="Timeout of one webhook POST.")
    webhook_poll_seconds: float = Field(
        5.0,
        ge=0.0,
        description="How often a process looks for due webhook events (an idle process's database reads "
        "stay under two transactions a second); 0: never in this process.",
    )

    @model_validator(mode="after")
    def _pgvector_needs_postgresql(self) -> Settings:
        if self.vector_store == "pgvector" and not self.resolved_database_url.startswith("postgresql"):
            raise ValueError(
                "PAIRANK_VECTOR_STORE=pgvector keeps vectors in PostgreSQL: set PAIRANK_DATABASE_URL to a "
                "postgresql+psycopg:// URL (a server with the pgvector extension), or use faiss"
            )
        return self

    @property
    def resolved_database_url(self) -> str:
        """The configured database URL, or the embedded SQLite file under the data dir."""
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.data_dir / 'pairank.db').resolve()}"

    @property
    def export_dir(self) -> Path:
        """Folder of cached encoder exports (one subfolder per model version and variant)."""
        return self.model_cache_dir or self.data_dir / "models"

    @property
    def resolved_artifact_store(self) -> str:
        """`database` or `local`: the configured store, or the database's default."""
        if self.artifact_store != "auto":
            return self.artifact_store
        return "database" if self.resolved_database_url.startswith("postgresql") else "local"

    @property
    def artifact_cache_dir(self) -> Path:
        """Verified copies of models fetched from the database store, one folder per manifest sha256."""
        return self.data_dir / "models" / "cache"

    @property
    def index_dir(self) -> Path:
        """Folder holding one index bundle per corpus and model."""
        return self.data_dir / "indexes"


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings, read from the environment on first use."""
    return Settings()
