"""Calibrate how a corpus ranks: dense, lexical or hybrid (and alpha, fusion), chosen on its stored pairs.

The corpus's labelled pairs are judged by the one rule (evaluation/judgements.py); each query is ranked
through the live indexes exactly as `rank` would (each side's top 100, both scores of the union); every
setting of the grid is scored by the corpus's gate metric; the choice is the best mean, and a grouped
5-fold cross-validation (queries sharing a relevant document stay in one fold) estimates how it does on
queries it was not chosen on. The result is stored with the serving model version and used as the
corpus's default mode for that model (docs/concepts/ranking.md).
"""

from __future__ import annotations

from typing import Any

from app.control.pair_export import export_pairs
from app.core.defaults import default_gate_metric
from app.core.errors import ConflictError, InvalidInputError
from app.db.corpus_lookup import require_corpus
from app.db.engine import transaction
from app.db.models import utcnow
from app.db.repositories.documents import DocumentRepository
from app.db.repositories.pairs import PairRepository
from app.search.candidates import live_candidates
from app.search.ranking_setting import choose_ranking, ranking_record
from app.serving.context import ServiceContext
from app.usecases.workbench.query_sets import queue_corpus_runs
from evaluation.hybrid_eval import score_settings
from evaluation.judgements import judge_pairs, pair_task
from evaluation.metrics import parse_metric
from evaluation.selection import query_groups
from indexes.first_stage import CANDIDATES

SOURCE = "calibrate-ranking"  # the `source` of the ranking choices this use case stores


class RankingCalibrationService:
    """Choose and store a corpus's ranking setting for the serving model."""

    def __init__(self, service: ServiceContext) -> None:
        self.service = service

    def calibrate(self, name: str, metric: str | None = None, folds: int = 5) -> dict[str, Any]:
        """Score every setting on the corpus's stored pairs; store and return the choice."""
        with self.service.sessions() as session:
            corpus = require_corpus(session, name)
            stored = PairRepository(session, corpus.id).list()
            texts = DocumentRepository(session, corpus).texts(
                [p.document_id for p in stored if p.document_id]
            )
            metric = metric or default_gate_metric(corpus.kind)
        try:
            parse_metric(metric)
        except ValueError as error:
            raise InvalidInputError(f"metric: {error}", "metric") from error
        pairs = export_pairs(stored, texts)
        if not pairs:
            # The body is fine; the corpus is not ready for it (like a job already running): 409.
            raise ConflictError(f"corpus {name!r} has no stored pairs: add some with POST .../pairs", "pairs")
        dataset = judge_pairs(pairs, texts, name=name)
        groups = query_groups(dataset.qrels)
        if len(groups) < 2:
            raise ConflictError("pairs: the stored pairs need queries about at least two documents", "pairs")
        mode = pair_task(pairs)
        state = self.service.serving.state()
        candidates = live_candidates(state, self.service.sessions, name, dataset, mode, CANDIDATES)
        reports = score_settings(candidates, dataset.qrels, [metric])
        choice = choose_ranking(reports, dataset.qrels, metric, folds)
        calibration = ranking_record(
            state.model_version, choice, metric, len(dataset.queries), mode, SOURCE, utcnow().isoformat()
        )
        with transaction(self.service.sessions) as session:
            corpus = require_corpus(session, name)
            kept = corpus.ranking_calibration or {}
            if kept.get("model") == state.model_version and kept.get("rerank"):
                # The re-ranker a retraining gate chose with this model stays with it: this calibration
                # chooses the first stage only.
                calibration["rerank"] = kept["rerank"]
            corpus.ranking_calibration = calibration
        queue_corpus_runs(self.service, name, "ranking change")  # its saved query sets, scored again
        return calibration
