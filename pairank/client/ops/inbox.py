"""The tips inbox (docs/guides/inbox.md): inboxes, items, clusters, triage, webhook deliveries."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from app.schemas.inbox import (
    ClusterOut,
    ClusterPage,
    ConfirmIn,
    DeliveryPage,
    InboxCreate,
    InboxList,
    InboxOut,
    ItemIn,
    ItemsIn,
    ItemsOut,
    MoveIn,
    RejectIn,
    StatusIn,
    TriageOut,
)
from pairank.client.calls import Pages, Steps, call, reads, reads_nothing
from pairank.client.ops import given, segment

Item = ItemIn | Mapping[str, Any]


def _path(name: str, rest: str = "") -> str:
    return f"/v1/inboxes/{segment(name)}{rest}"


def create_inbox(
    name: str,
    corpora: Sequence[str],
    *,
    language: str | None = None,
    webhooks: Sequence[Mapping[str, Any]] | None = None,
    grew_after: int | None = None,
) -> Steps[InboxOut]:
    """Create an inbox matching its items against `corpora`; its webhooks' secrets are in this answer only."""
    fields = given(language=language, webhooks=list(webhooks) if webhooks else None, grew_after=grew_after)
    request = InboxCreate.model_validate({"name": name, "corpora": list(corpora), **fields})
    return (yield call("POST", "/v1/inboxes", reads(InboxOut), idempotent=False, json=request))


def list_inboxes() -> Steps[list[InboxOut]]:
    """Every inbox."""
    return list((yield call("GET", "/v1/inboxes", reads(InboxList), idempotent=True)).inboxes)


def get_inbox(name: str) -> Steps[InboxOut]:
    """An inbox with its cluster and item counts."""
    return (yield call("GET", _path(name), reads(InboxOut), idempotent=True))


def delete_inbox(name: str) -> Steps[None]:
    """Delete an inbox with its items, clusters and deliveries."""
    return (yield call("DELETE", _path(name), reads_nothing, idempotent=True))


def add_items(name: str, items: Sequence[Item]) -> Steps[ItemsOut]:
    """Send items (`{"id", "text", "received_at"?, "source"?, "language"?, "metadata"?}`): stored,
    clustered and decided when this returns. Retried safely: an item is taken once by its id."""
    request = ItemsIn.model_validate({"items": [i if isinstance(i, ItemIn) else dict(i) for i in items]})
    return (yield call("POST", _path(name, "/items"), reads(ItemsOut), idempotent=True, json=request))


def list_clusters(
    name: str,
    *,
    sort: str = "size",
    status: Sequence[str] | None = None,
    decision: Sequence[str] | None = None,
    limit: int = 20,
    cursor: int | None = None,
    items: int | None = None,
) -> Steps[ClusterPage]:
    """One page of clusters (`sort`: size, last_arrival, first_arrival, newest); pass its `next_cursor`."""
    params = {
        "sort": sort,
        "limit": limit,
        **given(items=items, cursor=cursor, status=status, decision=decision),
    }
    return (yield call("GET", _path(name, "/clusters"), reads(ClusterPage), idempotent=True, params=params))


def iter_clusters(name: str, *, sort: str = "size", status: Sequence[str] | None = None) -> Pages[ClusterOut]:
    """Every cluster in `sort` order, page by page."""

    def fetch(cursor: int | None) -> Steps[tuple[list[ClusterOut], int | None]]:
        page = yield from list_clusters(name, sort=sort, status=status, limit=100, cursor=cursor or None)
        return page.clusters, page.next_cursor

    return Pages(fetch, start=0)


def get_cluster(name: str, cluster_id: int) -> Steps[ClusterOut]:
    """One cluster with every one of its items."""
    return (yield call("GET", _path(name, f"/clusters/{cluster_id}"), reads(ClusterOut), idempotent=True))


def confirm(
    name: str, cluster_id: int, corpus: str | None = None, document_id: str | None = None
) -> Steps[TriageOut]:
    """Confirm the cluster's match (or this document): a positive judged pair per item, by this key."""
    request = ConfirmIn.model_validate(given(corpus=corpus, document_id=document_id))
    path = _path(name, f"/clusters/{cluster_id}/confirm")
    return (yield call("POST", path, reads(TriageOut), idempotent=True, json=request))


def reject(name: str, cluster_id: int, corpus: str, document_id: str) -> Steps[TriageOut]:
    """Reject a candidate of the cluster: negative pairs; it is never suggested for the cluster again."""
    request = RejectIn.model_validate({"corpus": corpus, "document_id": document_id})
    path = _path(name, f"/clusters/{cluster_id}/reject")
    return (yield call("POST", path, reads(TriageOut), idempotent=True, json=request))


def set_cluster_status(name: str, cluster_id: int, status: str) -> Steps[TriageOut]:
    """Set a cluster's status: open, needs_check, answered or dismissed."""
    request = StatusIn.model_validate({"status": status})
    path = _path(name, f"/clusters/{cluster_id}/status")
    return (yield call("PUT", path, reads(TriageOut), idempotent=True, json=request))


def move_item(name: str, item_id: str, cluster_id: int | None = None) -> Steps[TriageOut]:
    """Move an item to another cluster, or split it off into its own (`cluster_id` None)."""
    request = MoveIn.model_validate({"item_id": item_id, **given(cluster_id=cluster_id)})
    return (yield call("POST", _path(name, "/moves"), reads(TriageOut), idempotent=False, json=request))


def list_deliveries(name: str, *, limit: int = 50, cursor: int | None = None) -> Steps[DeliveryPage]:
    """The inbox's webhook deliveries, newest first."""
    params = {"limit": limit, **given(cursor=cursor)}
    return (
        yield call("GET", _path(name, "/deliveries"), reads(DeliveryPage), idempotent=True, params=params)
    )
