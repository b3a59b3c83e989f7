"""Evaluate a sentence-transformers model on a dataset folder: the engine behind `pairank evaluate` and
`benchmarks/quality/quality.py`. Torch is imported only when a model is loaded.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any, Literal, cast

import numpy as np

from evaluation.datasets import (
    default_relevance_level,
    infer_pair_task,
    infer_task,
    load_beir,
    load_pairs,
    pairs_path,
)
from evaluation.hybrid_eval import RankingSetting, candidate_scores, fused_run
from evaluation.metrics import DEFAULT_CUTOFFS, evaluate_ranking
from evaluation.model_eval import Encoder, evaluate_beir, evaluate_pairs

TASKS = ("retrieval", "rerank", "pairs")
DEFAULT_EXPORT_DIR = Path("data") / "models"  # the service's default (PAIRANK_DATA_DIR=./data)
_TABLE_FAMILIES = ("MAP", "MRR", "HasPositive", "P", "nDCG", "Recall")


def make_encoder(
    model: str | None = None,
    *,
    device: str | None = None,
    batch_size: int = 64,
    progress: bool = True,
    backend: str = "auto",
    precision: str = "auto",
    cache_dir: Path | None = DEFAULT_EXPORT_DIR,
) -> tuple[Encoder, dict[str, Any]]:
    """Load a model (`default`, a folder or a hub name) as the service runs it; (encode function, info).

    `backend`/`precision` `auto` picks the fastest variant that passes the encoder quality gate (see
    `encoders.loader`), so evaluations score what the service serves; `torch`/`fp32` scores the model
    as trained.
    """
    from encoders.export import encode_all
    from encoders.loader import EncoderOptions, load_encoder_backend
    from pairank.models import pick_device, resolve_model

    spec = resolve_model(model)
    chosen_device = pick_device(device)
    options = EncoderOptions(backend=backend, precision=precision, cache_root=cache_dir, device=chosen_device)
    loaded = load_encoder_backend(spec, options)

    def encode(texts: Sequence[str]) -> np.ndarray:
        tokens = loaded.backend.tokenize(list(texts))
        return encode_all(loaded.backend, tokens, batch_size=batch_size, progress=progress)

    info = {
        "model_id": spec.model_id,
        "version": spec.version,
        "path": spec.path,
        "device": chosen_device,
        "backend": loaded.variant.backend,
        "precision": loaded.variant.precision,
        "quality_gate": loaded.quality,
    }
    return encode, info


def evaluate_folder(
    encode: Encoder,
    folder: str | Path,
    split: str,
    *,
    task: str | None = None,
    relevance_level: int | None = None,
    top_k: int = 100,
    pair_task: str | None = None,
    threshold: float | None = None,
    cutoffs: Sequence[int] = DEFAULT_CUTOFFS,
    ranking: RankingSetting | None = None,
) -> dict[str, Any]:
    """Evaluate one split of a dataset folder; returns a JSON-ready report (task decided when None)."""
    folder = Path(folder)
    chosen_task = task or infer_task(folder, split)
    if chosen_task not in TASKS:
        raise ValueError(f"unknown task {chosen_task!r}; use one of {', '.join(TASKS)}")
    started = time.perf_counter()
    report: dict[str, Any] = {
        "dataset": folder.name,
        "data_dir": str(folder),
        "split": split,
        "mode": chosen_task,
    }
    if chosen_task == "pairs":
        path = pairs_path(folder, split)
        if path is None:
            raise FileNotFoundError(f"no {split}_pairs.jsonl in {folder}")
        pairs = load_pairs(path)
        chosen_pair_task = pair_task or infer_pair_task(pairs)
        result = evaluate_pairs(
            encode, pairs, cast(Literal["f1", "spearman"], chosen_pair_task), threshold=threshold
        )
        report.update(pair_task=chosen_pair_task, metrics=_json_safe(result))
    else:
        level = relevance_level if relevance_level is not None else default_relevance_level(folder)
        dataset = load_beir(folder, split)
        mode = cast(Literal["retrieval", "rerank"], chosen_task)
        if ranking is not None and ranking.mode != "dense":  # BM25 alone or fused with the bi-encoder
            run = fused_run(candidate_scores(encode, dataset, mode, depth=top_k), ranking, top_k)
            ranked = evaluate_ranking(dataset.qrels, run, relevance_level=level, cutoffs=cutoffs)
            report.update(ranking=asdict(ranking))
        else:
            ranked = evaluate_beir(encode, dataset, mode, level, top_k=top_k, cutoffs=cutoffs)
        report.update(
            relevance_level=level,
            top_k=top_k if chosen_task == "retrieval" else None,
            num_queries=len(dataset.queries),
            num_judgments=sum(len(judgments) for judgments in dataset.qrels.values()),
            corpus_size=len(dataset.corpus),
            metrics=ranked.means,
            per_query=ranked.per_query,
        )
    report["seconds"] = round(time.perf_counter() - started, 3)
    return report


def _json_safe(values: dict[str, Any]) -> dict[str, Any]:
    """Replace NaN (an undefined correlation) with None so the report stays strict JSON."""
    return {
        key: None if isinstance(value, float) and math.isnan(value) else value
        for key, value in values.items()
    }


def format_table(report: dict[str, Any]) -> str:
    """A readable text table of a report's metrics (ranking: one row per family, one column per cutoff)."""
    metrics: dict[str, Any] = report["metrics"]
    title = f"{report['dataset']} / {report['split']} ({report['mode']})"
    if report["mode"] == "pairs":
        title = f"{report['dataset']} / {report['split']} (pairs, {report['pair_task']})"
        rows = [f"  {name:<10} {_cell(value)}" for name, value in metrics.items() if name != "task"]
        return "\n".join([title, *rows])
    cutoffs = sorted({int(name.split("@")[1]) for name in metrics if "@" in name and "SemEval" not in name})
    header = f"  {'metric':<12}" + "".join(f"{'@' + str(k):>9}" for k in cutoffs)
    lines = [
        f"{title}: {report['num_queries']} queries, {report['corpus_size']} documents, "
        f"relevance level {report['relevance_level']}",
        "  "
        + "  ".join(
            f"{name} {metrics[name]:.4f}" for name in ("MAP", "MRR", "SemEval-MAP@10") if name in metrics
        ),
        header,
    ]
    for family in _TABLE_FAMILIES:
        cells = [metrics.get(f"{family}@{k}") for k in cutoffs]
        if any(cell is not None for cell in cells):
            lines.append(f"  {family:<12}" + "".join(f"{_cell(cell):>9}" for cell in cells))
    return "\n".join(lines)


def _cell(value: Any) -> str:
    """Numbers with 4 decimals, anything else as text."""
    if isinstance(value, float):
        return f"{value:.4f}"
    return "-" if value is None else str(value)
