"""The cross-encoder lever of benchmarks/quality/forward_quality.py: a re-ranker trained on a cut's earlier
pairs re-orders the first stage's top k on the later block.

The first stage is the zero-shot model at the dataset's default ranking (PFCC-S: hybrid a=0.2; CQA:
dense over the question's own candidates), or, for the stack lever ("fine-tuned + cross-encoder"), the
cut's fine-tuned bi-encoder at that ranking; the cross-encoder (training/reranker.py) starts from the
same base model's weights, trains listwise on the cut's pairs with hard negatives mined from the whole
corpus, and re-orders each query's top k (`indexes/rerank.py`); the rest keep their places. Both
levers share a (cut, seed)'s cross-encoder: whichever runs first trains it, the other reuses it.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from evaluation.datasets import LabeledPair, load_beir, load_pairs
from evaluation.hybrid_eval import candidate_scores, fused_run
from evaluation.metrics import RankingReport, evaluate_ranking, order_scores
from indexes.fusion import RankingSetting, minmax
from indexes.rerank import rerank_top_k

RERANK_DEPTHS = (20, 50)
Encoder = Callable[[Sequence[str]], np.ndarray]


def split_means(
    report: RankingReport, unseen: set[str], metrics: Sequence[str]
) -> dict[str, dict[str, float]]:
    """A report's means over all queries and over the unseen ones."""
    subset = [values for query, values in report.per_query.items() if query in unseen]
    means = {m: statistics.fmean(v[m] for v in subset) for m in metrics} if subset else {}
    return {"all": report.means, "unseen": means}


def reranked_scores(
    cut_dir: Path, folder: Path, first_stage: RankingSetting, label: str, task: str,
    metrics: Sequence[str], seed: int, device: str | None,
    first_encode: Encoder | None = None, depths: Sequence[int] = RERANK_DEPTHS, progress: bool = False,
) -> dict[str, dict[str, dict[str, float]]]:  # fmt: skip
    """Train (once) the cut's re-ranker into `folder`; score the first stage (`first_encode`, default: the
    zero-shot model, which also mines the re-ranker's negatives) at `first_stage`, re-ranked at each depth."""
    from pairank.models import load_sentence_transformer, resolve_model
    from training.data import PairSet
    from training.evaluators import model_encoder
    from training.reranker import RerankerConfig, load_reranker, train_reranker

    torch_device = device or "cuda"
    data = load_beir(cut_dir / "dev", "dev")
    base = resolve_model("default")
    bi_encoder = load_sentence_transformer(base, device=torch_device)
    encode = model_encoder(bi_encoder, 256)
    if not (folder / "manifest.json").exists():
        pairs = PairSet.from_pairs(
            [LabeledPair(p.query, p.document, p.label) for p in load_pairs(cut_dir / "train.jsonl")]
        )
        pool = list(data.corpus.values()) if task == "retrieval" else []
        train_reranker(
            pairs, base, encode, folder, RerankerConfig(seed=seed), pool, torch_device, progress=progress
        )
    reranker = load_reranker(folder, device=torch_device)
    candidates = candidate_scores(first_encode or encode, data, task, depth=100)  # type: ignore[arg-type]
    first = fused_run(candidates, first_stage)
    unseen = set(json.loads((cut_dir / "unseen.json").read_text()))
    deepest = max(depths)
    ranked = {q: sorted(run, key=lambda d: -run[d]) for q, run in first.items()}
    pairs_to_score = [(q, d) for q, docs in ranked.items() for d in docs[:deepest]]
    scores = reranker.predict([(data.queries[q], data.corpus[d]) for q, d in pairs_to_score], batch_size=128)
    score_of = {pair: float(s) for pair, s in zip(pairs_to_score, scores, strict=True)}
    result: dict[str, Any] = {}
    for depth in depths:
        run = {}
        for query, docs in ranked.items():
            run[query] = order_scores(rerank_top_k(docs, [score_of[(query, d)] for d in docs[:depth]], depth))
        report = evaluate_ranking(data.qrels, run, metrics=list(metrics))
        result[f"{label} + cross-encoder top {depth}"] = split_means(report, unseen, metrics)
        # The blend: half the first stage's fused score, half the cross-encoder's, each min-max scaled.
        blended = {}
        for query, docs in ranked.items():
            head = docs[:depth]
            first_scores = minmax(np.array([first[query][d] for d in head]))
            cross = minmax(np.array([score_of[(query, d)] for d in head]))
            blended[query] = order_scores(rerank_top_k(docs, list(0.5 * first_scores + 0.5 * cross), depth))
        report = evaluate_ranking(data.qrels, blended, metrics=list(metrics))
        result[f"{label} + 0.5 cross-encoder top {depth}"] = split_means(report, unseen, metrics)
    return result
