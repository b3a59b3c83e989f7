"""Unit tests of evaluation.metrics: names, conventions and edge cases beyond the eval vectors."""

from __future__ import annotations

import math

import pytest

from evaluation.metrics import (
    METRIC_FAMILIES,
    RankingReport,
    default_metric_names,
    evaluate_ranking,
    is_valid_metric,
    parse_metric,
    rank_documents,
)


def test_default_metrics_cover_every_family_and_cutoff() -> None:
    report = evaluate_ranking({"q": {"a": 1}}, {"q": {"a": 0.5}})
    names = list(report.means)
    assert names == default_metric_names()
    for family in ("MAP", "MRR", "HasPositive", "P", "nDCG", "Recall"):
        assert [f"{family}@{k}" for k in (1, 3, 5, 10, 20, 50)] == [
            n for n in names if n.startswith(f"{family}@")
        ]
    assert {"MAP", "MRR", "SemEval-MAP@10"} <= set(names)


@pytest.mark.parametrize("name", ["MAP", "MRR", "MAP@7", "MRR@1", "HasPositive@50", "P@3", "Recall@100"])
def test_valid_metric_names(name: str) -> None:
    assert is_valid_metric(name)


@pytest.mark.parametrize(
    "name", ["map", "P", "nDCG", "P@0", "P@-1", "P@x", "F1@3", "SemEval-MAP", "MAP@10@3", ""]
)
def test_invalid_metric_names(name: str) -> None:
    assert not is_valid_metric(name)


def test_unknown_metric_error_names_it_and_lists_the_valid_ones() -> None:
    with pytest.raises(ValueError) as error:
        evaluate_ranking({"q": {"a": 1}}, {}, metrics=["MAP", "Bogus@3"])
    message = str(error.value)
    assert "'Bogus@3'" in message
    assert all(family in message for family in METRIC_FAMILIES)


def test_parse_metric() -> None:
    assert parse_metric("nDCG@10") == ("nDCG", 10)
    assert parse_metric("MAP") == ("MAP", None)
    assert parse_metric("SemEval-MAP@10") == ("SemEval-MAP", 10)


def test_metrics_restrict_the_output_in_the_order_given() -> None:
    report = evaluate_ranking({"q": {"a": 1}}, {"q": {"a": 1.0}}, metrics=["P@2", "MRR", "P@2"])
    assert list(report.means) == ["P@2", "MRR"]
    assert report.per_query == {"q": {"P@2": 0.5, "MRR": 1.0}}
    assert isinstance(report, RankingReport)


def test_custom_cutoffs() -> None:
    report = evaluate_ranking({"q": {"a": 1}}, {"q": {"a": 1.0}}, cutoffs=(2,))
    assert "P@2" in report.means and "P@10" not in report.means
    with pytest.raises(ValueError, match="positive"):
        evaluate_ranking({"q": {"a": 1}}, {}, cutoffs=(0,))


def test_ties_are_broken_by_document_id_descending_whatever_the_input_order() -> None:
    assert rank_documents({"a": 1.0, "c": 1.0, "b": 1.0, "z": 0.5, "y": 2.0}) == ["y", "c", "b", "a", "z"]
    # Code-point order equals trec_eval's strcmp on UTF-8 bytes: "b" > "B" > "10" > "1".
    assert rank_documents({"1": 0.0, "10": 0.0, "B": 0.0, "b": 0.0}) == ["b", "B", "10", "1"]


def test_qrels_query_without_results_counts_zero() -> None:
    qrels = {"found": {"a": 1}, "lost": {"b": 1}}
    report = evaluate_ranking(qrels, {"found": {"a": 0.9}}, metrics=["MAP", "MRR", "nDCG@10", "P@1"])
    assert report.per_query["lost"] == {"MAP": 0.0, "MRR": 0.0, "nDCG@10": 0.0, "P@1": 0.0}
    assert report.means["MAP"] == 0.5


def test_run_queries_missing_from_qrels_are_ignored() -> None:
    report = evaluate_ranking({"q": {"a": 1}}, {"q": {"a": 1.0}, "extra": {"a": 1.0}}, metrics=["MAP"])
    assert set(report.per_query) == {"q"}
    assert report.means["MAP"] == 1.0


def test_query_without_relevant_documents_counts_zero_in_every_metric() -> None:
    report = evaluate_ranking({"q": {"a": 0, "b": 0}, "r": {"a": 1}}, {"q": {"a": 1.0}, "r": {"a": 1.0}})
    assert all(value == 0.0 for value in report.per_query["q"].values())
    assert report.means["MRR"] == 0.5


def test_unjudged_documents_are_not_relevant_even_at_level_zero() -> None:
    qrels = {"q": {"judged": 0}}
    run = {"q": {"unjudged": 0.9, "judged": 0.5}}
    report = evaluate_ranking(qrels, run, relevance_level=0, metrics=["MRR", "MAP"])
    assert report.means == {"MRR": 0.5, "MAP": 0.5}


def test_ap_divides_by_all_relevant_documents_and_semeval_by_those_found() -> None:
    qrels = {"q": {"a": 1, "b": 1, "c": 1, "d": 1}}
    run = {"q": {"a": 0.9, "x": 0.8, "b": 0.7}}  # c, d never retrieved
    report = evaluate_ranking(qrels, run, metrics=["MAP", "SemEval-MAP@10", "MAP@1", "Recall@3"])
    assert report.means["MAP"] == pytest.approx((1 + 2 / 3) / 4)
    assert report.means["SemEval-MAP@10"] == pytest.approx((1 + 2 / 3) / 2)
    assert report.means["MAP@1"] == pytest.approx(1 / 4)
    assert report.means["Recall@3"] == pytest.approx(2 / 4)


def test_semeval_map_ignores_hits_below_its_cutoff() -> None:
    run = {"q": {f"n{i:02d}": 1.0 - i / 100 for i in range(10)} | {"a": 0.0}}
    report = evaluate_ranking({"q": {"a": 1}}, run, metrics=["SemEval-MAP@10", "MAP", "MRR@10", "MRR"])
    assert report.means == {"SemEval-MAP@10": 0.0, "MAP": 1 / 11, "MRR@10": 0.0, "MRR": 1 / 11}


def test_precision_divides_by_k_for_short_lists() -> None:
    report = evaluate_ranking({"q": {"a": 1}}, {"q": {"a": 1.0}}, metrics=["P@1", "P@4", "HasPositive@4"])
    assert report.means == {"P@1": 1.0, "P@4": 0.25, "HasPositive@4": 1.0}


def test_ndcg_uses_grades_as_gains_regardless_of_relevance_level() -> None:
    # trec_eval's ndcg_cut takes gains from the qrels grades and ignores -l.
    qrels = {"q": {"a": 1, "b": 2}}
    run = {"q": {"a": 0.9, "b": 0.1}}
    ideal = 2 + 1 / math.log2(3)
    expected = (1 + 2 / math.log2(3)) / ideal
    for level in (1, 2, 3):
        report = evaluate_ranking(qrels, run, relevance_level=level, metrics=["nDCG@2"])
        assert report.means["nDCG@2"] == pytest.approx(expected)


def test_ndcg_ignores_negative_grades() -> None:
    report = evaluate_ranking(
        {"q": {"a": -1, "b": 1}}, {"q": {"a": 0.9, "b": 0.5}}, metrics=["nDCG@2", "MAP"]
    )
    assert report.means["nDCG@2"] == pytest.approx(1 / math.log2(3))
    assert report.means["MAP"] == pytest.approx(0.5)


def test_empty_qrels_and_nan_scores_are_rejected() -> None:
    with pytest.raises(ValueError, match="empty"):
        evaluate_ranking({}, {"q": {"a": 1.0}})
    with pytest.raises(ValueError, match="NaN"):
        evaluate_ranking({"q": {"a": 1}}, {"q": {"a": math.nan}})


def test_empty_run_scores_zero() -> None:
    report = evaluate_ranking({"q": {"a": 1}}, {})
    assert all(value == 0.0 for value in report.means.values())
