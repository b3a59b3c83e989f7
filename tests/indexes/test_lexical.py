"""The BM25 index: hand-computed scores, bm25s's own scores, and updates that equal a fresh build."""

from __future__ import annotations

import math
from pathlib import Path

import bm25s
import numpy as np
import pytest
import Stemmer
from hypothesis import given, settings
from hypothesis import strategies as st

from indexes.analysis import Analyser
from indexes.lexical import LexicalIndex, Matches

CLAIMS = [
    "Sharks were photographed swimming on a flooded highway after the hurricane.",
    "The hurricane flooded the highway; no shark was ever seen there.",
    "Drinking bleach cures the coronavirus, a viral post claims.",
    "5G masts spread the coronavirus, according to a viral video.",
    "Bill Gates wants to microchip everyone through vaccines.",
    "The moon landing was filmed in a studio in 1969.",
]


def test_scores_equal_a_hand_computed_case() -> None:
    index = LexicalIndex(Analyser(stem=False))
    index.apply([(1, "cat dog"), (2, "cat cat mouse"), (3, "bird")])
    idf = math.log(1 + (3 - 2 + 0.5) / (2 + 0.5))  # N = 3 documents, 2 contain "cat"
    average = (2 + 3 + 1) / 3
    expected = {
        1: idf * 1 / (1 + 1.5 * (1 - 0.75 + 0.75 * 2 / average)),
        2: idf * 2 / (2 + 1.5 * (1 - 0.75 + 0.75 * 3 / average)),
    }
    assert index.scores("cat") == pytest.approx(expected, rel=1e-12)
    assert index.search("the cat", 5) == [(2, pytest.approx(expected[2])), (1, pytest.approx(expected[1]))]
    assert index.scores("cat", [3, 1]) == pytest.approx({3: 0.0, 1: expected[1]})
    twice = {doc: 2 * score for doc, score in expected.items()}  # a repeated query token counts twice
    assert index.scores("cat dog cat") == pytest.approx({**twice, 1: twice[1] + index.scores("dog")[1]})


def test_scores_equal_bm25s_lucene_with_stemming_and_stop_words() -> None:
    ours = LexicalIndex()
    ours.apply(list(enumerate(CLAIMS)))
    stemmer = Stemmer.Stemmer("english")
    retriever = bm25s.BM25(method="lucene")
    retriever.index(
        bm25s.tokenize(CLAIMS, stopwords="en", stemmer=stemmer, show_progress=False), show_progress=False
    )
    queries = ("shark on the flooded highway", "coronavirus viral claims", "vaccines microchips gates",
               "viral coronavirus, the coronavirus")  # fmt: skip
    for query in queries:
        tokens = bm25s.tokenize(
            [query], stopwords="en", stemmer=stemmer, show_progress=False, return_ids=False
        )[0]
        theirs = retriever.get_scores(tokens)
        found = ours.scores(query, range(len(CLAIMS)))
        assert [found[i] for i in range(len(CLAIMS))] == pytest.approx(theirs.tolist(), rel=1e-5, abs=1e-6)


def test_a_replaced_text_and_a_delete_leave_no_trace() -> None:
    index = LexicalIndex()
    index.apply([(1, CLAIMS[0]), (2, CLAIMS[2])])
    index.apply([(1, CLAIMS[4])], deletes=[2], hwm=7)
    fresh = LexicalIndex()
    fresh.apply([(1, CLAIMS[4])])
    assert index.scores("shark highway") == {} and len(index) == 1 and index.hwm == 7
    assert index.scores("vaccines gates") == fresh.scores("vaccines gates")


def test_save_and_load_round_trip_and_refuse_another_tokenizer(tmp_path: Path) -> None:
    index = LexicalIndex()
    index.apply(list(enumerate(CLAIMS)), hwm=42)
    index.save(tmp_path / "lexical")
    index.apply([(9, "a later write")], hwm=43)
    index.save(tmp_path / "lexical")  # a second generation replaces the first
    loaded = LexicalIndex.load(tmp_path / "lexical")
    assert loaded is not None and loaded.hwm == 43 and len(loaded) == len(CLAIMS) + 1
    assert loaded.scores("coronavirus viral") == index.scores("coronavirus viral")
    assert LexicalIndex.load(tmp_path / "lexical", Analyser(stem=False)) is None
    assert LexicalIndex.load(tmp_path / "missing") is None
    assert len([p for p in (tmp_path / "lexical").iterdir() if p.is_dir()]) == 1


WORDS = st.sampled_from(["shark", "highway", "flood", "virus", "bleach", "moon", "studio", "gates", "the"])
TEXTS = st.lists(WORDS, min_size=0, max_size=6).map(" ".join)
OPS = st.lists(
    st.one_of(
        st.tuples(st.just("upsert"), st.integers(0, 6), TEXTS),
        st.tuples(st.just("delete"), st.integers(0, 6), st.just("")),
        st.tuples(st.just("restart"), st.just(0), st.just("")),
    ),
    max_size=25,
)


def reference_bm25(texts: dict[int, str], query: str) -> dict[int, float]:
    """BM25 (Lucene form) by the book, one running sum per document in query-token order."""
    tokenize = Analyser()
    documents = {doc_id: tokenize(text) for doc_id, text in texts.items()}
    if not documents:
        return {}
    average = sum(len(terms) for terms in documents.values()) / len(documents)
    totals: dict[int, float] = {}
    for term in tokenize(query):
        holders = {d: terms.count(term) for d, terms in documents.items() if term in terms}
        if not holders:
            continue
        idf = math.log(1 + (len(documents) - len(holders) + 0.5) / (len(holders) + 0.5))
        for doc_id, tf in holders.items():
            norm = 1.5 * (1 - 0.75 + 0.75 * len(documents[doc_id]) / average)
            totals[doc_id] = totals.get(doc_id, 0.0) + idf * tf / (tf + norm)
    return totals


@settings(max_examples=60, deadline=None)
@given(OPS)
def test_any_sequence_of_writes_and_restarts_equals_a_fresh_build(ops: list[tuple[str, int, str]]) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        index, truth = LexicalIndex(), {}
        for seq, (op, doc_id, text) in enumerate(ops, start=1):
            # Queried between writes, so a term's cached postings arrays must follow every write.
            assert index.scores("shark highway the flood") == reference_bm25(truth, "shark highway the flood")
            if op == "upsert":
                index.apply([(doc_id, text)], hwm=seq)
                truth[doc_id] = text
            elif op == "delete":
                index.apply([], [doc_id], hwm=seq)
                truth.pop(doc_id, None)
            else:
                index.save(Path(folder))
                reloaded = LexicalIndex.load(Path(folder))
                assert reloaded is not None and reloaded.hwm == index.hwm
                index = reloaded
        fresh = LexicalIndex()
        fresh.apply(sorted(truth.items()))
        for query in ("shark highway", "virus bleach moon", "gates studio flood"):
            assert index.scores(query) == pytest.approx(fresh.scores(query))


@settings(max_examples=100, deadline=None)
@given(
    st.dictionaries(st.integers(0, 50), st.sampled_from([0.5, 1.0, 1.5, 2.25, 3.0]), max_size=40),
    st.integers(0, 45),
)
def test_best_equals_a_full_sort_with_ties_by_id(found: dict[int, float], k: int) -> None:
    """The partial sort keeps exactly what sorting every match by (-score, id) keeps."""
    expected = sorted(found.items(), key=lambda item: (-item[1], item[0]))[:k]
    ids = sorted(found)
    matches = Matches(np.array(ids, np.int64), np.array([found[i] for i in ids], np.float64))
    assert matches.best(k) == expected
