"""Calibrate how a corpus ranks: dense, lexical or hybrid (and alpha, fusion), chosen on its stored pairs.

The corpus's labelled pairs are judged by the one rule (evaluation/judgements.py); each query is ranked
through the live indexes exactly as `rank` would (each side's top 100, both scores of the union); every
setting of the grid is scored by the corpus's gate metric; the choice is the best mean, and a grouped
5-fold cross-validation (queries sharing a relevant document stay in one fold) estimates how it does on
queries it was not chosen on. The result is stored with the serving model version and used as the
corpus's default mode for that model (README, "Hybrid ranking").
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import numpy as np
from sqlalchemy.orm import Session, sessionmaker

from app.db.admin_repository import PairRepository
from app.db.engine import transaction
from app.db.models import utcnow
from app.db.repository import DocumentRepository
from app.services.corpora import require_corpus
from app.services.errors import ConflictError, InvalidInputError
from app.services.gating import default_gate_metric
from app.services.hybrid import CANDIDATES, RankingSetting, rerank, search_corpus
from app.services.pairs import ExportedPair
from app.services.runtime import Runtime, ServingState
from evaluation.datasets import BeirDataset
from evaluation.hybrid_eval import Candidates, per_query_values, score_settings, setting_grid
from evaluation.judgements import judge_pairs, pair_task
from evaluation.metrics import parse_metric
from evaluation.selection import cross_validated_choice, group_folds, query_groups


class RankingCalibrationService:
    """Choose and store a corpus's ranking setting for the serving model."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    def calibrate(self, name: str, metric: str | None = None, folds: int = 5) -> dict[str, Any]:
        """Score every setting on the corpus's stored pairs; store and return the choice."""
        with self.runtime.sessions() as session:
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
        pairs = [
            ExportedPair(
                p.query, p.document if p.document is not None else texts[p.document_id or ""], p.label
            )
            for p in stored
            if p.document is not None or p.document_id in texts
        ]
        if not pairs:
            # The body is fine; the corpus is not ready for it (like a job already running): 409.
            raise ConflictError(f"corpus {name!r} has no stored pairs: add some with POST .../pairs", "pairs")
        dataset = judge_pairs(pairs, texts, name=name)
        groups = query_groups(dataset.qrels)
        if len(groups) < 2:
            raise ConflictError("pairs: the stored pairs need queries about at least two documents", "pairs")
        mode = pair_task(pairs)
        candidates = live_candidates(self.runtime.state(), self.runtime.sessions, name, dataset, mode)
        per_query = per_query_values(score_settings(candidates, dataset.qrels, [metric]), metric)
        chosen = cross_validated_choice(per_query, group_folds(groups, min(folds, len(groups))))
        best = next(s for s in setting_grid() if s.label == chosen["choice"])
        version = self.runtime.state().model_version
        calibration = {
            "model": version,
            **asdict(best),
            "metric": metric,
            "value": chosen["means"][chosen["choice"]],
            "cv_mean": chosen["cv_mean"],
            "cv_std": chosen["cv_std"],
            "chosen_per_fold": chosen["chosen_per_fold"],
            "settings": chosen["means"],
            "queries": len(dataset.queries),
            "task": mode,
            "calibrated_at": utcnow().isoformat(),
        }
        with transaction(self.runtime.sessions) as session:
            require_corpus(session, name).ranking_calibration = calibration
        return calibration


def live_candidates(
    state: ServingState, sessions: sessionmaker[Session], name: str, dataset: BeirDataset, mode: str
) -> Candidates:
    """Each query's candidates from the live indexes, with both scores, under the dataset's ids.

    Retrieval: each side's top CANDIDATES over the corpus, as `rank` gathers them; re-ranking: the
    query's judged documents. Ids are the corpus's external ids.
    """
    opened = state.indexes.get(name)
    query_ids = list(dataset.queries)
    vectors = state.encoder.encode_bulk([dataset.queries[q] for q in query_ids], label="ranking candidates")
    with sessions() as session:
        corpus = require_corpus(session, name)
        judged = [d for judgements in dataset.qrels.values() for d in judgements]
        database_id = DocumentRepository(session, corpus).ids_of(judged)
    hybrid = RankingSetting("hybrid", 0.5)
    all_hits = {}
    for query_id, vector in zip(query_ids, vectors, strict=True):
        text = dataset.queries[query_id]
        if mode == "retrieval":
            dense_hits = opened.search_one(vector, CANDIDATES)
            all_hits[query_id] = search_corpus(
                state.indexes, opened, text, vector, 2 * CANDIDATES, hybrid, dense_hits
            )
        else:
            ids = [database_id[d] for d in dataset.qrels.get(query_id, {}) if d in database_id]
            all_hits[query_id] = rerank(state.indexes, opened, text, vector, ids, len(ids), hybrid)
    with sessions() as session:
        corpus = require_corpus(session, name)
        seen = sorted({h.doc_id for hits in all_hits.values() for h in hits})
        external = {d: e for d, (e, _) in DocumentRepository(session, corpus).by_ids(seen).items()}
    result = Candidates({}, {}, {})
    for query_id, hits in all_hits.items():
        kept = [h for h in hits if h.doc_id in external]
        result.ids[query_id] = [external[h.doc_id] for h in kept]
        result.dense[query_id] = np.array([h.dense for h in kept], dtype=np.float64)
        result.lexical[query_id] = np.array([h.lexical for h in kept], dtype=np.float64)
    return result
