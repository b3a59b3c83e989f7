"""Property tests (hypothesis) of the ranking metrics."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.metrics import evaluate_ranking, order_scores, rank_documents

CUTOFFS = (1, 3, 5, 10)
DOC_IDS = [f"d{i}" for i in range(12)]
# Few distinct score values, so that ties (and the tie rule) are exercised constantly.
SCORES = st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0])
FAST = settings(max_examples=60, deadline=None)

qrels_for_query = st.dictionaries(st.sampled_from(DOC_IDS), st.integers(0, 3), min_size=1, max_size=8)
run_for_query = st.dictionaries(st.sampled_from(DOC_IDS), SCORES, max_size=12)
query_ids = st.sampled_from(["q1", "q2", "q3", "q4"])
qrels_strategy = st.dictionaries(query_ids, qrels_for_query, min_size=1, max_size=4)
run_strategy = st.dictionaries(query_ids, run_for_query, max_size=4)


@FAST
@given(qrels=qrels_strategy, run=run_strategy, level=st.integers(1, 3))
def test_every_metric_lies_in_the_unit_interval(qrels: dict, run: dict, level: int) -> None:
    report = evaluate_ranking(qrels, run, relevance_level=level, cutoffs=CUTOFFS)
    values = list(report.means.values()) + [v for row in report.per_query.values() for v in row.values()]
    assert all(0.0 <= value <= 1.0 + 1e-12 for value in values)


@FAST
@given(qrels=qrels_strategy, level=st.integers(1, 3))
def test_a_perfect_run_scores_one(qrels: dict, level: int) -> None:
    # Scoring each judged document by its grade ranks relevant documents first, by grade.
    run = {
        query_id: {doc_id: float(grade) for doc_id, grade in judged.items()}
        for query_id, judged in qrels.items()
    }
    report = evaluate_ranking(qrels, run, relevance_level=level, cutoffs=CUTOFFS)
    for query_id, judged in qrels.items():
        values = report.per_query[query_id]
        num_relevant = sum(1 for grade in judged.values() if grade >= level)
        if num_relevant == 0:
            continue  # nothing to find: scored 0 by convention
        always_one = ["MAP", "MRR", "SemEval-MAP@10"]
        for k in CUTOFFS:
            always_one += [f"MRR@{k}", f"HasPositive@{k}", f"nDCG@{k}"]
            if k >= num_relevant:
                always_one += [f"MAP@{k}", f"Recall@{k}"]
            else:
                always_one.append(f"P@{k}")
        for name in always_one:
            assert abs(values[name] - 1.0) < 1e-12, name


@st.composite
def ranking_and_move(draw: st.DrawFn) -> tuple[dict[str, int], list[str], int, int]:
    """Judgments, a ranked list of distinct documents, and a relevant document's move from i up to j."""
    ranked = draw(st.permutations(DOC_IDS))[: draw(st.integers(2, len(DOC_IDS)))]
    judged = draw(st.dictionaries(st.sampled_from(DOC_IDS), st.integers(0, 2), max_size=12))
    moved_from = draw(st.integers(1, len(ranked) - 1))
    judged[ranked[moved_from]] = draw(st.integers(1, 2))  # the moved document is relevant
    moved_to = draw(st.integers(0, moved_from - 1))
    return judged, ranked, moved_from, moved_to


def _run_from(ranked: list[str]) -> dict[str, dict[str, float]]:
    return {"q": {doc_id: float(len(ranked) - rank) for rank, doc_id in enumerate(ranked)}}


@FAST
@given(case=ranking_and_move())
def test_moving_a_relevant_document_up_never_lowers_ap_rr_or_has_positive(case: tuple) -> None:
    judged, ranked, moved_from, moved_to = case
    moved = list(ranked)
    moved.insert(moved_to, moved.pop(moved_from))
    names = ["MAP", "MRR"] + [f"HasPositive@{k}" for k in CUTOFFS] + [f"MAP@{k}" for k in CUTOFFS]
    before = evaluate_ranking({"q": judged}, _run_from(ranked), metrics=names).means
    after = evaluate_ranking({"q": judged}, _run_from(moved), metrics=names).means
    for name in names:
        assert after[name] >= before[name] - 1e-12, name


@FAST
@given(qrels=qrels_strategy, run=run_strategy, data=st.data())
def test_the_input_order_of_a_run_changes_nothing(qrels: dict, run: dict, data: st.DataObject) -> None:
    shuffled_queries = data.draw(st.permutations(list(run)))
    shuffled = {
        query_id: {
            doc_id: run[query_id][doc_id] for doc_id in data.draw(st.permutations(list(run[query_id])))
        }
        for query_id in shuffled_queries
    }
    assert evaluate_ranking(qrels, shuffled, cutoffs=CUTOFFS) == evaluate_ranking(qrels, run, cutoffs=CUTOFFS)


@FAST
@given(order=st.permutations(DOC_IDS))
def test_order_scores_read_back_in_exactly_their_order(order: list[str]) -> None:
    # The scores a re-ranked or fused order is stored with: trec_eval's tie rule must never reorder it.
    assert rank_documents(order_scores(order)) == order
