"""Compact vector indexes at scale: today's float32 IVF against IVF-sq8, IVF-PQ and IVF-PQ4 (fast scan)
refined from float16 rows, 384-d clustered unit vectors (1M by default), each built by the store's own
checkpoint code and searched from its memory-mapped snapshot as a worker does.

Per setting, a fresh process maps the snapshot and runs 500 warm-up queries (so every page searches touch is
resident), then measures p50 (one query at a time, k = 10), recall@10 against exact float32 search, and its
resident memory split by mapping: the IVF lists (ann.faiss), the float16 rows, the float32 rows (untouched
by these searches) and private memory. A second process measures p50 with the float16 rows evicted from the
page cache first (a cold refine). The results go into benchmarks/index_scale.json under "compact" and the
"Compact indexes" section of benchmarks/index_scale.md.

    nice -n 10 .venv/bin/python benchmarks/index/index_compact.py [--size 1000000] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import faiss
import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO), str(REPO / "benchmarks")]
from bench_common import command_line, machine, mapping_rss  # noqa: E402

from indexes.checkpoint import checkpoint  # noqa: E402
from indexes.snapshot import ModelIdentity, load_snapshot  # noqa: E402
from indexes.spec import IndexSpec  # noqa: E402
from indexes.vector_index import Base, VectorIndex  # noqa: E402

DIMENSION = 384
MODEL = ModelIdentity("bench", "bench@1", None, DIMENSION)
# Mapped files by what they hold; everything else (anonymous memory, and the other mapped files: ids,
# BM25's, libraries) is counted as the process's own, "private".
MAPPINGS = {
    "ann.faiss": "ivf_lists",
    "ann.tail.faiss": "ivf_lists",
    "ann.lists": "ivf_lists",
    "vectors.f16": "float16_rows",
    "vectors.f32": "float32_rows",
    "vectors.f16.npy": "float16_rows",
    "vectors.npy": "float32_rows",
}  # snapshot formats 3 and 2


def kinds(lists: int) -> dict[str, IndexSpec]:
    """Today's default IVF and the refined compact kinds, with `lists` lists each, by folder name."""
    return {
        "ivf": IndexSpec(type="ivf", nlist=lists),
        "ivf-sq8": IndexSpec(type="ivf", nlist=lists, compression="sq8", refine=100),
        "ivf-pq": IndexSpec(type="ivf", nlist=lists, compression="pq", pq_m=48, refine=200),
        # The same 48 bytes a vector as 4-bit fast-scan codes: coarser scores, re-scored deeper.
        "ivf-pq4": IndexSpec(type="ivf", nlist=lists, compression="pq4", pq_m=48, refine=1000),
    }


def label(spec: IndexSpec) -> str:
    """A setting's name in the report."""
    name = "ivf" if spec.compression == "none" else f"ivf-{spec.compression}"
    name += f" m={spec.pq_m}" if spec.compression in ("pq", "pq4") else ""
    return name + f" nprobe={spec.nprobe}" + (f" refine={spec.refine}" if spec.refined("ivf") else "")


def resident_bytes() -> dict[str, int]:
    """This process's resident memory by mapping kind (from /proc/self/smaps)."""
    out = dict.fromkeys([*MAPPINGS.values(), "private", "total"], 0)
    for path, rss in mapping_rss():
        out[MAPPINGS.get(Path(path).name, "private") if path else "private"] += rss
        out["total"] += rss
    return out


def measure(folder: Path, spec: IndexSpec, work: Path, cold: bool) -> dict[str, Any]:
    """In this process: map the snapshot, warm up (unless cold), then p50, recall@10 and memory."""
    queries, warm, truth = (np.load(work / f"{name}.npy") for name in ("queries", "warm", "truth"))
    refine_file = next(folder.glob("gen-*/vectors.f16"), None)
    if cold and refine_file is not None:
        with refine_file.open("rb") as handle:
            os.posix_fadvise(handle.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
    loaded = load_snapshot(folder, MODEL)
    assert loaded is not None
    index = VectorIndex(DIMENSION, spec, loaded.base)
    if not cold:
        for query in warm[:500]:  # 500 x nprobe probes: every list is touched
            index.search(query[None], 10)
    times, found = [], []
    for query in queries:
        begun = time.perf_counter()
        found.append([doc_id for doc_id, _ in index.search(query[None], 10)[0]])
        times.append((time.perf_counter() - begun) * 1000)
    hits = sum(len(set(f) & set(t.tolist())) for f, t in zip(found, truth, strict=True))
    return {
        "p50_ms": round(float(np.median(times)), 3),
        "recall_at_10": round(hits / truth.size, 4),
        "resident_mib": {k: round(v / 2**20, 1) for k, v in resident_bytes().items()},
    }


def prepare(size: int, work: Path) -> np.ndarray:
    """The corpus; queries (perturbed stored rows), warm-up queries and the exact top 10 saved in `work`."""
    from index_scale_parts import synthetic_vectors

    vectors = synthetic_vectors(size, DIMENSION)
    rng = np.random.default_rng(1)
    picked = vectors[rng.choice(size, 1200, replace=False)] + rng.normal(0, 0.05, (1200, DIMENSION))
    picked = (picked / np.linalg.norm(picked, axis=1, keepdims=True)).astype(np.float32)
    queries, warm = picked[:200], picked[200:]
    _, truth = faiss.knn(queries, vectors, 10, faiss.METRIC_INNER_PRODUCT)
    for name, array in (("queries", queries), ("warm", warm), ("truth", truth)):
        np.save(work / f"{name}.npy", array)
    return vectors


def build(spec: IndexSpec, folder: Path, vectors: np.ndarray) -> dict[str, Any]:
    """Build one kind by a checkpoint into `folder`; its cost is kept in build.json for --reuse."""
    shutil.rmtree(folder, ignore_errors=True)
    ids = np.arange(len(vectors), dtype=np.int64)
    index = VectorIndex(DIMENSION, spec, Base(vectors, ids, np.ones(len(vectors), bool), ids, ids))
    result = checkpoint(index, folder, "bench", MODEL)
    generation = result.snapshot.base.source
    assert generation is not None
    # Format 3 row files (vectors.f32, vectors.f16) and format 2's (.npy).
    kept = (".npy", ".faiss", ".f16", ".f32")
    files = {p.name: p.stat().st_size for p in generation.iterdir() if p.suffix in kept}
    built = {
        "build_seconds": round(result.seconds, 1),
        "checkpoint_recall_at_10": result.snapshot.manifest["recall_at_10"],
        "disk_mib": {name: round(bytes_ / 2**20, 1) for name, bytes_ in files.items() if bytes_ > 2**20},
    }
    (folder / "build.json").write_text(json.dumps(built))
    return built


def run(size: int, lists: int, nprobes: list[int], work: Path, reuse: bool) -> dict[str, Any]:
    """Build every kind by a checkpoint (unless reused), then measure each setting in fresh processes."""
    vectors = None if reuse and (work / "truth.npy").is_file() else prepare(size, work)
    out: dict[str, Any] = {"size": size, "lists": lists, "kinds": {}}
    for kind, spec in kinds(lists).items():
        folder = work / kind
        if reuse and (folder / "build.json").is_file():
            built = json.loads((folder / "build.json").read_text())
        else:
            vectors = prepare(size, work) if vectors is None else vectors
            built = build(spec, folder, vectors)
        for nprobe in nprobes:
            tuned = IndexSpec.from_dict({**spec.to_dict(), "nprobe": nprobe})
            row = dict(built)
            for cold in (False, True) if tuned.refine else (False,):
                command = [sys.executable, __file__, "--measure", str(folder), "--workdir", str(work)]
                command += ["--spec", json.dumps(tuned.to_dict()), *(["--cold"] if cold else [])]
                done = subprocess.run(command, check=True, capture_output=True, text=True)
                measured = json.loads(done.stdout)
                row.update(measured if not cold else {"cold_refine_p50_ms": measured["p50_ms"]})
            out["kinds"][label(tuned)] = row
            print(label(tuned), row, file=sys.stderr)
    return out


def main(argv: list[str] | None = None) -> int:
    """Run the comparison (or, with --measure, one measuring process) and merge it into the report."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size", type=int, default=1_000_000)
    # Fewer lists than index_scale.py's 4096: training 4096 centroids three times takes most of an hour
    # on 2 shared cores, and the kinds differ in what the lists hold, not in how many there are.
    parser.add_argument("--nlist", type=int, default=1024)
    parser.add_argument("--nprobe", type=int, nargs="+", default=[32, 128])
    parser.add_argument("--reuse", action="store_true", help="measure the snapshots built by a previous run")
    parser.add_argument("--workdir", type=Path, default=REPO / "data" / "bench-index-compact")
    parser.add_argument("--output-dir", type=Path, default=REPO / "benchmarks")
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--spec", help=argparse.SUPPRESS)
    parser.add_argument("--cold", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.measure:
        spec = IndexSpec.from_dict(json.loads(args.spec))
        print(json.dumps(measure(args.measure, spec, args.workdir, args.cold)))
        return 0
    args.workdir.mkdir(parents=True, exist_ok=True)
    compact = run(args.size, args.nlist, args.nprobe, args.workdir, args.reuse)
    threads = os.environ.get("OMP_NUM_THREADS")  # a run with one thread per k-means says so
    compact["command"] = (f"OMP_NUM_THREADS={threads} " if threads else "") + command_line(
        "index/index_compact.py", argv
    )
    compact["machine"] = machine()
    report = args.output_dir / "index_scale.json"
    payload = json.loads(report.read_text(encoding="utf-8"))
    previous = payload.get("compact") or {}
    if args.reuse and (previous.get("size"), previous.get("lists")) == (args.size, args.nlist):
        compact["kinds"] = {**previous["kinds"], **compact["kinds"]}  # settings measured before stay
    payload["compact"] = compact
    report.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    from index_scale_report import to_markdown

    (args.output_dir / "index_scale.md").write_text(to_markdown(payload), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
