"""The measurements of benchmarks/index/index_scale.py: seeding, service start-up, search, worker memory."""

from __future__ import annotations

import hashlib
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import insert, select

from app.config import Settings
from app.db.engine import make_engine, make_session_factory, transaction
from app.db.migrate import upgrade_to_head
from app.db.models import Document
from app.db.repositories.corpora import CorpusRepository
from app.db.repositories.documents import DocumentInput, DocumentRepository
from app.serving.runtime import Runtime
from app.usecases.corpora import CorpusService
from encoders.loader import EncoderOptions, load_encoder_backend
from indexes.ann import build_ann, recall_at_k
from indexes.snapshot import ModelIdentity, SnapshotContent, save_snapshot, snapshot_dir
from indexes.spec import IndexSpec
from indexes.vector_index import Base, VectorIndex
from pairank.models import resolve_model

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench_common import percentile  # noqa: E402


def settings_for(folder: Path, model_dir: Path, **overrides: Any) -> Settings:
    """The service's settings for one benchmark corpus (SQLite in the folder unless overridden)."""
    values: dict[str, Any] = {
        "data_dir": folder / "data",
        "model": str(model_dir),
        "sync_seconds": 0,
        "checkpoint_seconds": 3600,
        # The parts time their own checkpoints: the service's loop must not start one of its own (the
        # start-up's replay of 1,000 changes would make the corpus due) and race the measures.
        "checkpoint_changes": 10**9,
        "model_cache_dir": folder.parent / "model-exports",
        **overrides,
    }
    return Settings(**values)


def seed_database(
    folder: Path, size: int, index_type: str = "flat", spec: IndexSpec | None = None, **overrides: Any
) -> np.ndarray:
    """A migrated database with corpus `bench` of `size` documents; returns their database ids."""
    settings = settings_for(folder, Path("unused"), **overrides)
    upgrade_to_head(settings.resolved_database_url)
    engine = make_engine(settings.resolved_database_url)
    sessions = make_session_factory(engine)
    with transaction(sessions) as session:
        spec = spec or IndexSpec(type=index_type)  # type: ignore[arg-type]
        corpus = CorpusRepository(session).add("bench", "claim", None, spec.to_dict())
        corpus_id = corpus.id
    now = datetime.now(UTC)
    with engine.begin() as connection:
        for start in range(0, size, 20_000):
            rows = []
            for i in range(start, min(size, start + 20_000)):
                body = f"fact-checked claim number {i} about topic {i % 997}"
                digest = hashlib.sha256(body.encode()).hexdigest()
                rows.append(
                    {
                        "corpus_id": corpus_id,
                        "external_id": f"doc-{i}",
                        "text": body,
                        "text_sha256": digest,
                        "created_at": now,
                        "updated_at": now,
                    }
                )
            connection.execute(insert(Document), rows)
        ids = connection.execute(
            select(Document.id).where(Document.corpus_id == corpus_id).order_by(Document.id)
        )
        result = np.fromiter((row[0] for row in ids), dtype=np.int64, count=size)
    engine.dispose()
    return result


def synthetic_vectors(size: int, dimension: int, seed: int = 0) -> np.ndarray:
    """Clustered unit vectors (like sentence embeddings, unlike uniform noise, they have neighbours)."""
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(max(100, size // 100), dimension)).astype(np.float32)
    centers /= np.linalg.norm(centers, axis=1, keepdims=True)
    out = np.empty((size, dimension), np.float32)
    for start in range(0, size, 100_000):
        end = min(size, start + 100_000)
        block = centers[rng.integers(0, len(centers), end - start)]
        block = block + rng.normal(0, 0.7 / np.sqrt(dimension), block.shape).astype(np.float32)
        out[start:end] = block / np.linalg.norm(block, axis=1, keepdims=True)
    return out


def identity(folder: Path, model_dir: Path) -> ModelIdentity:
    """The tiny model's identity as the service computes it (with the variant the service will run)."""
    spec = resolve_model(str(model_dir))
    loaded = load_encoder_backend(spec, EncoderOptions(cache_root=settings_for(folder, model_dir).export_dir))
    return ModelIdentity(spec.model_id, spec.version, spec.weights_sha256, 384, loaded.variant.key)


def write_snapshot(folder: Path, model_dir: Path, ids: np.ndarray, vectors: np.ndarray) -> float:
    """The injected vectors as the corpus's snapshot at mark 0, through the store's snapshot writer."""
    started = time.perf_counter()
    content = SnapshotContent(
        vectors, ids, np.ones(len(ids), bool), 0, "flat", IndexSpec(type="flat").to_dict()
    )
    settings = settings_for(folder, model_dir)
    target = snapshot_dir(settings.index_dir, 1, identity(folder, model_dir))
    save_snapshot(target, content, "bench", identity(folder, model_dir))
    return round(time.perf_counter() - started, 2)


def start_runtime(
    folder: Path, model_dir: Path, changes_before_start: int, wait: float = 600
) -> tuple[Runtime, CorpusService, float]:
    """Log `changes_before_start` new documents, then start the service (ready within `wait` seconds):
    (runtime, service, seconds)."""
    settings = settings_for(folder, model_dir)
    load_encoder_backend(
        resolve_model(str(model_dir)), EncoderOptions(cache_root=settings.export_dir)
    )  # export once, untimed
    engine = make_engine(settings.resolved_database_url)
    sessions = make_session_factory(engine)
    with transaction(sessions) as session:
        corpus = CorpusRepository(session).get("bench")
        assert corpus is not None
        inputs = []
        run = time.strftime("%Y%m%d%H%M%S")  # new ids on every run: a part may be run again on its folder
        for i in range(changes_before_start):
            body = f"a claim written after the snapshot, number {i}"
            digest = hashlib.sha256(body.encode()).hexdigest()
            inputs.append(DocumentInput(f"late-{run}-{i}", body, digest, None))
        DocumentRepository(session, corpus).upsert(inputs, {})
    engine.dispose()
    started = time.perf_counter()
    runtime = Runtime(settings)
    runtime.start_loading()
    if not runtime.serving.wait_ready(wait):
        raise RuntimeError(f"the service did not start: {runtime.serving.load_error}")
    return runtime, CorpusService(runtime), time.perf_counter() - started


def upserts_and_checkpoint(runtime: Runtime, service: CorpusService) -> dict[str, Any]:
    """200 one-document upserts through the service (p50/p95 ms), then one checkpoint (seconds), after
    any the service's own loop was writing (how long that took to end: `waited_...`)."""
    latencies = []
    for i in range(200):
        begun = time.perf_counter()
        service.upsert_documents("bench", [(f"upsert-{i % 50}", f"an updated claim number {i}", None, True)])
        latencies.append((time.perf_counter() - begun) * 1000)
    opened = runtime.serving.state().store.get("bench")
    # The service's own loop may have begun a checkpoint (the start-up's replay makes a corpus due): wait
    # for it, then time this one, so that the searches measured next run after a checkpoint, not during.
    store, asked = runtime.serving.state().store, time.perf_counter()
    while True:
        begun = time.perf_counter()
        if store.checkpoint(opened):
            break
        time.sleep(1.0)
    waited = begun - asked
    return {
        "upsert_ms": {
            "p50": round(percentile(latencies, 0.5), 2),
            "p95": round(percentile(latencies, 0.95), 2),
        },
        "checkpoint_seconds": round(time.perf_counter() - begun, 2),
        "waited_for_a_running_checkpoint_seconds": round(waited, 1),
    }


def ann_settings(size: int) -> list[IndexSpec]:
    """The ANN settings tried at a corpus size."""
    lists = 4096 if size >= 1_000_000 else None
    specs = [IndexSpec(type="ivf", nlist=lists, nprobe=p) for p in (16, 64)]
    specs.append(IndexSpec(type="ivf", nlist=lists, nprobe=64, compression="sq8"))
    # A million-vector HNSW build with M=32 takes most of an hour on 2 cores: M=16 at that size.
    m, construction = (16, 40) if size >= 1_000_000 else (32, 80)
    specs += [IndexSpec(type="hnsw", m=m, ef_construction=construction, ef_search=e) for e in (64, 128)]
    return specs


def _p50_ms(index: VectorIndex, queries: np.ndarray, k: int = 10) -> float:
    index.search(queries[:2], k)  # warm-up
    times = []
    for query in queries:
        begun = time.perf_counter()
        index.search(query[None], k)
        times.append((time.perf_counter() - begun) * 1000)
    return round(float(np.median(times)), 3)


def measure_search(vectors: np.ndarray, specs: list[IndexSpec]) -> dict[str, Any]:
    """Search p50 (one query at a time, k=10) for exact and each ANN setting, with recall@10."""
    size = len(vectors)
    ids = np.arange(size, dtype=np.int64)
    rng = np.random.default_rng(1)
    queries = vectors[rng.choice(size, 100, replace=False)] + rng.normal(0, 0.05, (100, vectors.shape[1]))
    queries = (queries / np.linalg.norm(queries, axis=1, keepdims=True)).astype(np.float32)
    flat = VectorIndex(
        vectors.shape[1], IndexSpec(type="flat"), Base(vectors, ids, np.ones(size, bool), ids, ids)
    )
    out: dict[str, Any] = {"flat": {"p50_ms": _p50_ms(flat, queries[:30]), "recall_at_10": 1.0}}
    built: dict[tuple[Any, ...], Any] = {}
    for spec in specs:
        key = (spec.type, spec.m, spec.ef_construction, spec.nlist, spec.compression)
        begun = time.perf_counter()
        if key not in built:
            built[key] = (build_ann(spec, spec.type, vectors), time.perf_counter() - begun)
        ann, build_seconds = built[key]
        index = VectorIndex(
            vectors.shape[1], spec, Base(vectors, ids, np.ones(size, bool), ids, ids, ann, spec.type)
        )
        label = _label(spec, size)
        p50 = _p50_ms(index, queries[:100])
        out[label] = {
            "p50_ms": p50,
            "speedup_vs_flat": round(out["flat"]["p50_ms"] / p50, 1),
            "recall_at_10": round(recall_at_k(ann, spec, vectors, sample=200, seed=2), 4),
            "build_seconds": round(build_seconds, 1),
        }
        print(label, out[label], file=sys.stderr)
    return out


def _label(spec: IndexSpec, size: int) -> str:
    if spec.type == "hnsw":
        return f"hnsw M={spec.m} efSearch={spec.ef_search}"
    compressed = f"-{spec.compression}" if spec.compression != "none" else ""
    return f"ivf{compressed} nlist={spec.lists(size)} nprobe={spec.nprobe}"
