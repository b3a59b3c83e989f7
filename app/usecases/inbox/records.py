"""An inbox's records as the API, the console and the webhooks show them."""

from __future__ import annotations

from typing import Any

from app.db.inbox_models import Inbox, InboxCluster, InboxItem, WebhookDelivery

HOURS_KEPT = 24 * 14  # arrivals per hour kept on a cluster (its sparkline): two weeks


def hour_of(when: Any) -> str:
    """The UTC hour an arrival counts in, as `YYYY-MM-DDTHH:00:00Z`."""
    return str(when.strftime("%Y-%m-%dT%H:00:00Z"))


def inbox_record(inbox: Inbox) -> dict[str, Any]:
    """An inbox with its webhooks' URLs (never their secrets)."""
    return {
        "name": inbox.name,
        "corpora": list(inbox.corpora),
        "language": inbox.language,
        "webhooks": [{"url": hook["url"]} for hook in inbox.webhooks],
        "grew_after": inbox.grew_after,
        "threshold": inbox.threshold,
        "created_at": inbox.created_at,
    }


def item_record(item: InboxItem) -> dict[str, Any]:
    """One item as it came, with its own decision and match."""
    return {
        "id": item.external_id,
        "text": item.text,
        "received_at": item.received_at,
        "source": item.source,
        "language": item.language,
        "metadata": item.meta,
        "cluster_id": item.cluster_id,
        "decision": item.decision,
        "match_id": item.match_id,
        "probability": item.probability,
    }


def cluster_record(cluster: InboxCluster, items: list[InboxItem] | None) -> dict[str, Any]:
    """A cluster with its arrivals, decision, candidates and status (and its items when given)."""
    record = {
        "id": cluster.id,
        "status": cluster.status,
        "representative": cluster.representative,
        "size": cluster.size,
        "first_arrival": cluster.first_at,
        "last_arrival": cluster.last_at,
        "languages": dict(cluster.languages),
        "sources": dict(cluster.sources),
        "arrivals_per_hour": [{"hour": h, "count": n} for h, n in sorted(cluster.hourly.items())],
        "decision": cluster.decision,
        "probability": cluster.probability,
        "match": cluster.match,
        "candidates": list(cluster.candidates),
        "rejected": list(cluster.rejected),
    }
    if items is not None:
        record["items"] = [item_record(item) for item in items]
    return record


def event_payload(event: str, inbox: Inbox, cluster: InboxCluster) -> dict[str, Any]:
    """A webhook event's body (JSON-safe: times as strings)."""
    summary = cluster_record(cluster, None)
    for key in ("first_arrival", "last_arrival"):
        summary[key] = summary[key].isoformat().replace("+00:00", "Z")
    return {"event": event, "inbox": inbox.name, "cluster": summary}


def delivery_record(delivery: WebhookDelivery) -> dict[str, Any]:
    """One webhook event's delivery: where, what, how many attempts, the last answer."""
    return {
        "id": delivery.id,
        "event": delivery.event,
        "url": delivery.url,
        "status": delivery.status,
        "attempts": delivery.attempts,
        "last_status_code": delivery.last_status_code,
        "last_error": delivery.last_error,
        "next_attempt_at": delivery.next_attempt_at if delivery.status == "pending" else None,
        "created_at": delivery.created_at,
        "delivered_at": delivery.delivered_at,
        "cluster_id": delivery.payload.get("cluster", {}).get("id"),
    }
