"""Training data helpers: label scaling, query-grouped dev splits, sampled negatives, batch slices."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from evaluation.datasets import LabeledPair
from training.config import NegativesConfig
from training.data import (
    PairSet,
    add_titles,
    batch_slices,
    log_rank_positions,
    sample_negatives,
    scale_labels,
    split_by_query,
)


def test_scale_labels() -> None:
    assert scale_labels(np.array([0.0, 2.5, 5.0]), [0, 5]).tolist() == [0.0, 0.5, 1.0]
    assert scale_labels(np.array([1.0, 4.0]), [1, 4]).tolist() == [0.0, 1.0]
    with pytest.raises(ValueError):
        scale_labels(np.array([1.0]), [3, 3])


def test_split_by_query_keeps_each_query_on_one_side() -> None:
    pairs = PairSet.from_pairs([LabeledPair(f"q{i % 20}", f"d{i}", float(i % 2)) for i in range(100)])
    train, dev = split_by_query(pairs, 0.1, seed=3)
    assert len(train) + len(dev) == 100
    assert len(set(dev.firsts)) == 2
    assert not set(train.firsts) & set(dev.firsts)
    again_train, _ = split_by_query(pairs, 0.1, seed=3)
    assert again_train.firsts == train.firsts


def test_log_rank_positions() -> None:
    assert log_rank_positions(100, 10_000, None)[:4] == [
        100,
        101,
        103,
        107,
    ]  # 0-based ranks 101, 102, 104, 108
    assert log_rank_positions(100, 150, None) == [100, 101, 103, 107, 115, 131]
    spread = log_rank_positions(100, 10_000, 3)
    assert len(spread) == 3 and spread[0] == 100 and spread[-1] == log_rank_positions(100, 10_000, None)[-1]


def test_sample_negatives_takes_log_spaced_ranks_and_balances() -> None:
    docs = [f"doc {i}" for i in range(300)]
    pairs = PairSet.from_pairs([LabeledPair(f"query {i}", docs[i], 1.0) for i in range(4)])

    def encode(texts: Sequence[str]) -> np.ndarray:
        # Similarity falls with the document number, so the rank of "doc j" is known.
        out = np.zeros((len(texts), 2), dtype=np.float32)
        for row, text in enumerate(texts):
            j = int(text.split()[1])
            out[row] = [1.0, 0.0] if text.startswith("query") else [np.cos(j / 400), np.sin(j / 400)]
        return out

    config = NegativesConfig(pool="train", start=0, oversample_positives=True)
    out = sample_negatives(pairs, config, encode)  # pool = the 4 train documents
    negatives = [(q, d) for q, d, y in zip(out.firsts, out.seconds, out.labels, strict=True) if y == 0]
    # Each query: its own document is skipped; ranks 1, 2 of the remaining 3 documents.
    assert len(negatives) == 4 * 2
    assert ("query 0", "doc 1") in negatives and ("query 0", "doc 0") not in negatives
    assert int((out.labels == 1).sum()) == 8  # positives repeated to balance 8 negatives
    corpus_cfg = NegativesConfig(pool="corpus", corpus=None)
    with pytest.raises(ValueError, match="corpus"):
        sample_negatives(pairs, corpus_cfg, encode)


def test_batch_slices() -> None:
    order = np.array([4, 2, 0, 1, 3])
    assert [b.tolist() for b in batch_slices(order, 2)] == [[4, 2], [0, 1], [3]]


def test_add_titles_renders_documents_like_beir(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(
        json.dumps({"_id": "a", "text": "Sharks swim on highways.", "title": "Highway Shark"})
        + "\n"
        + json.dumps({"_id": "b", "text": "No title here."})
        + "\n"
    )
    texts = ["Sharks swim on highways.", "No title here.", "Not in the corpus."]
    assert add_titles(texts, str(tmp_path)) == ["Highway Shark Sharks swim on highways.", *texts[1:]]
