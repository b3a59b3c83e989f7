"""Hybrid runs of a BEIR set and calibration on constructed sets where the best setting is known."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from evaluation.datasets import BeirDataset
from evaluation.hybrid_eval import (
    RankingSetting,
    candidate_scores,
    fused_run,
    per_query_values,
    score_settings,
)
from evaluation.selection import cross_validated_choice, group_folds, query_groups

TOPICS = ["shark", "bleach", "moon", "vaccine", "tower", "flood", "garlic", "gates", "earth", "wind"]


def dataset(query_words: dict[int, str]) -> BeirDataset:
    """Documents `topic i claim`, queries `query_words[i]`, each relevant to its own document."""
    corpus = {f"d{i}": f"{topic} claim number {i}" for i, topic in enumerate(TOPICS)}
    queries = {f"q{i}": words for i, words in query_words.items()}
    return BeirDataset(corpus, queries, {f"q{i}": {f"d{i}": 1} for i in query_words})


def blind(texts: Sequence[str]) -> np.ndarray:
    """An encoder that knows nothing: a fixed random vector per text."""
    rows = [
        np.random.default_rng(int(hashlib.sha256(t.encode()).hexdigest()[:8], 16)).normal(size=16)
        for t in texts
    ]
    return np.asarray(rows, dtype=np.float32)


def oracle(texts: Sequence[str]) -> np.ndarray:
    """An encoder that maps a text to the one-hot of the digit it ends with (the topic index)."""
    rows = np.zeros((len(texts), 16), dtype=np.float32)
    for row, text in enumerate(texts):
        rows[row, int(text.split()[-1]) if text.split()[-1].isdigit() else 15] = 1
    return rows + 0.01


def choose(data: BeirDataset, encode) -> dict:
    candidates = candidate_scores(encode, data, "retrieval", depth=5)
    per_query = per_query_values(score_settings(candidates, data.qrels, ["MRR"]), "MRR")
    return cross_validated_choice(per_query, group_folds(query_groups(data.qrels), 3))


def test_calibration_picks_lexical_when_the_encoder_is_blind() -> None:
    data = dataset({i: f"is the {topic} story true" for i, topic in enumerate(TOPICS)})
    result = choose(data, blind)
    assert result["choice"] == "lexical" and result["means"]["lexical"] == 1.0
    assert result["means"]["dense"] < 0.6 and result["cv_mean"] == 1.0


def test_calibration_picks_dense_when_the_words_mislead() -> None:
    # Each query names another topic's word but ends with its own number, which only the encoder reads.
    data = dataset({i: f"{TOPICS[(i + 1) % 10]} rumour {i}" for i in range(10)})
    result = choose(data, oracle)
    assert result["choice"] == "dense" and result["means"]["dense"] == 1.0
    assert result["means"]["lexical"] < result["means"]["dense"]


def test_dense_setting_equals_plain_cosine_order() -> None:
    data = dataset({i: f"{topic} {i}" for i, topic in enumerate(TOPICS)})
    run = fused_run(candidate_scores(oracle, data, "retrieval", depth=3), RankingSetting("dense"), top_k=1)
    assert {q: list(docs) for q, docs in run.items()} == {f"q{i}": [f"d{i}"] for i in range(10)}
