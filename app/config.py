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

    data_dir: Path = Field(Path("./data"), description="Database (SQLite default), index bundles and models.")
    database_url: str | None = Field(
        None, description="SQLAlchemy URL; default: SQLite file in the data dir."
    )
    vector_store: Literal["faiss", "pgvector"] = Field(
        "faiss",
        description="`faiss`: indexes in each process (embedded default); `pgvector`: vectors in PostgreSQL.",
    )
    model: str = Field(
        "default", description="`default` (bundled all-MiniLM-L6-v2), a local folder or a hub name."
    )
    admin_api_key: str | None = Field(
        None, description="A key with the admin scope, from the environment (database keys: `pairank keys`)."
    )
    auth: Literal["required", "disabled"] = Field(
        "required", description="`disabled` opens read and write routes without a key (admin routes never)."
    )
    key_cache_seconds: float = Field(
        5.0,
        ge=0.0,
        le=300.0,
        description="Seconds a process remembers a key check (revoked elsewhere: works this long). 0: off.",
    )
    bootstrap_admin_key: str | None = Field(
        None, description="Stored as the first admin key at start-up when the database has none."
    )
    rate_limit: float = Field(
        100.0, ge=0.0, description="Requests/s per key (per address without auth), per process; 0: off."
    )
    rate_burst: int = Field(
        200, ge=1, description="Requests a caller may send at once before the rate bites."
    )
    log_format: Literal["text", "json"] = Field("text", description="`json`: one JSON object per log line.")
    device: str | None = Field(
        None, description="Torch device for the model; default: cuda if present, else cpu."
    )
    encoder_backend: Literal["auto", "torch", "onnx", "openvino"] = Field(
        "auto", description="Inference runtime; `auto`: the fastest variant that passes the quality gate."
    )
    encoder_precision: Literal["auto", "fp32", "int8", "fp16"] = Field(
        "auto", description="Numeric precision; `auto`: int8 on CPU (onnx/openvino), fp16 on CUDA (torch)."
    )
    encoder_threads: int | None = Field(
        None, ge=1, le=256, description="Threads per forward pass; default: every core the process may use."
    )
    artifact_store: Literal["auto", "database", "local"] = Field(
        "auto",
        description="Where registered models' files live: `database` (blobs; any machine loads them), "
        "`local` (the registering folder, one machine); `auto`: database on PostgreSQL, local on SQLite.",
    )
    model_cache_dir: Path | None = Field(
        None, description="Exported and quantized models, per model version; default: <data dir>/models."
    )
    micro_batching: bool = Field(
        True,
        description="Gather concurrent encode calls into shared forward passes (false: one per request).",
    )
    encode_batch_size: int = Field(64, ge=1, le=4096, description="Most texts per model forward pass.")
    max_batch_tokens: int = Field(
        16384, ge=64, description="Most padded tokens (texts x longest) per model forward pass."
    )
    batch_wait_ms: float = Field(
        2.0, ge=0.0, le=1000.0, description="How long a forward pass waits for company when not full."
    )
    max_queued_texts: int = Field(
        1024, ge=1, description="Texts waiting for the encoder above which interactive calls get 429."
    )
    rerank_max_queued_pairs: int = Field(
        1024,
        ge=1,
        description="(query, document) pairs waiting for a re-ranker above which rank calls get 429.",
    )
    max_seq_length: int | None = Field(
        None, ge=8, le=8192, description="Truncate inputs to this many tokens."
    )
    duplicate_threshold: float = Field(
        0.8, ge=-1.0, le=1.0, description="Cosine threshold for duplicates when a corpus has none calibrated."
    )
    embedded_worker: bool = Field(
        True,
        description="Run a job worker thread in each serving process (false: `pairank worker` runs jobs).",
    )
    job_lease_seconds: float = Field(
        30.0,
        gt=0.0,
        le=3600.0,
        description="A job whose worker has not renewed its lease this long is failed.",
    )
    sync_seconds: float = Field(
        1.0,
        ge=0.0,
        description="Seconds between a worker's checks for other workers' writes and model activations.",
    )
    checkpoint_changes: int = Field(
        1000, ge=1, description="Changes to a corpus after which its index snapshot is rewritten."
    )
    checkpoint_seconds: float = Field(
        60.0, gt=0.0, description="Seconds after which a changed corpus's index snapshot is rewritten."
    )
    seed_demo: bool = Field(False, description="Create the demo corpus at start-up when it does not exist.")
    # Request limits: exceeding one is answered with 413 naming the field and the limit.
    max_text_chars: int = Field(10_000, ge=1, description="Characters per text (query, document, pair side).")
    max_documents_per_request: int = Field(1_000, ge=1, description="Documents per upsert or /v1/rank call.")
    max_pairs_per_request: int = Field(1_000, ge=1, description="Pairs (or targets) per similarity call.")
    max_candidates_per_request: int = Field(1_000, ge=1, description="Candidate ids per corpus rank call.")
    max_texts_per_request: int = Field(100, ge=1, description="Input texts per duplicates call.")
    max_request_bytes: int = Field(32 * 1024 * 1024, ge=1024, description="Largest accepted request body.")
    max_import_bytes: int = Field(
        2 * 1024**3, ge=1024, description="Largest JSON-lines upload of a bulk import (413 above)."
    )
    max_evaluation_queries: int = Field(10_000, ge=1, description="Queries per evaluation request.")
    max_evaluation_documents: int = Field(
        100_000, ge=1, description="Inline documents per evaluation request."
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
