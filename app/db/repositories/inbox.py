"""SQL of the tips inbox: inboxes, clusters, items, the desk's actions and webhook deliveries."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import and_, delete, func, or_, select, update
from sqlalchemy.orm import Session

from app.core.errors import NotFoundError
from app.db.inbox_models import Inbox, InboxAction, InboxCluster, InboxItem, WebhookDelivery

CLUSTER_SORTS: dict[str, tuple[Any, ...]] = {
    "size": (InboxCluster.size.desc(), InboxCluster.id.desc()),
    "last_arrival": (InboxCluster.last_at.desc(), InboxCluster.id.desc()),
    "first_arrival": (InboxCluster.first_at.asc(), InboxCluster.id.asc()),
    "newest": (InboxCluster.id.desc(),),
}


class InboxRepository:
    """Inboxes and everything under one of them."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def get(self, name: str) -> Inbox | None:
        """The inbox with this name, if any."""
        return self.session.scalar(select(Inbox).where(Inbox.name == name))

    def all(self) -> list[Inbox]:
        """Every inbox, oldest first."""
        return list(self.session.scalars(select(Inbox).order_by(Inbox.id)))

    def take_writer_turn(self, inbox_id: int) -> int:
        """Make this transaction the inbox's one writer until it ends, and return its next cluster seq: the
        UPDATE takes SQLite's write lock and PostgreSQL's row lock before anything is read."""
        self.session.execute(
            update(Inbox).where(Inbox.id == inbox_id).values(cluster_seq=Inbox.cluster_seq + 1)
        )
        return int(self.session.scalar(select(Inbox.cluster_seq).where(Inbox.id == inbox_id)) or 0)

    def delete(self, inbox: Inbox) -> None:
        """Delete an inbox with its clusters, items, actions and deliveries."""
        for table in (InboxItem, InboxCluster, InboxAction, WebhookDelivery):
            self.session.execute(delete(table).where(table.inbox_id == inbox.id))
        self.session.delete(inbox)

    def counts(self, inbox_id: int) -> dict[str, int]:
        """How many clusters and items the inbox holds."""
        clusters = select(func.count()).where(InboxCluster.inbox_id == inbox_id, InboxCluster.size > 0)
        items = select(func.count()).where(InboxItem.inbox_id == inbox_id)
        return {
            "clusters": int(self.session.scalar(clusters) or 0),
            "items": int(self.session.scalar(items) or 0),
        }

    # Clusters and items
    def clusters_since(self, inbox_id: int, seq: int) -> list[InboxCluster]:
        """Clusters changed after `seq` (what a centroid index has not seen), oldest id first."""
        query = select(InboxCluster).where(InboxCluster.inbox_id == inbox_id, InboxCluster.seq > seq)
        return list(self.session.scalars(query.order_by(InboxCluster.id)))

    def cluster(self, inbox_id: int, cluster_id: int) -> InboxCluster | None:
        """One cluster of the inbox."""
        found = self.session.get(InboxCluster, cluster_id)
        return found if found is not None and found.inbox_id == inbox_id else None

    def clusters(self, inbox_id: int, ids: Sequence[int]) -> dict[int, InboxCluster]:
        """Clusters of the inbox by id."""
        if not ids:
            return {}
        query = select(InboxCluster).where(InboxCluster.inbox_id == inbox_id, InboxCluster.id.in_(ids))
        return {c.id: c for c in self.session.scalars(query)}

    def page(
        self,
        inbox_id: int,
        sort: str,
        limit: int,
        after: InboxCluster | None,
        statuses: Sequence[str] | None,
        decisions: Sequence[str] | None,
    ) -> list[InboxCluster]:
        """One page of clusters in `sort` order after the cursor's cluster (keyset pagination)."""
        query = select(InboxCluster).where(InboxCluster.inbox_id == inbox_id, InboxCluster.size > 0)
        if statuses:
            query = query.where(InboxCluster.status.in_(statuses))
        if decisions:  # `none`: undecided (no corpus calibrated for the serving model)
            named = [d for d in decisions if d != "none"]
            undecided = InboxCluster.decision.is_(None) if "none" in decisions else None
            chosen = InboxCluster.decision.in_(named)
            query = query.where(or_(chosen, undecided) if undecided is not None else chosen)
        if after is not None:
            query = query.where(_after(sort, after))
        return list(self.session.scalars(query.order_by(*CLUSTER_SORTS[sort]).limit(limit)))

    def existing_items(self, inbox_id: int, external_ids: Sequence[str]) -> dict[str, InboxItem]:
        """The items of these ids the inbox holds already."""
        if not external_ids:
            return {}
        query = select(InboxItem).where(
            InboxItem.inbox_id == inbox_id, InboxItem.external_id.in_(external_ids)
        )
        return {item.external_id: item for item in self.session.scalars(query)}

    def items_of(self, cluster_ids: Sequence[int], limit: int | None = None) -> dict[int, list[InboxItem]]:
        """Each cluster's items in arrival order (its first `limit` when given: one windowed query)."""
        found: dict[int, list[InboxItem]] = {c: [] for c in cluster_ids}
        if not cluster_ids:
            return found
        order = (InboxItem.received_at, InboxItem.id)
        query = select(InboxItem).where(InboxItem.cluster_id.in_(cluster_ids))
        if limit is not None:
            place = func.row_number().over(partition_by=InboxItem.cluster_id, order_by=order).label("place")
            ranked = select(InboxItem.id, place).where(InboxItem.cluster_id.in_(cluster_ids)).subquery()
            first = select(ranked.c.id).where(ranked.c.place <= limit)
            query = select(InboxItem).where(InboxItem.id.in_(first))
        for item in self.session.scalars(query.order_by(*order)):
            found[item.cluster_id].append(item)
        return found

    def add(self, rows: Sequence[Any]) -> None:
        """Insert new rows (clusters, items, actions, deliveries) and give them their ids."""
        self.session.add_all(rows)
        self.session.flush()

    def labeled_similarities(self, inbox_id: int) -> list[tuple[float, bool]]:
        """The (cosine, belongs) pairs the desk's moves and splits recorded, oldest first."""
        query = select(InboxAction.similarity, InboxAction.same).where(
            InboxAction.inbox_id == inbox_id,
            InboxAction.similarity.is_not(None),
            InboxAction.same.is_not(None),
        )
        rows = self.session.execute(query.order_by(InboxAction.id))
        return [(float(s or 0.0), bool(b)) for s, b in rows]

    # Webhook deliveries
    def deliveries(self, inbox_id: int, limit: int, before: int | None) -> list[WebhookDelivery]:
        """The inbox's deliveries, newest first, before the cursor's id."""
        query = select(WebhookDelivery).where(WebhookDelivery.inbox_id == inbox_id)
        if before is not None:
            query = query.where(WebhookDelivery.id < before)
        return list(self.session.scalars(query.order_by(WebhookDelivery.id.desc()).limit(limit)))


def _after(sort: str, cursor: InboxCluster) -> Any:
    """The keyset condition: clusters strictly after `cursor` in `sort` order."""
    if sort == "size":
        return or_(
            InboxCluster.size < cursor.size,
            and_(InboxCluster.size == cursor.size, InboxCluster.id < cursor.id),
        )
    if sort == "last_arrival":
        return or_(
            InboxCluster.last_at < cursor.last_at,
            and_(InboxCluster.last_at == cursor.last_at, InboxCluster.id < cursor.id),
        )
    if sort == "first_arrival":
        return or_(
            InboxCluster.first_at > cursor.first_at,
            and_(InboxCluster.first_at == cursor.first_at, InboxCluster.id > cursor.id),
        )
    return InboxCluster.id < cursor.id


class DeliveryRepository:
    """Webhook deliveries across inboxes: what is due, and claiming one."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def due(self, now: datetime, limit: int) -> list[int]:
        """Ids of pending deliveries whose next attempt is due and that no process holds."""
        query = select(WebhookDelivery.id).where(
            WebhookDelivery.status == "pending",
            WebhookDelivery.next_attempt_at <= now,
            or_(WebhookDelivery.leased_until.is_(None), WebhookDelivery.leased_until < now),
        )
        return list(self.session.scalars(query.order_by(WebhookDelivery.id).limit(limit)))

    def claim(self, delivery_id: int, now: datetime, until: datetime) -> bool:
        """Lease one delivery to this process (False when another took it first)."""
        result = self.session.execute(
            update(WebhookDelivery)
            .where(
                WebhookDelivery.id == delivery_id,
                WebhookDelivery.status == "pending",
                or_(WebhookDelivery.leased_until.is_(None), WebhookDelivery.leased_until < now),
            )
            .values(leased_until=until)
        )
        return bool(getattr(result, "rowcount", 0) == 1)

    def get(self, delivery_id: int) -> WebhookDelivery | None:
        """One delivery."""
        return self.session.get(WebhookDelivery, delivery_id)


def require_inbox(session: Session, name: str) -> Inbox:
    """The inbox with this name; NotFoundError naming it."""
    found = InboxRepository(session).get(name)
    if found is None:
        raise NotFoundError(f"inbox {name!r} does not exist", "name")
    return found
