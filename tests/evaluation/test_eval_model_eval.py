"""Tests of evaluation.model_eval with a fake hashed bag-of-words encoder (no model, no torch)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from evaluation.datasets import BeirDataset, LabeledPair, load_beir
from evaluation.model_eval import encode_unique, evaluate_beir, evaluate_pairs, rank_beir
from tests.evaluation.eval_helpers import FakeEncoder, rerank_dataset, retrieval_dataset


def test_encode_unique_encodes_each_distinct_text_once_and_normalizes() -> None:
    calls: list[list[str]] = []

    def unnormalized(texts):
        calls.append(list(texts))
        return np.array([[3.0, 4.0], [0.0, 0.0]])[: len(texts)]

    matrix, rows = encode_unique(unnormalized, ["a b", "c", "a b"])
    assert calls == [["a b", "c"]]
    assert rows == {"a b": 0, "c": 1}
    np.testing.assert_allclose(matrix, [[0.6, 0.8], [0.0, 0.0]], rtol=1e-6)
    with pytest.raises(ValueError, match="shape"):
        encode_unique(lambda texts: np.zeros((1, 2)), ["x", "y"])


def test_retrieval_ranks_against_the_whole_corpus(tmp_path: Path) -> None:
    encoder = FakeEncoder()
    dataset = load_beir(retrieval_dataset(tmp_path / "pfcc"), "dev")
    run = rank_beir(encoder, dataset, "retrieval", top_k=2)
    assert set(run) == {"q1", "q2", "q3"}
    assert all(len(scores) == 2 for scores in run.values())
    assert max(run["q1"], key=run["q1"].__getitem__) == "vc1"
    # one call for the corpus and one for the queries, each text once
    assert sorted(len(call) for call in encoder.calls) == [3, 5]
    full = rank_beir(FakeEncoder(), dataset, "retrieval")
    assert all(len(scores) == 5 for scores in full.values())
    for scores in full.values():
        assert all(-1.0 - 1e-6 <= score <= 1.0 + 1e-6 for score in scores.values())


def test_retrieval_top_k_keeps_documents_tied_with_the_kth() -> None:
    dataset = BeirDataset(
        corpus={"a": "same", "b": "same", "c": "other"}, queries={"q": "same"}, qrels={"q": {"a": 1}}
    )
    run = rank_beir(FakeEncoder(), dataset, "retrieval", top_k=1)
    assert set(run["q"]) == {"a", "b"}
    with pytest.raises(ValueError, match="top_k"):
        rank_beir(FakeEncoder(), dataset, "retrieval", top_k=0)
    with pytest.raises(ValueError, match="mode"):
        rank_beir(FakeEncoder(), dataset, "bogus")  # type: ignore[arg-type]


def test_rerank_scores_only_judged_candidates_with_text(tmp_path: Path) -> None:
    dataset = load_beir(rerank_dataset(tmp_path / "cqa"), "dev")
    run = rank_beir(FakeEncoder(), dataset, "rerank")
    assert {query_id: set(scores) for query_id, scores in run.items()} == {
        "q1": {"vc1", "vc3", "vc5"},
        "q2": {"vc2", "vc4"},  # vc9 has no text
    }


def test_evaluate_beir_scores_the_run(tmp_path: Path) -> None:
    dataset = load_beir(retrieval_dataset(tmp_path / "pfcc"), "dev")
    report = evaluate_beir(FakeEncoder(), dataset, "retrieval")
    # the word overlap of the fake encoder finds every claim at rank 1
    assert report.means["MRR"] == 1.0 and report.means["HasPositive@1"] == 1.0
    rerank = evaluate_beir(FakeEncoder(), load_beir(rerank_dataset(tmp_path / "cqa"), "dev"), "rerank")
    # q2's second relevant document (vc9) has no text, so AP is at most 1/2 there
    assert rerank.per_query["q2"]["MAP"] == pytest.approx(0.5)
    assert rerank.per_query["q2"]["SemEval-MAP@10"] == 1.0


def test_evaluate_pairs() -> None:
    pairs = [
        LabeledPair("the cat sat", "the cat sat", 1.0),
        LabeledPair("the cat sat", "a dog ran", 0.0),
        LabeledPair("red apples", "red apples here", 1.0),
        LabeledPair("red apples", "blue sky", 0.0),
    ]
    encoder = FakeEncoder()
    f1 = evaluate_pairs(encoder, pairs, "f1")
    assert f1["f1"] == 1.0 and f1["num_pairs"] == 4 and 0.0 < f1["threshold"] <= 1.0
    assert len(encoder.calls) == 1 and len(encoder.calls[0]) == 5  # 8 texts, 5 distinct
    fixed = evaluate_pairs(FakeEncoder(), pairs, "f1", threshold=1.01)
    assert fixed["f1"] == 0.0 and fixed["threshold"] == 1.01
    graded = [
        LabeledPair(p.query, p.document, label) for p, label in zip(pairs, [5.0, 0.0, 4.0, 1.0], strict=True)
    ]
    correlation = evaluate_pairs(FakeEncoder(), graded, "spearman")
    assert correlation["spearman"] == pytest.approx(100.0)
    assert set(correlation) == {"task", "num_pairs", "spearman", "pearson"}
    with pytest.raises(ValueError, match="no pairs"):
        evaluate_pairs(FakeEncoder(), [], "f1")
