"""Judged queries ranked on the live store: what calibrate-ranking, corpus evaluations and the gate's
active side score, gathered by the one first stage exactly as `rank` gathers them."""

from __future__ import annotations

from collections.abc import Collection

from sqlalchemy.orm import Session, sessionmaker

from app.db.corpus_lookup import require_corpus
from app.db.repositories.documents import DocumentReader
from app.search.first_stage import LiveCorpus
from app.serving.state import ServingState
from evaluation.datasets import BeirDataset
from evaluation.hybrid_eval import Candidates, Task
from indexes.first_stage import BOTH, gather, given


def live_candidates(
    state: ServingState,
    sessions: sessionmaker[Session],
    name: str,
    dataset: BeirDataset,
    task: Task,
    depth: int,
    sides: Collection[str] = BOTH,
    conditions: dict[str, object] | None = None,
) -> Candidates:
    """Each query's pool from the live indexes, under the dataset's (external) ids.

    Retrieval: the pool `rank` gathers for `depth` results by `sides` (and a filter's `conditions`);
    re-ranking: the query's judged documents, as `rank` ranks given candidates.
    """
    opened = state.store.get(name)
    corpus = LiveCorpus(state.store, opened)
    query_ids = list(dataset.queries)
    texts = [dataset.queries[q] for q in query_ids]
    vectors = state.encoder.encode_bulk(texts, label="ranking candidates")
    with sessions() as session:
        reader = DocumentReader(session, opened.corpus_id)
        judged = [d for judgements in dataset.qrels.values() for d in judgements]
        database_id = reader.ids_of(judged) if task == "rerank" else {}
        allowed = reader.ids_matching(conditions) if conditions else None
    if task == "retrieval":
        pools = gather(corpus, texts, vectors, depth, sides, allowed)
    else:
        judged_ids = [
            [database_id[d] for d in dataset.qrels.get(q, {}) if d in database_id] for q in query_ids
        ]
        pools = [
            given(corpus, text, vector, ids, lexical=True)
            for text, vector, ids in zip(texts, vectors, judged_ids, strict=True)
        ]
    with sessions() as session:
        require_corpus(session, opened.corpus_id)  # deleted meanwhile: the one 404
        seen = sorted({d for pool in pools for d in pool.ids})
        names = {
            d: external for d, (external, _) in DocumentReader(session, opened.corpus_id).by_ids(seen).items()
        }
    return Candidates(dict(zip(query_ids, pools, strict=True)), names)
