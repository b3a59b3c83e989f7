"""ORM models of the tips inbox: inboxes, their items and clusters, the desk's actions, webhook deliveries."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from app.db.models import Base, UtcDateTime, utcnow

CLUSTER_STATUSES = ("open", "needs_check", "answered", "dismissed")
DELIVERY_STATUSES = ("pending", "delivered", "failed")


class Inbox(Base):
    """A stream of incoming texts matched against corpora; its row is the intake's one-writer lock."""

    __tablename__ = "inboxes"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True, nullable=False)
    corpora: Mapped[list[str]] = mapped_column(JSON, nullable=False)
    language: Mapped[str | None] = mapped_column(String(8), nullable=True)
    # [{"url", "secret"}]: signed events are POSTed there (app/usecases/inbox/webhooks.py).
    webhooks: Mapped[list[dict[str, Any]]] = mapped_column(JSON, nullable=False, default=list)
    grew_after: Mapped[int] = mapped_column(Integer, nullable=False, default=10)
    # Cosine to a cluster's centroid from which an item joins it: calibrated from the desk's moves and
    # splits (null: the configured default), with the model version it was calibrated with.
    threshold: Mapped[float | None] = mapped_column(Float, nullable=True)
    threshold_model: Mapped[str | None] = mapped_column(String(300), nullable=True)
    # Bumped by every write to its clusters; a cluster carries the value of its last change, so a
    # process's centroid index reads only the clusters changed since its own mark.
    cluster_seq: Mapped[int] = mapped_column(BigInteger, nullable=False, default=0)
    # {corpus name: change-log seq} up to which published documents were re-matched against its clusters.
    marks: Mapped[dict[str, int]] = mapped_column(JSON, nullable=False, default=dict)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow, nullable=False)


class InboxCluster(Base):
    """Items about one claim: their centroid, arrivals, the decision against the corpora and its status."""

    __tablename__ = "inbox_clusters"
    __table_args__ = (
        Index("ix_inbox_clusters_seq", "inbox_id", "seq"),
        Index("ix_inbox_clusters_last", "inbox_id", "last_at"),
        Index("ix_inbox_clusters_size", "inbox_id", "size"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    inbox_id: Mapped[int] = mapped_column(ForeignKey("inboxes.id", ondelete="CASCADE"), nullable=False)
    seq: Mapped[int] = mapped_column(BigInteger, nullable=False, default=0)
    status: Mapped[str] = mapped_column(String(16), nullable=False, default="open")
    representative: Mapped[str] = mapped_column(Text, nullable=False)
    size: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    # The sum of its items' unit vectors (float32 bytes) with the model that encoded them: the centroid
    # is its direction, and adding or removing an item is exact.
    vector_sum: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)
    model: Mapped[str | None] = mapped_column(String(300), nullable=True)
    decision: Mapped[str | None] = mapped_column(String(8), nullable=True)
    probability: Mapped[float | None] = mapped_column(Float, nullable=True)
    match: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    candidates: Mapped[list[dict[str, Any]]] = mapped_column(JSON, nullable=False, default=list)
    languages: Mapped[dict[str, int]] = mapped_column(JSON, nullable=False, default=dict)
    sources: Mapped[dict[str, int]] = mapped_column(JSON, nullable=False, default=dict)
    hourly: Mapped[dict[str, int]] = mapped_column(JSON, nullable=False, default=dict)
    rejected: Mapped[list[str]] = mapped_column(JSON, nullable=False, default=list)
    first_at: Mapped[datetime] = mapped_column(UtcDateTime(), nullable=False)
    last_at: Mapped[datetime] = mapped_column(UtcDateTime(), nullable=False)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow, nullable=False)
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow, nullable=False)


class InboxItem(Base):
    """One incoming text, kept as it came, with the cluster it joined and its own decision."""

    __tablename__ = "inbox_items"
    __table_args__ = (
        UniqueConstraint("inbox_id", "external_id", name="uq_inbox_items_external"),
        Index("ix_inbox_items_cluster", "cluster_id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    inbox_id: Mapped[int] = mapped_column(ForeignKey("inboxes.id", ondelete="CASCADE"), nullable=False)
    cluster_id: Mapped[int] = mapped_column(Integer, nullable=False)
    external_id: Mapped[str] = mapped_column(String(256), nullable=False)
    text: Mapped[str] = mapped_column(Text, nullable=False)
    received_at: Mapped[datetime] = mapped_column(UtcDateTime(), nullable=False)
    source: Mapped[str | None] = mapped_column(String(200), nullable=True)
    language: Mapped[str | None] = mapped_column(String(8), nullable=True)
    meta: Mapped[dict[str, Any] | None] = mapped_column("metadata", JSON, nullable=True)
    vector: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)
    decision: Mapped[str | None] = mapped_column(String(8), nullable=True)
    match_id: Mapped[str | None] = mapped_column(String(300), nullable=True)
    probability: Mapped[float | None] = mapped_column(Float, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow, nullable=False)


class InboxAction(Base):
    """A desk's action on an inbox (confirm, reject, status, move, split), with who did it; moves and
    splits carry the item's cosine to the cluster and whether it belongs there (the threshold's data)."""

    __tablename__ = "inbox_actions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    inbox_id: Mapped[int] = mapped_column(
        ForeignKey("inboxes.id", ondelete="CASCADE"), nullable=False, index=True
    )
    kind: Mapped[str] = mapped_column(String(16), nullable=False)
    cluster_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    similarity: Mapped[float | None] = mapped_column(Float, nullable=True)
    same: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    detail: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    judged_by: Mapped[str | None] = mapped_column(String(100), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow, nullable=False)


class WebhookDelivery(Base):
    """One event for one webhook URL: written with the change it reports (an outbox), delivered by a
    background loop with retries; its attempts and last answer stay visible."""

    __tablename__ = "inbox_deliveries"
    __table_args__ = (
        Index("ix_inbox_deliveries_due", "status", "next_attempt_at"),
        Index("ix_inbox_deliveries_inbox", "inbox_id", "id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    inbox_id: Mapped[int] = mapped_column(ForeignKey("inboxes.id", ondelete="CASCADE"), nullable=False)
    event: Mapped[str] = mapped_column(String(32), nullable=False)
    url: Mapped[str] = mapped_column(Text, nullable=False)
    payload: Mapped[dict[str, Any]] = mapped_column(JSON, nullable=False)
    status: Mapped[str] = mapped_column(String(16), nullable=False, default="pending")
    attempts: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    next_attempt_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow, nullable=False)
    leased_until: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    last_status_code: Mapped[int | None] = mapped_column(Integer, nullable=True)
    last_error: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow, nullable=False)
    delivered_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
