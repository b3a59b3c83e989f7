"""The client's inbox surface against a real `pairank serve`: create an inbox, send items (a resent
batch is taken once), page the clusters, triage them, list deliveries; bad input names the field."""

from __future__ import annotations

import pytest

from pairank.client import Client, InvalidRequestError, NotFoundError


def test_an_inbox_through_the_client(admin: Client) -> None:
    corpus = "client-inbox-checks"
    admin.create_corpus(corpus, "claim")
    admin.upsert(
        corpus,
        [
            {"id": "c1", "text": "The moon landing was staged in a film studio."},
            {"id": "c2", "text": "Drinking bleach cures the coronavirus infection."},
        ],
    )
    created = admin.create_inbox(
        "client-tips", [corpus], language="en", webhooks=[{"url": "http://127.0.0.1:9/hook"}]
    )
    assert created.webhooks[0].secret and created.corpora == [corpus]
    items = [
        {"id": f"m{n}", "text": " " * n + "was the moon landing staged", "source": "sms"} for n in range(3)
    ]
    taken = admin.add_items("client-tips", items)
    assert taken.added == 3 and admin.add_items("client-tips", items).duplicates == 3
    clusters = list(admin.iter_clusters("client-tips"))
    assert sum(c.size for c in clusters) == 3 and clusters[0].items
    first = clusters[0]
    assert admin.get_cluster("client-tips", first.id).size == first.size
    done = admin.confirm("client-tips", first.id, corpus, "c1")
    assert done.clusters[0].status == "answered" and done.pairs >= 1
    assert (
        admin.set_cluster_status("client-tips", first.id, "needs_check").clusters[0].status == "needs_check"
    )
    page = admin.list_clusters("client-tips", status=["needs_check"], limit=1)
    assert [c.id for c in page.clusters] == [first.id]
    assert admin.get_inbox("client-tips").items == 3
    assert "client-tips" in {i.name for i in admin.list_inboxes()}
    assert admin.list_deliveries("client-tips").deliveries  # nothing listens on port 9: still listed
    with pytest.raises(InvalidRequestError) as refused:
        admin.create_inbox("client-bad", [corpus], webhooks=[{"url": "ftp://example.org/x"}])
    assert refused.value.field == "webhooks[0].url"
    admin.delete_inbox("client-tips")
    with pytest.raises(NotFoundError):
        admin.get_inbox("client-tips")
    admin.delete_corpus(corpus)
