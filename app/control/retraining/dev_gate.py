"""The retraining gate on the dev set: every pipeline scored on the same dev queries, as it is or would
be served (app/control/retraining/arms.py), the best beyond the noise band chosen.

The active pipeline is the active model through the live store at its served ranking, re-ranked by the
stage the corpus serves with it; the new bi-encoder is scored at the ranking it would be served with
(the corpus's calibration protocol on the dev queries) and the corpus's default re-ranking stage, which
would still apply to it; the stack adds the job's own cross-encoder. The chosen pipeline's ranking (and
re-ranker) is stored as the candidate's calibration, adopted when it is activated.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from app.control.gate import (
    GATE_SOURCE,
    REPORTED,
    GateDataset,
    mode_report,
    offline_candidates,
    served_candidates,
)
from app.control.retraining.arms import ACTIVE, BI_ENCODER, STACK, Pipeline, choose_arm, pipeline_report
from app.control.retraining.config import RetrainParams
from app.control.retraining.reranker import TrainedReranker
from app.db.models import utcnow
from app.search.ranking_setting import RerankSetting, ranking_record, served_rerank_record, stored_rerank
from app.serving.context import ServiceContext
from evaluation.hybrid_eval import Candidates
from indexes.fusion import RankingSetting


@dataclass(frozen=True)
class CorpusRecords:
    """The corpus's stored ranking choices when the job started (`CorpusRankings`)."""

    ranking_calibration: Mapping[str, Any] | None
    default_ranking: Mapping[str, Any] | None


def dev_gate(
    service: ServiceContext,
    params: RetrainParams,
    dataset: GateDataset,
    version: str,
    encode: Callable[[Sequence[str]], np.ndarray],
    records: CorpusRecords,
    trained: TrainedReranker | None = None,
) -> dict[str, Any]:
    """Score every pipeline on the dev queries and choose; the gate's report (module docstring)."""
    metric = params.gate_metric
    active = service.serving.state()
    stored = records.ranking_calibration
    stored = stored if stored and stored.get("model") == active.model_version else None
    fresh = offline_candidates(encode, dataset)
    new = mode_report(fresh, dataset, metric, default=records.default_ranking)
    served = served_candidates(active, service.sessions, params.corpus, dataset)
    old = mode_report(served, dataset, metric, stored, records.default_ranking)
    rerankers = service.serving.rerankers

    def served_stage(
        stage: RerankSetting | None, candidates: Candidates, setting: RankingSetting
    ) -> Pipeline:
        """The pipeline re-ranked by a registered stage, as `rank` runs it."""
        scorer = rerankers.get(stage.model).score if stage is not None else None
        return Pipeline(candidates, setting, stage, scorer)

    active_stage = stored_rerank(served_rerank_record(records, active.model_version))
    pipelines = {
        ACTIVE: served_stage(active_stage, served, old.setting),
        BI_ENCODER: served_stage(stored_rerank(records.default_ranking), fresh, new.setting),
    }
    if trained is not None:
        pipelines[STACK] = Pipeline(fresh, new.setting, trained.stage, trained.score)
    names = list(dict.fromkeys([metric, *REPORTED]))
    reports = {name: pipeline_report(pipeline, dataset, names) for name, pipeline in pipelines.items()}
    chosen, comparisons = choose_arm(reports, metric, params.min_improvement, params.require_significant)
    shown = chosen or BI_ENCODER
    verdict = comparisons[f"{shown} vs {ACTIVE}"]
    record = ranking_record(version, new.choice, metric, len(new.report.per_query), dataset.mode,
                            GATE_SOURCE, utcnow().isoformat())  # fmt: skip
    if chosen == STACK and trained is not None:
        record["rerank"] = pipelines[STACK].describe()["rerank"]
    return {
        "protocol": "dev",
        "metric": metric,
        "mode": dataset.mode,
        "candidate": reports[shown].means,
        "active": reports[ACTIVE].means,
        "candidate_ranking": new.setting.label,
        "active_ranking": old.setting.label,
        "active_ranking_source": old.source,
        "settings": {"candidate": new.settings, "active": old.settings},
        # Every pipeline the gate compared, what each ran, and every comparison behind the choice.
        "arms": {name: {**pipelines[name].describe(), "means": reports[name].means} for name in pipelines},
        "comparisons": comparisons,
        "chosen": chosen,
        "reranker_version": trained.spec.version if trained is not None else None,
        # Stored on the corpus when this candidate is activated (activation.py).
        "calibration": {"corpus": params.corpus, **record},
        "delta": verdict["delta"],
        "noise": verdict["noise"],
        "significant": verdict["significant"],
        "improved": chosen is not None,
    }
