"""Webhooks: an inbox's events (`cluster.created`, `cluster.matched`, `cluster.grew`) are written as
deliveries in the transaction that caused them (nothing acknowledged is lost), then POSTed by a
background loop of any process, signed with HMAC-SHA256 over `timestamp.body`, and retried with
exponential backoff and jitter; intake never waits for a receiver."""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import random
import threading
import time
import urllib.error
import urllib.request
from datetime import timedelta

from sqlalchemy.orm import Session

from app.db.engine import transaction
from app.db.inbox_models import Inbox, InboxCluster, WebhookDelivery
from app.db.models import utcnow
from app.db.repositories.inbox import DeliveryRepository
from app.serving.context import ServiceContext
from app.usecases.inbox.records import event_payload

log = logging.getLogger(__name__)

SIGNATURE_HEADER = "X-Pairank-Signature"  # t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">
EVENT_HEADER = "X-Pairank-Event"
DELIVERY_HEADER = "X-Pairank-Delivery"
MAX_BACKOFF_SECONDS = 3600.0


def sign(secret: str, timestamp: int, body: bytes) -> str:
    """The signature header's value for a body sent at `timestamp`."""
    digest = hmac.new(secret.encode(), str(timestamp).encode() + b"." + body, hashlib.sha256).hexdigest()
    return f"t={timestamp},v1={digest}"


def verify(secret: str, header: str, body: bytes, tolerance: float = 300.0) -> bool:
    """True when `header` signs `body` with `secret` and its timestamp is within `tolerance` seconds."""
    parts = dict(part.split("=", 1) for part in header.split(",") if "=" in part)
    try:
        timestamp = int(parts["t"])
    except (KeyError, ValueError):
        return False
    if abs(time.time() - timestamp) > tolerance:
        return False
    return hmac.compare_digest(sign(secret, timestamp, body), header)


def enqueue(session: Session, inbox: Inbox, event: str, cluster: InboxCluster) -> None:
    """Record `event` for each of the inbox's webhooks, in the caller's transaction."""
    if not inbox.webhooks:
        return
    payload = event_payload(event, inbox, cluster)
    session.add_all(
        WebhookDelivery(
            inbox_id=inbox.id,
            event=event,
            url=hook["url"],
            payload=payload,
            status="pending",
            attempts=0,
            next_attempt_at=utcnow(),
        )  # fmt: skip
        for hook in inbox.webhooks
    )


def backoff(attempts: int, base: float) -> float:
    """Seconds before the next attempt after `attempts` failed ones: doubling, with full jitter."""
    ceiling = min(MAX_BACKOFF_SECONDS, base * 2 ** max(0, attempts - 1))
    return ceiling / 2 + random.uniform(0, ceiling / 2)  # noqa: S311 - jitter, not a secret


def _post(url: str, body: bytes, headers: dict[str, str], timeout: float) -> tuple[int | None, str | None]:
    """POST once: (HTTP status, None) or (status or None, what went wrong)."""
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")  # noqa: S310 - http(s) only
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 - checked at creation
            return int(response.status), None
    except urllib.error.HTTPError as error:
        return int(error.code), f"HTTP {error.code}"
    except Exception as error:  # noqa: BLE001 - any network failure is a failed attempt, retried
        return None, f"{type(error).__name__}: {error}"[:500]


def deliver_due(service: ServiceContext, limit: int = 20) -> int:
    """Attempt every due delivery this process can lease (at most `limit`); returns how many it tried."""
    settings = service.settings
    now = utcnow()
    with service.sessions() as session:
        due = DeliveryRepository(session).due(now, limit)
    tried = 0
    for delivery_id in due:
        lease = timedelta(seconds=settings.webhook_timeout_seconds * 2 + 5)
        with transaction(service.sessions) as session:
            repository = DeliveryRepository(session)
            if not repository.claim(delivery_id, utcnow(), utcnow() + lease):
                continue
            delivery = repository.get(delivery_id)
            inbox = session.get(Inbox, delivery.inbox_id) if delivery is not None else None
            if delivery is None or inbox is None:
                continue
            url, event, payload = delivery.url, delivery.event, delivery.payload
            secret = next((h.get("secret", "") for h in inbox.webhooks if h["url"] == url), "")
        tried += 1
        body = json.dumps({**payload, "delivery": delivery_id}, separators=(",", ":")).encode()
        headers = {
            "Content-Type": "application/json",
            EVENT_HEADER: event,
            DELIVERY_HEADER: str(delivery_id),
            SIGNATURE_HEADER: sign(secret, int(time.time()), body),
            "User-Agent": "pairank-webhooks",
        }
        code, error = _post(url, body, headers, settings.webhook_timeout_seconds)
        _record(service, delivery_id, code, error)
    return tried


def _record(service: ServiceContext, delivery_id: int, code: int | None, error: str | None) -> None:
    settings = service.settings
    with transaction(service.sessions) as session:
        delivery = session.get(WebhookDelivery, delivery_id)
        if delivery is None:
            return
        delivery.attempts += 1
        delivery.last_status_code, delivery.leased_until = code, None
        if error is None and code is not None and 200 <= code < 300:
            delivery.status, delivery.last_error, delivery.delivered_at = "delivered", None, utcnow()
        elif delivery.attempts >= settings.webhook_attempts:
            delivery.status, delivery.last_error = "failed", error
        else:
            delivery.last_error = error
            wait = backoff(delivery.attempts, settings.webhook_backoff_seconds)
            delivery.next_attempt_at = utcnow() + timedelta(seconds=wait)


def deliver_forever(service: ServiceContext, closed: threading.Event) -> None:
    """Deliver due events every `webhook_poll_seconds` until `closed` (a thread of a serving process)."""
    poll = service.settings.webhook_poll_seconds
    while not closed.wait(poll):
        try:
            while deliver_due(service) and not closed.is_set():
                pass
        except Exception:  # noqa: BLE001 - the database may be away: try again next tick
            log.exception("delivering webhook events failed")
