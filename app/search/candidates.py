"""Each judged query's candidates from the live store, with both scores: what calibration and
evaluation rank, gathered exactly as `rank` gathers them."""

from __future__ import annotations

import numpy as np
from sqlalchemy.orm import Session, sessionmaker

from app.db.corpus_lookup import require_corpus
from app.db.repositories.corpora import DocumentRepository
from app.search.hybrid import CANDIDATES, rerank, search_corpus
from app.serving.state import ServingState
from evaluation.datasets import BeirDataset
from evaluation.hybrid_eval import Candidates
from indexes.fusion import RankingSetting


def live_candidates(
    state: ServingState, sessions: sessionmaker[Session], name: str, dataset: BeirDataset, mode: str
) -> Candidates:
    """Each query's candidates from the live indexes, with both scores, under the dataset's ids.

    Retrieval: each side's top CANDIDATES over the corpus, as `rank` gathers them; re-ranking: the
    query's judged documents. Ids are the corpus's external ids.
    """
    opened = state.store.get(name)
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
                state.store, opened, text, vector, 2 * CANDIDATES, hybrid, dense_hits
            )
        else:
            ids = [database_id[d] for d in dataset.qrels.get(query_id, {}) if d in database_id]
            all_hits[query_id] = rerank(state.store, opened, text, vector, ids, len(ids), hybrid)
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
