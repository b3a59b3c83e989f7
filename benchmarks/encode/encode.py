"""Encoder speed and quality: sentence-transformers fp32 (the baseline) against every pairank variant.

For 22-token and 90-token inputs at batch 1 and batch 64, sentences/s of `SentenceTransformer.encode`
(fp32) and of pairank's torch, ONNX Runtime and OpenVINO backends in fp32 and int8, timed in
interleaved rounds (each round times every variant once, in a rotating order) so that a noisy
neighbour slows all of them alike; ratios are taken within a round, then the median over rounds.
Then each variant's cosine to fp32 and its dev-set quality (PFCC-S, STS-b, CQA-A) through the
project's evaluation module. Writes benchmarks/encode.md and benchmarks/encode.json.

    nice -n 10 .venv/bin/python benchmarks/encode/encode.py [--data ../shared/data] [--rounds 5] \
        [--no-quality]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench_common import command_line, machine, median  # noqa: E402

from encoders.export import compare, encode_all  # noqa: E402
from encoders.exported import EXPORTED_BACKENDS  # noqa: E402
from encoders.loader import EncoderLoader, EncoderOptions, Variant  # noqa: E402
from encoders.probe import probe_sentences  # noqa: E402
from evaluation.runner import evaluate_folder  # noqa: E402
from pairank.models import load_sentence_transformer, resolve_model  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
DEFAULT_DATA = REPO.parent / "shared" / "data"
VARIANTS = [
    Variant("torch", "fp32"),
    Variant("onnx", "fp32"),
    Variant("onnx", "int8"),
    Variant("openvino", "fp32"),
    Variant("openvino", "int8"),
]
BASELINE = "sentence-transformers fp32"
QUALITY = (  # (label, folder, split, task, metric names shown)
    ("PFCC-S", "pfcc_snopes", "dev", "retrieval", ("MRR", "HasPositive@1")),
    ("STS-b", "stsb", "dev", "pairs", ("spearman",)),
    ("CQA-A", "semeval_cqa/subtaskA", "dev", "rerank", ("MAP",)),
)
Encode = Callable[[Sequence[str]], np.ndarray]


def read_texts(data: Path) -> list[str]:
    """Every corpus and query text of the shared datasets (empty when they are absent)."""
    texts: list[str] = []
    for name in (
        "stsb/corpus.jsonl",
        "pfcc_snopes/queries.jsonl",
        "semeval_cqa/subtaskA/corpus.jsonl",
        "antique/corpus.jsonl",
    ):
        path = data / name
        if path.is_file():
            texts += [json.loads(line)["text"] for line in path.read_text(encoding="utf-8").splitlines()]
    return texts


def inputs_of_length(
    tokenize: Callable[[Sequence[str]], list[np.ndarray]], texts: list[str], target: int, count: int
) -> list[str]:
    """`count` texts of `target` +- 2 tokens (real sentences when the data is present, else probes)."""
    pool = [t for t in texts if t.strip()] or list(probe_sentences())
    lengths = [len(ids) for ids in tokenize(pool)]
    chosen = [t for t, n in zip(pool, lengths, strict=True) if abs(n - target) <= 2]
    if len(chosen) < count:  # too few natural ones: cut longer texts down to the target length
        words = " ".join(pool).split()
        chosen += [" ".join(words[i : i + int(target * 0.7)]) for i in range(0, len(words), target)]
    return chosen[:count]


def throughput(encode: Encode, texts: list[str], batch: int) -> float:
    """Sentences per second encoding `texts` in consecutive batches of `batch`."""
    started = time.perf_counter()
    for start in range(0, len(texts), batch):
        encode(texts[start : start + batch])
    return len(texts) / (time.perf_counter() - started)


def time_rounds(encoders: dict[str, Encode], texts: list[str], batch: int, rounds: int) -> dict[str, Any]:
    """Interleaved rounds: sentences/s per variant, and its ratio to the baseline within each round."""
    names = list(encoders)
    speeds: dict[str, list[float]] = {name: [] for name in names}
    ratios: dict[str, list[float]] = {name: [] for name in names}
    sample = texts if batch > 1 else texts[:64]
    for name in names:  # warm-up: first calls allocate and compile kernels
        throughput(encoders[name], sample[: max(batch, 8)], batch)
    for round_number in range(rounds):
        order = names[round_number % len(names) :] + names[: round_number % len(names)]
        measured = {name: throughput(encoders[name], sample, batch) for name in order}
        for name in names:
            speeds[name].append(measured[name])
            ratios[name].append(measured[name] / measured[BASELINE])
    return {
        name: {
            "sentences_per_s": round(median(speeds[name]), 1),
            "ratio": round(median(ratios[name]), 2),
            "runs": [round(v, 1) for v in speeds[name]],
        }
        for name in names
    }


def main(argv: list[str] | None = None) -> int:
    """Time and score every variant; write encode.md and encode.json."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--model", default="default")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--texts", type=int, default=640, help="texts per timed batch-64 measurement")
    parser.add_argument("--cache-dir", type=Path, default=REPO / "data" / "models")
    parser.add_argument("--no-quality", action="store_true", help="skip the dev-set evaluations")
    parser.add_argument("--output-dir", type=Path, default=Path(__file__).resolve().parents[1])
    args = parser.parse_args(argv)
    started = time.perf_counter()
    spec = resolve_model(args.model)
    model = load_sentence_transformer(spec, device="cpu")
    loader = EncoderLoader(spec, EncoderOptions(cache_root=args.cache_dir, device="cpu"))
    backends: dict[str, Any] = {}
    gate: dict[str, Any] = {}
    for variant in VARIANTS:
        if variant.backend == "torch":
            backends[variant.key] = loader.reference()
            continue
        folder, manifest = loader.exported(variant)
        backends[variant.key] = EXPORTED_BACKENDS[variant.backend](folder, variant.precision)
        gate[variant.key] = manifest["quality"] | {"passed": manifest["passed"]}

    def st_encode(texts: Sequence[str]) -> np.ndarray:
        return np.asarray(model.encode(list(texts), batch_size=64, normalize_embeddings=True))

    encoders: dict[str, Encode] = {BASELINE: st_encode}
    for key, backend in backends.items():
        encoders[f"pairank {key}"] = lambda texts, b=backend: b.forward(b.tokenize(texts))
    pool = read_texts(args.data)
    reference = backends["torch-fp32"]
    speed: dict[str, Any] = {}
    for tokens in (22, 90):
        texts = inputs_of_length(reference.tokenize, pool, tokens, args.texts)
        for batch in (1, 64):
            label = f"{tokens} tokens, batch {batch}"
            print(f"encode: timing {label} ({len(texts)} texts)", file=sys.stderr)
            speed[label] = time_rounds(encoders, texts, batch, args.rounds)
    probe = list(probe_sentences())
    probe_tokens = reference.tokenize(probe)
    fp32 = encode_all(reference, probe_tokens)
    cosine = {}
    for key, backend in backends.items():
        check = compare(fp32, encode_all(backend, probe_tokens))
        cosine[key] = {"mean": round(check.mean_cosine, 4), "min": round(check.min_cosine, 4)}
    quality = {} if args.no_quality else evaluate_quality(args.data, encoders)
    payload = {
        "command": command_line("encode/encode.py", argv),
        "machine": machine(),
        "model": spec.version,
        "seconds": round(time.perf_counter() - started, 1),
        "speed": speed,
        "cosine_to_fp32": cosine,
        "gate": gate,
        "quality": quality,
    }
    args.output_dir.mkdir(parents=True, exist_ok=True)
    (args.output_dir / "encode.json").write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    from encode_report import to_markdown

    (args.output_dir / "encode.md").write_text(to_markdown(payload), encoding="utf-8")
    print(to_markdown(payload))
    return 0


def evaluate_quality(data: Path, encoders: dict[str, Encode]) -> dict[str, Any]:
    """Dev metrics of every variant on each dataset present (metric names -> value)."""
    results: dict[str, Any] = {}
    for label, folder, split, task, shown in QUALITY:
        if not (data / folder).is_dir():
            results[label] = {"skipped": f"{data / folder} is absent"}
            continue
        results[label] = {}
        for name, encode in encoders.items():
            print(f"encode: quality of {name} on {label}", file=sys.stderr)
            batched = _batched(encode)
            report = evaluate_folder(batched, data / folder, split, task=task)
            results[label][name] = {metric: report["metrics"][metric] for metric in shown}
    return results


def _batched(encode: Encode) -> Encode:
    # Length-sorted batches of 64, as the service's micro-batcher forms them.
    def run(texts: Sequence[str]) -> np.ndarray:
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out: list[np.ndarray] = [np.empty(0)] * len(texts)
        for start in range(0, len(order), 64):
            chunk = order[start : start + 64]
            for i, row in zip(chunk, encode([texts[i] for i in chunk]), strict=True):
                out[i] = row
        return np.vstack(out)

    return run


if __name__ == "__main__":
    raise SystemExit(main())
