"""GPU measurements, run on a machine with an NVIDIA GPU (benchmarks/gpu.md has the commands and results).

    python benchmarks/encode/gpu.py faiss --out gpu_faiss.json     # Faiss CPU vs GPU: kNN, k-means, search
    python benchmarks/encode/gpu.py encode --out gpu_encode.json   # sentences/s: GPU fp32, fp16, its CPU
    python benchmarks/encode/gpu.py runs --out gpu_runs.json DIR   # per epoch: time, ordering, peak memory

Each timing is the median of several calls after a warm-up call, CPU and GPU measured side by side in
one process on the same data. Inputs are random unit vectors (Faiss) or real dev-set sentences (encode).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))


def timed(fn: Callable[[], Any], repeat: int) -> float:
    """Median seconds of `repeat` calls after one warm-up call."""
    fn()
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def unit_rows(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    """`n` random unit vectors of dimension `d` (float32)."""
    x = rng.standard_normal((n, d), dtype=np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x


def gpu_info() -> dict[str, Any]:
    """The GPU, driver and library versions this run used."""
    import subprocess

    import faiss
    import torch

    smi = subprocess.run(
        ["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    return {
        "nvidia_smi": smi,
        "torch": torch.__version__,
        "torch_cuda": torch.version.cuda,
        "faiss": faiss.__version__,
        "faiss_gpus": faiss.get_num_gpus() if hasattr(faiss, "get_num_gpus") else 0,
        "cpu_threads": faiss.omp_get_max_threads(),
    }


def faiss_bench(args: argparse.Namespace) -> dict[str, Any]:
    """Exact kNN (self-kNN as in example-based ordering), k-means and one-query search: CPU vs GPU."""
    import faiss

    from indexes.gpu import gpu_resources
    from indexes.knn import knn_search

    rng = np.random.default_rng(0)
    res = gpu_resources()
    d = 384
    out: dict[str, Any] = {"info": gpu_info()}

    x, q = unit_rows(rng, 100_000, d), unit_rows(rng, 1_000, d)
    cpu_scores, cpu_ids = faiss.knn(q, x, 100, metric=faiss.METRIC_INNER_PRODUCT)
    gpu_scores, gpu_ids = faiss.knn_gpu(res, q, x, 100, metric=faiss.METRIC_INNER_PRODUCT)
    api_scores, api_ids = knn_search(x, q, 100)  # pairank's own entry point (GPU above GPU_MIN_WORK)
    same = [len(set(a) & set(b)) / 100 for a, b in zip(cpu_ids, gpu_ids, strict=True)]
    out["agreement"] = {
        "shape": "1,000 queries x 100,000 vectors, k=100",
        "mean_overlap_gpu_cpu": float(np.mean(same)),
        "max_abs_score_diff": float(np.abs(cpu_scores - gpu_scores).max()),
        "api_equals_gpu": bool((api_ids == gpu_ids).all()),
    }
    print("agreement", out["agreement"], flush=True)

    knn_rows = []
    for n, k in (
        (500, 500),
        (1_000, 500),
        (2_000, 500),
        (4_000, 500),
        (8_000, 500),
        (16_000, 500),
        (64_000, 500),
    ):
        x = unit_rows(rng, n, d)
        repeat = 5 if n <= 16_000 else 2
        cpu = timed(
            lambda x=x, k=k: faiss.knn(x, x, min(k + 1, len(x)), metric=faiss.METRIC_INNER_PRODUCT), repeat
        )
        gpu = timed(
            lambda x=x, k=k: faiss.knn_gpu(res, x, x, min(k + 1, len(x)), metric=faiss.METRIC_INNER_PRODUCT),
            repeat,
        )
        row = {
            "n": n,
            "k": k + 1,
            "work": float(n) * n * d,
            "cpu_s": cpu,
            "gpu_s": gpu,
            "speed_up": cpu / gpu,
        }
        knn_rows.append(row)
        print("self-knn", row, flush=True)
    out["self_knn"] = knn_rows

    x = unit_rows(rng, 100_000, d)
    km_rows = []
    for clusters in (256, 1024):
        cpu = timed(lambda c=clusters: faiss.Kmeans(d, c, niter=20, seed=1, gpu=False).train(x), 1)
        gpu = timed(lambda c=clusters: faiss.Kmeans(d, c, niter=20, seed=1, gpu=True).train(x), 1)
        km_rows.append({"n": len(x), "clusters": clusters, "cpu_s": cpu, "gpu_s": gpu, "speed_up": cpu / gpu})
        print("kmeans", km_rows[-1], flush=True)
    out["kmeans"] = km_rows

    out["serving"] = [serving_row(rng, n, d) for n in args.serving_sizes]
    return out


def serving_row(rng: np.random.Generator, n: int, d: int) -> dict[str, Any]:
    """Top-10 latency (1 and 32 queries) over a flat index of `n` vectors: CPU (1, all threads), GPU."""
    import faiss

    from indexes.gpu import gpu_resources

    cpu_index = faiss.IndexFlatIP(d)
    cpu_index.add(unit_rows(rng, n, d))
    gpu_index = faiss.index_cpu_to_gpu(gpu_resources(), 0, cpu_index)
    query = unit_rows(rng, 32, d)
    repeat = 30 if n <= 1_000_000 else 10
    threads = faiss.omp_get_max_threads()
    row: dict[str, Any] = {"n": n}
    for batch in (1, 32):
        faiss.omp_set_num_threads(1)
        row[f"cpu_1_thread_b{batch}_ms"] = 1e3 * timed(
            lambda b=batch: cpu_index.search(query[:b], 10), repeat
        )
        faiss.omp_set_num_threads(threads)
        row[f"cpu_all_threads_b{batch}_ms"] = 1e3 * timed(
            lambda b=batch: cpu_index.search(query[:b], 10), repeat
        )
        row[f"gpu_b{batch}_ms"] = 1e3 * timed(lambda b=batch: gpu_index.search(query[:b], 10), repeat)
    print("serving", row, flush=True)
    return row


def encode_bench(args: argparse.Namespace) -> dict[str, Any]:
    """Sentences/s of the default model on the GPU (sentence-transformers fp32; pairank torch fp32, fp16)."""
    import torch

    from encoders.loader import EncoderOptions, load_encoder_backend
    from encoders.probe import probe_sentences
    from pairank.models import load_sentence_transformer, resolve_model

    spec = resolve_model("default")
    data = Path(args.data)
    texts = [
        json.loads(line)["text"] for line in (data / "pfcc_snopes" / "corpus.jsonl").read_text().splitlines()
    ]
    texts = [t for t in texts if t.strip()][:4096]
    out: dict[str, Any] = {
        "info": gpu_info(),
        "texts": f"{len(texts)} PFCC-S claims (max 256 tokens)",
        "rows": [],
    }
    st_model = load_sentence_transformer(spec, device="cuda")
    backends = {
        name: load_encoder_backend(
            spec, EncoderOptions(backend="torch", precision=precision, device="cuda")
        ).backend
        for name, precision in (("pairank torch fp32", "fp32"), ("pairank torch fp16", "fp16"))
    }
    cpu_model = load_sentence_transformer(spec, device="cpu")

    def st(model: Any, batch: int) -> Callable[[Sequence[str]], Any]:
        return lambda chunk: model.encode(list(chunk), batch_size=batch, convert_to_numpy=True)

    def throughput(encode: Callable[[Sequence[str]], Any], batch: int, count: int) -> float:
        sample = texts[:count]

        def run() -> None:
            for start in range(0, len(sample), batch):
                encode(sample[start : start + batch])
            torch.cuda.synchronize()

        return len(sample) / timed(run, 3)

    for batch in (1, 64, 512):
        count = 256 if batch == 1 else 4096
        row: dict[str, Any] = {"batch": batch}
        row["sentence-transformers fp32 (GPU)"] = throughput(st(st_model, batch), batch, count)
        for name, backend in backends.items():
            row[f"{name} (GPU)"] = throughput(lambda c, b=backend: b.forward(b.tokenize(c)), batch, count)
        row[f"sentence-transformers fp32 (CPU, {torch.get_num_threads()} threads)"] = throughput(
            st(cpu_model, batch), batch, 64 if batch == 1 else 1024
        )
        out["rows"].append(row)
        print("encode", row, flush=True)
    probes = list(probe_sentences())
    fp32 = backends["pairank torch fp32"]
    fp16 = backends["pairank torch fp16"]
    a = fp32.forward(fp32.tokenize(probes))
    b = fp16.forward(fp16.tokenize(probes))
    cos = (a * b).sum(axis=1)
    out["fp16_vs_fp32_cosine"] = {"mean": float(cos.mean()), "min": float(cos.min()), "probes": len(probes)}
    print("fp16 cosine", out["fp16_vs_fp32_cosine"], flush=True)
    return out


def runs_summary(args: argparse.Namespace) -> dict[str, Any]:
    """Per run folder: mean train / ordering / dev-eval seconds per epoch, peak GPU memory, best scores."""
    rows = []
    for folder in map(Path, args.runs):
        metrics = json.loads((folder / "metrics.json").read_text())
        epochs = [e for e in metrics.get("history", []) if e.get("stage", 0) >= 0]
        train = _mean(epochs, "train_seconds")
        order = _mean(epochs, "shuffle_seconds")
        rows.append(
            {
                "run": folder.name,
                "epochs": len(epochs),
                "train_s_per_epoch": train,
                "order_s_per_epoch": order,
                "order_share": (order / train) if train else None,
                "eval_s_per_epoch": _mean(epochs, "eval_seconds"),
                "peak_gpu_mib": max((e.get("peak_gpu_mib", 0) for e in epochs), default=None),
                "best": metrics.get("best"),
                "per_seed_best": _per_seed_best(epochs, metrics.get("primary_metric")),
            }
        )
    return {"runs": rows}


def _mean(epochs: list[dict[str, Any]], key: str) -> float | None:
    """Mean of `key` over the epochs (None without epochs)."""
    return statistics.mean(e[key] for e in epochs) if epochs else None


def _per_seed_best(epochs: list[dict[str, Any]], metric: str | None) -> list[dict[str, Any]]:
    """The best epoch of each seed run (the seed search keeps the best of these)."""
    best: dict[int, dict[str, Any]] = {}
    for epoch in epochs:
        seen = best.get(epoch["seed_run"])
        if seen is None or epoch["dev_metric"] > seen["dev_metric"]:
            best[epoch["seed_run"]] = epoch
    return [
        {"seed": e["seed"], "epoch": e["epoch"], "metric": metric, "dev": e["dev"]} for e in best.values()
    ]


def main(argv: list[str] | None = None) -> int:
    """Run one measurement and write its JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("faiss", "encode", "runs"))
    parser.add_argument("runs", nargs="*")
    parser.add_argument("--out", required=True)
    parser.add_argument("--data", default=str(REPO.parent / "shared" / "data"))
    parser.add_argument(
        "--serving-sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000, 4_000_000]
    )
    args = parser.parse_intermixed_args(argv)  # run folders may follow --out
    result = {"faiss": faiss_bench, "encode": encode_bench, "runs": runs_summary}[args.what](args)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
