"""The retraining gate's dev set: by default the most recently judged queries, every pair of a query on
one side, exported in the order the pairs were judged (both databases)."""

from __future__ import annotations

from collections.abc import Callable

from app.serving.runtime import Runtime
from app.usecases.corpora import CorpusService
from app.usecases.pairs import PairInput, PairService


def test_the_dev_set_is_the_most_recent_queries(make_runtime: Callable[..., Runtime]) -> None:
    runtime = make_runtime()
    CorpusService(runtime).create_corpus("claims", "claim", None)
    pairs = PairService(runtime)
    # Judged one request at a time, so later queries are later in time; query 3 is judged again last.
    for number in range(10):
        pairs.add_pairs("claims", [PairInput(f"query {number}", None, f"claim {number}", 1.0)])
    pairs.add_pairs("claims", [PairInput("query 3", None, "claim 9", 0.0)])
    train, dev = pairs.export("claims", None, dev_fraction=0.2, seed=7)
    assert {p.query for p in dev} == {"query 8", "query 9"}  # a query's time is its first judgement
    assert [p.query for p in train] == [*(f"query {n}" for n in range(8)), "query 3"]  # in judged order
    assert all(p.query not in {"query 8", "query 9"} for p in train)
    # The seed no longer moves the split: time does.
    assert pairs.export("claims", None, dev_fraction=0.2, seed=8) == (train, dev)


def test_a_large_dev_fraction_of_few_queries_still_leaves_one_to_train(
    make_runtime: Callable[..., Runtime],
) -> None:
    runtime = make_runtime()
    CorpusService(runtime).create_corpus("claims", "claim", None)
    pairs = PairService(runtime)
    for number in range(3):
        pairs.add_pairs("claims", [PairInput(f"query {number}", None, f"claim {number}", 1.0)])
    train, dev = pairs.export("claims", None, dev_fraction=0.9, seed=0)
    assert [p.query for p in train] == ["query 0"] and [p.query for p in dev] == ["query 1", "query 2"]
