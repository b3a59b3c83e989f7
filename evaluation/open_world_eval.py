"""`pairank evaluate --open-world`: a dataset's match decisions measured as a desk would meet them.

The judged queries of the given splits, in their files' order (the time order), are ranked against the
dataset's corpus held in memory (the one first stage at the given setting) in both worlds (claim present;
claim and its twins left out), and `forward_evaluation` (evaluation/match_calibration.py) calibrates on
each earlier part and scores the block after it. The same protocol the service runs on a corpus's
judged pairs, on the shared splits, by one command.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from evaluation.datasets import load_beir
from evaluation.decisions import DECISION_DEPTH
from evaluation.match_calibration import forward_evaluation, worlds
from evaluation.model_eval import Encoder, encode_unique
from evaluation.open_world import JudgedQuery
from evaluation.twins import twin_groups
from indexes.first_stage import MatrixCorpus
from indexes.fusion import RankingSetting

__all__ = ["dataset_worlds", "evaluate_open_world"]


def _vectors(encode: Encoder, texts: Sequence[str]) -> np.ndarray:
    matrix, rows = encode_unique(encode, texts)
    return matrix[[rows[t] for t in texts]]


def dataset_worlds(
    encode: Encoder, folder: str | Path, splits: Sequence[str], setting: RankingSetting
) -> tuple[list[JudgedQuery], list[list[str]]]:
    """The splits' judged queries (file order, positives only) in both worlds, and the corpus's twins."""
    loaded = [load_beir(folder, split) for split in splits]
    corpus = loaded[0].corpus
    queries = {q: t for data in loaded for q, t in data.queries.items()}
    qrels = {q: j for data in loaded for q, j in data.qrels.items()}
    order = [q for q in qrels if any(g > 0 for g in qrels[q].values()) and q in queries]
    doc_ids = list(corpus)
    doc_texts = [corpus[d] for d in doc_ids]
    doc_vectors = _vectors(encode, doc_texts)
    query_vectors = _vectors(encode, [queries[q] for q in order])
    neighbours = MatrixCorpus(doc_vectors, doc_texts).dense_hits(doc_vectors, 6, None)
    pairs = ((i, j, s) for i, hits in enumerate(neighbours) for j, s in hits)
    twins = twin_groups(doc_ids, doc_texts, pairs)
    asked = [
        (queries[q], vector, frozenset(d for d, g in qrels[q].items() if g > 0))
        for q, vector in zip(order, query_vectors, strict=True)
    ]
    return worlds(doc_ids, doc_texts, doc_vectors, asked, setting, twins, DECISION_DEPTH), twins


def evaluate_open_world(
    encode: Encoder,
    folder: str | Path,
    splits: Sequence[str],
    setting: RankingSetting,
    absent_share: float = 0.5,
    cuts: int = 3,
    match_precision: float = 0.95,
    new_precision: float = 0.90,
    min_words: int = 4,
) -> dict[str, Any]:
    """The forward open-world report of a dataset (JSON-ready)."""
    judged, twins = dataset_worlds(encode, folder, splits, setting)
    report = forward_evaluation(judged, cuts, absent_share, match_precision, new_precision, min_words)
    return {
        "dataset": Path(folder).name,
        "splits": list(splits),
        "queries": len(judged),
        "ranking": setting.label,
        "targets": {
            "match_precision": match_precision,
            "new_precision": new_precision,
            "absent_share": absent_share,
            "min_words": min_words,
        },  # fmt: skip
        "twins": {"groups": len(twins), "documents": sum(len(g) for g in twins)},
        **report,
    }
