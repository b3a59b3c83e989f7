"""Dev-set evaluators for checkpoint selection, following sentence-transformers' evaluator contract.

An evaluator is called with the model and returns a metrics dict; `primary_metric` names the key that
picks the best checkpoint (higher is better). Ranking sets (PFCC-S, CQA, ANTIQUE) go through
`evaluation.model_eval.evaluate_beir`, pair sets (STS-b, MRPC) through `evaluate_pairs`; each call
encodes every distinct text once (the 10,369 PFCC-S claims once per epoch).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from evaluation.datasets import BeirDataset, LabeledPair, load_beir, load_pairs
from evaluation.hybrid_eval import candidate_scores, fused_run
from evaluation.judgements import judge_pairs
from evaluation.metrics import evaluate_ranking
from evaluation.model_eval import evaluate_beir, evaluate_pairs
from indexes.fusion import DEFAULT_ALPHA, RankingSetting
from training.config import DevConfig
from training.data import PairSet

try:  # sentence-transformers >= 5.2 moved the evaluators; older releases keep the old path
    from sentence_transformers.sentence_transformer.evaluation import SentenceEvaluator
except ImportError:  # pragma: no cover - depends on the installed version
    from sentence_transformers.evaluation import SentenceEvaluator  # type: ignore[no-redef]

RANKING_TASKS = ("retrieval", "rerank")
PAIR_TASKS = ("f1", "spearman")


def model_encoder(model: Any, batch_size: int = 128) -> Any:
    """`encode(texts) -> L2-normalised float32 numpy` for a SentenceTransformer, without progress bars."""

    def encode(texts: Sequence[str]) -> np.ndarray:
        return np.asarray(
            model.encode(
                list(texts),
                batch_size=batch_size,
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            ),
            dtype=np.float32,
        )

    return encode


class DevEvaluator(SentenceEvaluator):
    """Scores a model on a ranking set or a pair set; `primary_metric` is the selection metric."""

    def __init__(
        self,
        data: BeirDataset | Sequence[LabeledPair],
        task: str,
        metric: str,
        relevance_level: float = 1,
        batch_size: int = 128,
        name: str = "",
        ranking: RankingSetting | None = None,
    ) -> None:
        super().__init__()
        if task not in RANKING_TASKS + PAIR_TASKS:
            raise ValueError(f"unknown dev task {task!r}; use one of {RANKING_TASKS + PAIR_TASKS}")
        if task in RANKING_TASKS and not isinstance(data, BeirDataset):
            data = judge_pairs(list(data))  # the gate's rule: evaluation/judgements.py
        if task in PAIR_TASKS and isinstance(data, BeirDataset):
            raise ValueError(f"dev task {task!r} needs labelled pairs, not a ranking set")
        self.data = data
        self.task = task
        self.relevance_level = relevance_level
        self.batch_size = batch_size
        self.name = name
        self.ranking = ranking if ranking is not None and ranking.mode != "dense" else None
        self.primary_metric = metric
        self.greater_is_better = True

    def __call__(
        self,
        model: Any,
        output_path: str | None = None,
        epoch: int = -1,
        steps: int = -1,
        encode: Any = None,
    ) -> dict[str, float]:
        """Encode the dev texts with `model` (through `encode` where given: the base model's kept
        vectors); return the metrics (named as the evaluation module does)."""
        encode = encode or model_encoder(model, self.batch_size)
        if isinstance(self.data, BeirDataset):
            mode: Literal["retrieval", "rerank"] = "retrieval" if self.task == "retrieval" else "rerank"
            if self.ranking is None:
                report = evaluate_beir(encode, self.data, mode, relevance_level=int(self.relevance_level))
            else:  # the served first stage: the same pools and order `rank` gives
                run = fused_run(candidate_scores(encode, self.data, mode), self.ranking)
                report = evaluate_ranking(self.data.qrels, run, relevance_level=int(self.relevance_level))
            metrics = {k: float(v) for k, v in report.means.items()}
        else:
            task: Literal["f1", "spearman"] = "f1" if self.task == "f1" else "spearman"
            found = evaluate_pairs(encode, list(self.data), task)
            metrics = {k: float(v) for k, v in found.items() if isinstance(v, int | float)}
        metric = str(self.primary_metric)
        metric = metric.removeprefix(f"{self.name}_") if self.name else metric
        if metric not in metrics:
            raise KeyError(f"dev metric {metric!r} not among the evaluator's metrics {sorted(metrics)}")
        return self.prefix_name_to_metrics(metrics, self.name)  # type: ignore[no-any-return]

    @property
    def size(self) -> int:
        """Number of dev queries (ranking) or pairs."""
        return len(self.data.queries) if isinstance(self.data, BeirDataset) else len(self.data)


def _limit_beir(dataset: BeirDataset, limit: int | None) -> BeirDataset:
    """Keep the first `limit` queries (and the whole corpus) for quick runs."""
    if not limit:
        return dataset
    keep = list(dataset.queries)[:limit]
    return BeirDataset(
        corpus=dataset.corpus,
        queries={q: dataset.queries[q] for q in keep},
        qrels={q: dataset.qrels[q] for q in keep if q in dataset.qrels},
        name=dataset.name,
        split=dataset.split,
    )


def build_dev_evaluator(config: DevConfig, held_out: PairSet | None = None) -> DevEvaluator | None:
    """The evaluator a dev config describes; `held_out` are the pairs split off train (kind=split)."""
    if config.kind == "none":
        return None
    data: BeirDataset | list[LabeledPair]
    if config.kind == "beir":
        if not config.path:
            raise ValueError("dev.kind=beir needs dev.path (a BEIR folder)")
        if config.task not in RANKING_TASKS:
            raise ValueError(f"dev.kind=beir supports tasks {RANKING_TASKS}, got {config.task!r}")
        data = _limit_beir(load_beir(config.path, config.split, with_titles=config.with_titles), config.limit)
    elif config.kind == "pairs":
        if not config.path:
            raise ValueError("dev.kind=pairs needs dev.path (a pairs JSONL file)")
        data = load_pairs(config.path)[: config.limit or None]
    else:
        if held_out is None or not len(held_out):
            raise ValueError("dev.kind=split needs held-out pairs (too few training queries to split?)")
        data = held_out.as_labeled_pairs(raw=True)[: config.limit or None]
    ranking = dev_ranking(config)
    return DevEvaluator(
        data, config.task, config.metric, config.relevance_level, config.encode_batch_size, ranking=ranking
    )


def dev_ranking(config: DevConfig) -> RankingSetting:
    """The first stage a dev config scores ranking sets with (dense unless it names another)."""
    stored = config.ranking or {}
    alpha = stored.get("alpha")
    return RankingSetting(
        str(stored.get("mode") or "dense"),
        float(DEFAULT_ALPHA if alpha is None else alpha),
        str(stored.get("fusion") or "linear"),
    )
