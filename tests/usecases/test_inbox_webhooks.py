"""Webhooks against a real local receiver: signed events, a failing receiver retried with backoff until
it answers, a dead one given up after the configured attempts, a slow one never slowing intake."""

from __future__ import annotations

import threading
import time

from app.db.engine import transaction
from app.db.inbox_models import WebhookDelivery
from app.usecases.inbox.inboxes import InboxService
from app.usecases.inbox.intake import IntakeService
from app.usecases.inbox.webhooks import SIGNATURE_HEADER, backoff, deliver_due, deliver_forever, sign, verify
from tests.helpers.receiver import Receiver
from tests.helpers.runtime import RuntimeFactory
from tests.usecases.inbox_helpers import calibrated, inbox, items


def deliver_all(runtime, seconds: float = 20) -> list[dict]:  # noqa: ANN001
    """Deliver until nothing is pending (retries included); the deliveries."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        deliver_due(runtime)
        found, _ = InboxService(runtime).deliveries("tips", 100)
        if all(d["status"] != "pending" for d in found):
            return found
        time.sleep(0.05)
    raise AssertionError(f"still pending: {found}")


def test_signatures() -> None:
    body = b'{"event":"cluster.created"}'
    header = sign("s3cret", int(time.time()), body)
    assert verify("s3cret", header, body) and not verify("other", header, body)
    assert not verify("s3cret", header, body + b" ")
    assert not verify("s3cret", sign("s3cret", int(time.time()) - 3600, body), body)  # replayed late
    assert all(0.5 <= backoff(1, 1.0) <= 1.0 for _ in range(50)) and 4.0 <= backoff(4, 1.0) <= 8.0


def test_signed_events_retried_until_delivered(make_runtime: RuntimeFactory) -> None:
    receiver = Receiver(statuses=[500, 503])
    try:
        runtime = calibrated(make_runtime, webhook_backoff_seconds=0.05, webhook_attempts=5)
        inbox(runtime, hooks=(receiver.url,), grew_after=2)
        IntakeService(runtime).add_items("tips", items([(3, 0), (3, 1), (8, 0)]))
        deliveries = deliver_all(runtime)
        assert {d["status"] for d in deliveries} == {"delivered"}
        assert sum(d["attempts"] for d in deliveries) == len(deliveries) + 2  # two failures were retried
        assert all(d["last_status_code"] == 200 and d["delivered_at"] for d in deliveries)
        events = receiver.events()
        kinds = sorted(e["event"] for e in events)
        assert kinds.count("cluster.created") == 2 and kinds.count("cluster.grew") == 1
        assert all(e["inbox"] == "tips" and e["cluster"]["id"] for e in events)
        for headers, body, _ in receiver.received:
            assert verify("s3cret", headers[SIGNATURE_HEADER], body)
    finally:
        receiver.close()


def test_a_dead_receiver_is_given_up(make_runtime: RuntimeFactory) -> None:
    receiver = Receiver()
    receiver.close()  # nothing listens there any more
    runtime = calibrated(
        make_runtime, webhook_backoff_seconds=0.02, webhook_attempts=3, webhook_timeout_seconds=1
    )
    inbox(runtime, hooks=(receiver.url,))
    IntakeService(runtime).add_items("tips", items([(5, 0)]))
    deliveries = deliver_all(runtime)
    assert {d["event"] for d in deliveries} >= {"cluster.created"}
    assert all(d["status"] == "failed" and d["attempts"] == 3 and d["last_error"] for d in deliveries)


def test_a_slow_receiver_never_slows_intake(make_runtime: RuntimeFactory) -> None:
    receiver = Receiver(delay=10.0)
    closed = threading.Event()
    try:
        runtime = calibrated(make_runtime, webhook_poll_seconds=0.05)
        inbox(runtime, hooks=(receiver.url,))
        threading.Thread(target=deliver_forever, args=(runtime, closed), daemon=True).start()
        intake = IntakeService(runtime)
        started = time.monotonic()
        for batch in range(4):
            intake.add_items("tips", items([(batch, 0)], prefix=f"b{batch}-"))
        # Intake never waits on the receiver: had it waited for one delivery, it would have taken 10 s
        # (the bound is the receiver's delay, not a speed target: a loaded machine is slow, not wrong).
        assert time.monotonic() - started < receiver.delay
    finally:
        closed.set()
        receiver.close()


def test_a_delivery_leased_by_another_process_is_left_alone(make_runtime: RuntimeFactory) -> None:
    receiver = Receiver()
    try:
        runtime = calibrated(make_runtime)
        inbox(runtime, hooks=(receiver.url,))
        IntakeService(runtime).add_items("tips", items([(2, 0)]))
        with transaction(runtime.sessions) as session:
            for delivery in session.query(WebhookDelivery):
                delivery.leased_until = delivery.next_attempt_at.replace(year=2100)
        assert deliver_due(runtime) == 0 and receiver.received == []
    finally:
        receiver.close()
