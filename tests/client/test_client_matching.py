"""The client's match-decision surface against a real `pairank serve`: calibrate, decide one text and
several, read and change the policy, list twins; an uncalibrated corpus is a ConflictError."""

from __future__ import annotations

import pytest

from pairank.client import Client, ConflictError, InvalidRequestError

TOPICS = ["vaccines", "bananas", "towers", "elections", "sharks", "bleach", "masks", "gold", "water", "eggs"]


def test_match_decisions_through_the_client(admin: Client) -> None:
    corpus = "client-checks-match"
    admin.create_corpus(corpus, "claim")
    texts = [
        f"The minister said {TOPICS[i % 10]} were banned in city {i // 10} in {1990 + i}." for i in range(40)
    ]
    admin.upsert(corpus, [{"id": f"c{i}", "text": t} for i, t in enumerate(texts)])
    admin.upsert(corpus, [{"id": "twin", "text": texts[3].upper()}])
    with pytest.raises(ConflictError):
        admin.match(corpus, "were eggs banned?")
    questions = [f"were {TOPICS[i % 10]} banned in city {i // 10} in {1990 + i}?" for i in range(30)]
    pairs = [{"query": q, "document_id": f"c{i}", "label": 1} for i, q in enumerate(questions)]
    admin.add_pairs(corpus, pairs)
    report = admin.calibrate_match(corpus)
    assert (
        report.queries == 30 and report.twin_groups == 1 and report.kind in {"cosine", "logistic", "isotonic"}
    )
    assert admin.match_calibration(corpus).calibrated_at == report.calibrated_at
    assert admin.twins(corpus).groups == [["c3", "twin"]]
    one = admin.match(corpus, texts[35])
    assert one.decision in {"match", "review", "new"} and one.candidates[0].id == "c35"
    many = admin.match_many(corpus, [texts[35], "zebra crossing"])
    assert [m.text for m in many] == [texts[35], "zebra crossing"]
    assert many[0].candidates[0].probability == one.candidates[0].probability
    policy = admin.set_match_policy(corpus, match_precision=0.99, review_candidates=3)
    assert policy.match_precision == 0.99 and admin.match_policy(corpus).review_candidates == 3
    assert len(admin.match(corpus, texts[35]).candidates) == 3
    with pytest.raises(InvalidRequestError) as refused:
        admin.set_match_policy(corpus, new_precision=2)
    assert refused.value.field == "new_precision"
    admin.delete_corpus(corpus)
