"""The client's judging surface against a real `pairank serve`: two judges on one pair, list, edit and
delete your own, agreement, export and import."""

from __future__ import annotations

import time

import pytest

from pairank.client import Client, ConflictError, ForbiddenError, InvalidRequestError
from tests.client.conftest import url_of
from tests.helpers.processes import Server


def test_judgements_through_the_client(admin: Client, server: Server) -> None:
    corpus = "client-judgements"
    assert admin.create_corpus(corpus, "claim", judgement_scale="graded").judgement_scale == "graded"
    admin.upsert(corpus, [{"id": f"c{i}", "text": f"claim {i} about towers"} for i in range(3)])
    key = admin.create_key("write", corpora=[corpus]).key
    with Client(url_of(server), api_key=key) as other:
        admin.judge(corpus, "towers", "c0", 3, note="exact")
        judged = other.judge(corpus, "towers", "c0", 1)
        assert judged.pair.label == 1 and judged.pair.disagreement  # a tie: the lower grade
        other.judge(corpus, "towers", "c1", unsure=True)
        page = admin.list_judgements(corpus, limit=2)
        assert len(page.judgements) == 2 and page.next_cursor is not None
        assert len(list(admin.iter_judgements(corpus, page_size=1))) == 3
        theirs = judged.judgement.id
        with pytest.raises(ForbiddenError):
            admin.edit_judgement(corpus, theirs, 3)
        assert other.edit_judgement(corpus, theirs, 2, note="closer").grade == 2
        with pytest.raises(InvalidRequestError):
            other.edit_judgement(corpus, theirs, 7)
        assert admin.agreement(corpus).judges == sorted(["admin-key", judged.judgement.judged_by])
        trec = admin.export_judgements(corpus, "trec")
        assert trec.count("\n") == 1 and trec.split()[2:] == ["c0", "2"]
        imported = other.import_judgements(corpus, "query,document_id,label\ntowers,c2,0\n", "csv")
        assert imported.judged == 1 and imported.pairs == 2
        other.delete_judgement(corpus, theirs)
        with pytest.raises(ConflictError):  # the admin's 3 is off a binary scale
            admin.set_judgement_scale(corpus, "binary")
        assert admin.set_judgement_scale(corpus, "graded").judgement_scale == "graded"
        assert [j.judged_by for j in admin.list_judgements(corpus, query="towers").judgements].count(
            "admin-key"
        ) == 1


def test_query_sets_through_the_client(admin: Client) -> None:
    corpus = "client-query-sets"
    admin.create_corpus(corpus, "claim")
    admin.upsert(corpus, [{"id": f"c{i}", "text": f"claim {i} about towers"} for i in range(3)])
    admin.judge(corpus, "towers 1", "c1", 1)
    created = admin.create_query_set(corpus, "towers", ["towers 1", "towers 2"])
    assert created.queries == ["towers 1", "towers 2"] and created.last_run is None
    queued = admin.run_query_set(corpus, "towers")
    assert queued.status == "queued"
    deadline = time.monotonic() + 60
    while (history := admin.query_set_history(corpus, "towers")).runs[-1].status != "succeeded":
        assert time.monotonic() < deadline, history
        time.sleep(0.2)
    assert list(history.runs[-1].per_query or {}) == ["towers 1"]
    assert [s.name for s in admin.list_query_sets(corpus).query_sets] == ["towers"]
    admin.delete_query_set(corpus, "towers")
    assert admin.list_query_sets(corpus).query_sets == []
