"""The dev-set gate over whole pipelines: the active one as `rank` serves it, the new bi-encoder as it
would be served, and, where the job trained one, the new bi-encoder re-ranked by the new cross-encoder.

Each arm is a first stage (its pools ranked by `rank_pool`, the one first stage) and an optional
re-ranking stage (the top k re-ordered as `rank` re-orders them: `indexes/fusion.py`'s `stage_order`
over the first stage's scores and the cross-encoder's), scored on the same dev queries. The new arms
are compared with the active one by the paired noise band; the stack must also beat the new bi-encoder
alone beyond it, since it costs a cross-encoder pass per query: the best arm that passes is activated.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from app.control.gate import GateDataset, paired_noise
from app.search.ranking_setting import RerankSetting
from evaluation.hybrid_eval import Candidates
from evaluation.metrics import RankingReport, evaluate_ranking, order_scores
from indexes.first_stage import CANDIDATES, rank_pool
from indexes.fusion import RankingSetting, stage_order
from indexes.rerank import rerank_top_k

ACTIVE, BI_ENCODER, STACK = "active", "new bi-encoder", "new bi-encoder + new re-ranker"
Scorer = Callable[[str, Sequence[str]], np.ndarray]  # (query, documents) -> a cross-encoder's scores


@dataclass(frozen=True)
class Pipeline:
    """A first stage at `setting` over `candidates`, re-ranked by `stage` (scored by `score`) if any."""

    candidates: Candidates
    setting: RankingSetting
    stage: RerankSetting | None = None
    score: Scorer | None = None

    def describe(self) -> dict[str, Any]:
        """The ranking and the re-ranking stage, as the gate's report shows them."""
        return {"ranking": self.setting.label, "rerank": asdict(self.stage) if self.stage else None}


def pipeline_report(pipeline: Pipeline, gate: GateDataset, metrics: Sequence[str]) -> RankingReport:
    """Every dev query ranked through the pipeline, scored."""
    data, names = gate.dataset, pipeline.candidates.names
    run = {}
    for query_id, pool in pipeline.candidates.pools.items():
        hits = [hit for hit in rank_pool(pool, pipeline.setting, CANDIDATES) if hit.doc_id in names]
        ids = [names[hit.doc_id] for hit in hits]
        if pipeline.stage is not None and pipeline.score is not None and ids:
            head = ids[: pipeline.stage.k]
            cross = pipeline.score(data.queries[query_id], [data.corpus[d] for d in head])
            order = stage_order([hit.score for hit in hits[: len(head)]], cross, pipeline.stage.weight)
            ids = rerank_top_k(ids, order, len(head))
        run[query_id] = order_scores(ids)
    return evaluate_ranking(data.qrels, run, metrics=list(metrics))


def compared(
    new: RankingReport, old: RankingReport, metric: str, min_improvement: float, require_significant: bool
) -> dict[str, Any]:
    """`new` against `old` on the same queries: the gain, its noise band, and whether it passes."""
    delta = new.means[metric] - old.means[metric]
    noise = paired_noise(new, old, metric)
    significant = delta > noise["noise_band"]
    return {
        "delta": delta,
        "noise": noise,
        "significant": significant,
        "improved": delta > min_improvement and (significant or not require_significant),
    }


def choose_arm(
    reports: Mapping[str, RankingReport], metric: str, min_improvement: float, require_significant: bool
) -> tuple[str | None, dict[str, dict[str, Any]]]:
    """The arm to activate (None: keep the active pipeline) and every comparison behind the choice."""
    comparisons = {
        f"{name} vs {ACTIVE}": compared(reports[name], reports[ACTIVE], metric, min_improvement,
                                         require_significant)
        for name in (BI_ENCODER, STACK) if name in reports
    }  # fmt: skip
    passes = {name for name in (BI_ENCODER, STACK) if name in reports
              and comparisons[f"{name} vs {ACTIVE}"]["improved"]}  # fmt: skip
    if STACK in reports:
        # The re-ranker must earn its cost: beyond the noise band over the new bi-encoder alone too.
        floor = max(min_improvement, 0.0)
        over = compared(reports[STACK], reports[BI_ENCODER], metric, floor, require_significant)
        comparisons[f"{STACK} vs {BI_ENCODER}"] = over
        if STACK in passes and (BI_ENCODER not in passes or over["improved"]):
            return STACK, comparisons
    return (BI_ENCODER if BI_ENCODER in passes else None), comparisons
