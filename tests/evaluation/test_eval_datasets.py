"""Tests of evaluation.datasets: BEIR folders, pair files and task detection, on tmp_path fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluation.datasets import (
    LabeledPair,
    default_relevance_level,
    infer_pair_task,
    infer_task,
    load_beir,
    load_pairs,
)
from tests.evaluation.eval_helpers import pairs_dataset, rerank_dataset, retrieval_dataset, write_jsonl


def test_load_beir_keeps_the_whole_corpus_and_only_the_split_queries(tmp_path: Path) -> None:
    dataset = load_beir(retrieval_dataset(tmp_path / "pfcc"), "dev")
    assert set(dataset.corpus) == {"vc1", "vc2", "vc3", "vc4", "vc5"}
    assert dataset.corpus["vc1"] == "Moon landing The moon landing was staged in a film studio."
    assert dataset.corpus["vc2"] == "Drinking bleach cures the coronavirus."
    assert list(dataset.queries) == ["q1", "q2", "q3"]
    assert dataset.qrels == {"q1": {"vc1": 1}, "q2": {"vc2": 1}, "q3": {"vc4": 1}}
    assert (dataset.name, dataset.split) == ("pfcc", "dev")
    assert load_beir(tmp_path / "pfcc", "dev", with_titles=False).corpus["vc1"].startswith("The moon")


def test_judged_documents_without_text_stay_in_the_qrels(tmp_path: Path) -> None:
    dataset = load_beir(rerank_dataset(tmp_path / "cqa"), "dev")
    assert dataset.qrels["q2"] == {"vc2": 1, "vc4": 0, "vc9": 1}
    assert dataset.metadata["judged_documents_without_text"] == 1


def test_missing_split_and_missing_query_texts_are_errors(tmp_path: Path) -> None:
    folder = retrieval_dataset(tmp_path / "pfcc")
    with pytest.raises(FileNotFoundError, match="test"):
        load_beir(folder, "test")
    (folder / "qrels" / "bad.tsv").write_text("query-id\tcorpus-id\tscore\nq99\tvc1\t1\n")
    with pytest.raises(ValueError, match="q99"):
        load_beir(folder, "bad")


def test_malformed_jsonl_names_file_and_line(tmp_path: Path) -> None:
    folder = retrieval_dataset(tmp_path / "pfcc")
    with (folder / "corpus.jsonl").open("a") as handle:
        handle.write('{"_id": "vc6"}\n')
    with pytest.raises(ValueError, match=r"corpus.jsonl:6: field 'text'"):
        load_beir(folder, "dev")
    (folder / "corpus.jsonl").write_text("not json\n")
    with pytest.raises(ValueError, match=r"corpus.jsonl:1: invalid JSON"):
        load_beir(folder, "dev")


def test_load_pairs(tmp_path: Path) -> None:
    path = tmp_path / "dev_pairs.jsonl"
    write_jsonl(
        path, [{"query": "a", "document": "b", "label": 1}, {"query": "c", "document": "d", "label": 2.5}]
    )
    assert load_pairs(path) == [LabeledPair("a", "b", 1.0), LabeledPair("c", "d", 2.5)]
    write_jsonl(path, [{"query": "a", "document": "b", "label": "yes"}])
    with pytest.raises(ValueError, match="dev_pairs.jsonl:1: field 'label'"):
        load_pairs(path)


def test_infer_task(tmp_path: Path) -> None:
    assert infer_task(retrieval_dataset(tmp_path / "pfcc"), "dev") == "retrieval"
    assert infer_task(rerank_dataset(tmp_path / "cqa"), "dev") == "rerank"
    assert infer_task(pairs_dataset(tmp_path / "stsb", graded=True), "dev") == "pairs"
    # MRPC-like: BEIR view with one judged document per query, some judged 0, plus a pair file.
    mrpc = pairs_dataset(tmp_path / "mrpc", graded=False)
    (mrpc / "qrels").mkdir()
    (mrpc / "qrels" / "dev.tsv").write_text("query-id\tcorpus-id\tscore\ns1\tt1\t1\ns2\tt2\t0\n")
    assert infer_task(mrpc, "dev") == "pairs"
    # STS-b-like: graded float qrels next to the pair file.
    (mrpc / "qrels" / "dev.tsv").write_text("query-id\tcorpus-id\tscore\ns1\tt1\t4.75\n")
    assert infer_task(mrpc, "dev") == "pairs"
    with pytest.raises(FileNotFoundError):
        infer_task(tmp_path / "pfcc", "test")


def test_infer_pair_task_and_relevance_levels(tmp_path: Path) -> None:
    assert infer_pair_task([LabeledPair("a", "b", 1.0), LabeledPair("a", "c", 0.0)]) == "f1"
    assert infer_pair_task([LabeledPair("a", "b", 1.0), LabeledPair("a", "c", 3.5)]) == "spearman"
    assert default_relevance_level(tmp_path / "antique") == 3
    assert default_relevance_level(tmp_path / "pfcc_snopes") == 1
