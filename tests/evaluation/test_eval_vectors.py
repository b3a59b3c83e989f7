"""Reproduce every value of vectors/expected.json (pytrec_eval 0.5.11) and the applicable variants."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evaluation.metrics import evaluate_ranking, rank_documents

VECTORS = Path(__file__).parent / "vectors"

TOLERANCE = 1e-6
EXPECTED_KEYS = [
    "MRR", "MAP", "MAP@10",
    "HasPositive@1", "HasPositive@3", "HasPositive@5", "HasPositive@10",
    "P@1", "P@3", "P@5", "P@10",
    "nDCG@3", "nDCG@5", "nDCG@10",
    "MAP[rel>=2]", "MRR[rel>=2]", "P@5[rel>=2]",
]  # fmt: skip


def _metric_and_level(key: str) -> tuple[str, int]:
    """`P@5[rel>=2]` -> (`P@5`, 2); keys without a suffix use relevance level 1."""
    if key.endswith("[rel>=2]"):
        return key.removesuffix("[rel>=2]"), 2
    return key, 1


def test_expected_json_lists_the_keys_we_check(expected: dict[str, Any]) -> None:
    # Guards against a new vector file silently adding a metric this module does not test.
    assert sorted(key for key in expected if key != "_meta") == sorted(EXPECTED_KEYS)


@pytest.mark.parametrize("key", EXPECTED_KEYS)
def test_reproduces_pytrec_eval(
    key: str, expected: dict[str, Any], vectors_qrels: dict[str, dict[str, int]], vectors_run: dict[str, Any]
) -> None:
    metric, level = _metric_and_level(key)
    report = evaluate_ranking(vectors_qrels, vectors_run, relevance_level=level, metrics=[metric])
    for query_id, value in expected[key]["per_query"].items():
        assert report.per_query[query_id][metric] == pytest.approx(value, abs=TOLERANCE), query_id
    assert report.means[metric] == pytest.approx(expected[key]["mean"], abs=TOLERANCE)
    assert set(report.per_query) == set(expected[key]["per_query"])


def test_readme_rankings_follow_trec_eval_tie_order(vectors_run: dict[str, dict[str, float]]) -> None:
    # The README's "trec_eval ranking" column: ties go by corpus-id descending.
    assert rank_documents(vectors_run["q1"]) == ["d1", "d3", "d2", "d4", "d5"]
    assert rank_documents(vectors_run["q5"]) == ["d3", "d2", "d1"]
    assert rank_documents(vectors_run["q3"]) == ["d3", "d2", "d1", "d6", "d4"]


@pytest.mark.parametrize(
    "metric", ["MAP@1", "P@1", "MRR@1", "MAP@5", "P@5", "MRR@5", "MAP@10", "P@10", "MRR@10"]
)
def test_reproduces_trectools_means(
    metric: str, expected_variants: dict[str, Any], vectors_qrels: dict[str, Any], vectors_run: dict[str, Any]
) -> None:
    # trectools (the CLEF CheckThat! scorer) shares trec_eval's tie order, so all of its means apply,
    # including MRR@k, which pytrec_eval does not compute.
    report = evaluate_ranking(vectors_qrels, vectors_run, metrics=[metric])
    assert report.means[metric] == pytest.approx(
        expected_variants["trectools"]["means"][metric], abs=TOLERANCE
    )


def _file_order_run(run: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    """Same ranking as the SemEval scorer's stable sort (ties in file order), with distinct scores."""
    distinct: dict[str, dict[str, float]] = {}
    for query_id, scores in run.items():
        stable = sorted(scores, key=lambda doc_id: -scores[doc_id])  # sorted() is stable: file order kept
        distinct[query_id] = {doc_id: float(len(stable) - rank) for rank, doc_id in enumerate(stable)}
    return distinct


def test_semeval_map_matches_the_derived_scorer_when_ties_follow_file_order(
    expected_variants: dict[str, Any], vectors_qrels: dict[str, Any], vectors_run: dict[str, Any]
) -> None:
    # variants.py re-implements the SemEval 2016/17 ev.py, whose sort keeps tied scores in file order,
    # while we order ties by document id descending. Breaking the ties the scorer's way first (the
    # run's dict keeps file order) makes every value of the variant apply: MAP is our SemEval-MAP@10.
    semeval = expected_variants["derived_semeval_task3_ev.py"]["metrics"]
    report = evaluate_ranking(
        vectors_qrels, _file_order_run(vectors_run), metrics=["SemEval-MAP@10", "MRR@10"]
    )
    for query_id, value in semeval["MAP"]["per_query"].items():
        assert report.per_query[query_id]["SemEval-MAP@10"] == pytest.approx(value, abs=TOLERANCE), query_id
        assert report.per_query[query_id]["MRR@10"] == pytest.approx(
            semeval["MRR"]["per_query"][query_id], abs=TOLERANCE
        )
    assert report.means["SemEval-MAP@10"] == pytest.approx(semeval["MAP"]["mean"], abs=TOLERANCE)
    assert report.means["MRR@10"] == pytest.approx(semeval["MRR"]["mean"], abs=TOLERANCE)


def test_semeval_map_on_the_raw_run(
    expected_variants: dict[str, Any], vectors_qrels: dict[str, Any], vectors_run: dict[str, Any]
) -> None:
    # Without ties (q2, q3, q4, q6) the variant applies as is. q1 and q5 have tied scores, which the
    # scorer keeps in file order (d2 before d3, d1 first) but trec_eval order reverses:
    # q1 ranks d1, d3, d2, d4 -> (1/3 + 2/4) / 2; q5 ranks d3, d2, d1 -> 1/3.
    semeval = expected_variants["derived_semeval_task3_ev.py"]["metrics"]["MAP"]["per_query"]
    report = evaluate_ranking(vectors_qrels, vectors_run, metrics=["SemEval-MAP@10"])
    values = {query_id: row["SemEval-MAP@10"] for query_id, row in report.per_query.items()}
    for query_id in ("q2", "q3", "q4", "q6"):
        assert values[query_id] == pytest.approx(semeval[query_id], abs=TOLERANCE)
    assert values["q1"] == pytest.approx((1 / 3 + 2 / 4) / 2)
    assert values["q5"] == pytest.approx(1 / 3)
    assert report.means["SemEval-MAP@10"] == pytest.approx(sum(values.values()) / 6)


def test_vectors_are_a_faithful_copy() -> None:
    # The copies must stay byte-identical to ../shared/eval-vectors when that folder is present.
    shared = VECTORS.parents[3] / "shared" / "eval-vectors"  # <checkout>/../shared
    if not shared.is_dir():
        pytest.skip("../shared/eval-vectors is not present")
    for name in ("qrels.tsv", "run.tsv", "expected.json", "expected_variants.json"):
        assert (VECTORS / name).read_bytes() == (shared / name).read_bytes(), name
