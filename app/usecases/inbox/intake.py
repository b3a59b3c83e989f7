"""Taking items into an inbox: encoded and decided outside any lock, then clustered in arrival order
under the inbox's one-writer turn: each item joins the cluster its auto-match already names, else the
nearest joinable centroid when it is close enough, else starts a cluster. A resent id is not counted
twice. When `add_items` returns, the items are stored, clustered and decided (one transaction)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np
from sqlalchemy.orm import Session

from app.core.errors import InvalidInputError
from app.core.limits import check_count, check_text
from app.db.engine import transaction
from app.db.inbox_models import Inbox, InboxCluster, InboxItem
from app.db.models import utcnow
from app.db.repositories.inbox import InboxRepository, require_inbox
from app.serving.context import ServiceContext
from app.usecases.inbox.centroids import (
    INDEXES,
    CentroidIndex,
    from_bytes,
    lead_key,
    match_key,
    to_bytes,
    unit,
)
from app.usecases.inbox.deciding import Decided, decide_texts
from app.usecases.inbox.records import HOURS_KEPT, hour_of
from app.usecases.inbox.webhooks import enqueue
from indexes.languages import detect


@dataclass(frozen=True)
class ItemInput:
    """One incoming text as sent."""

    id: str
    text: str
    received_at: datetime | None = None
    source: str | None = None
    language: str | None = None
    metadata: dict[str, Any] | None = None


@dataclass(frozen=True)
class IntakeResult:
    """How many items were new, how many were sent before, and each item's cluster."""

    added: int
    duplicates: int
    clusters_created: int
    clusters: dict[str, int]


def as_utc(when: datetime) -> datetime:
    """An aware UTC time (a naive one is taken as UTC)."""
    return when.astimezone(UTC) if when.tzinfo is not None else when.replace(tzinfo=UTC)


def cluster_threshold(inbox: Inbox, model: str, default: float) -> float:
    """The inbox's calibrated joining cosine for `model`, else the configured default."""
    return inbox.threshold if inbox.threshold is not None and inbox.threshold_model == model else default


def synced(session: Session, inbox: Inbox, model: str, floor: float) -> CentroidIndex:
    """This process's centroid index of the inbox, brought up to the clusters committed so far (the
    caller holds `index.lock`)."""
    key = (inbox.id, inbox.created_at.isoformat(), model, floor)
    index = INDEXES.get(*key)
    if index.mark > inbox.cluster_seq:  # the database went back (restored): start over
        INDEXES.forget(*key)
        index = INDEXES.get(*key)
    index.apply(InboxRepository(session).clusters_since(inbox.id, index.mark))
    return index


def adopt(cluster: InboxCluster, decided: Decided) -> bool:
    """Give the cluster a more confident decision (never one the desk rejected, nor over a confirmed
    match); True when it became a match."""
    if cluster.status == "answered" or match_key(decided.match) in set(cluster.rejected):
        return False
    current = Decided(cluster.decision, cluster.probability, cluster.match, cluster.candidates)
    if not decided.beats(current) and (cluster.decision is not None or cluster.candidates):
        return False
    was_match = cluster.decision == "match"
    refused = set(cluster.rejected)
    cluster.decision, cluster.probability, cluster.match = (
        decided.decision,
        decided.probability,
        decided.match,
    )
    cluster.candidates = [c for c in decided.candidates if f"{c['corpus']}/{c['id']}" not in refused]
    return cluster.decision == "match" and not was_match


def contradicts(cluster: InboxCluster, choice: Decided, floor: float) -> bool:
    """True when the matches tell an item and a cluster apart: each is led by a different check (an
    auto-match, or a most probable check of at least `floor`)."""
    mine = lead_key(choice.decision, choice.match, choice.candidates, floor)
    theirs = lead_key(cluster.decision, cluster.match, cluster.candidates, floor)
    return mine is not None and theirs is not None and mine != theirs


def _count(counts: dict[str, int], key: str | None, keep: int | None = None) -> dict[str, int]:
    if key is None:
        return counts
    grown = {**counts, key: counts.get(key, 0) + 1}
    if keep is not None and len(grown) > keep:
        grown = dict(sorted(grown.items())[-keep:])
    return grown


class IntakeService:
    """Items into an inbox: stored, clustered and decided."""

    def __init__(self, service: ServiceContext) -> None:
        self.service = service
        self.settings = service.settings

    def add_items(self, inbox_name: str, items: Sequence[ItemInput]) -> IntakeResult:
        """Store, cluster and decide a batch (at most `max_inbox_items_per_request`), idempotent by id."""
        check_count("items", items, self.settings.max_inbox_items_per_request, "items")
        for position, item in enumerate(items):
            check_text(self.settings, f"items[{position}].text", item.text)
            if not item.text.strip():
                raise InvalidInputError(f"items[{position}].text: empty text", f"items[{position}].text")
        batch = list({item.id: item for item in reversed(items)}.values())[::-1]  # first of each id
        with self.service.sessions() as session:
            inbox = require_inbox(session, inbox_name)
            known = InboxRepository(session).existing_items(inbox.id, [i.id for i in batch])
            corpora, language = list(inbox.corpora), inbox.language
        fresh = [item for item in batch if item.id not in known]
        state = self.service.serving.state()
        vectors = np.zeros((0, 0), dtype=np.float32)
        decided: list[Decided] = []
        if fresh:
            vectors = np.asarray(state.encoder.encode([i.text for i in fresh]), dtype=np.float32)
            decided = decide_texts(self.service, state, corpora, [i.text for i in fresh], vectors)
        languages = [i.language or language or detect(i.text).language for i in fresh]
        return self._cluster(inbox_name, batch, fresh, vectors, decided, languages, state.model_version)

    def _cluster(
        self,
        inbox_name: str,
        batch: list[ItemInput],
        fresh: list[ItemInput],
        vectors: np.ndarray,
        decided: list[Decided],
        languages: list[str | None],
        model: str,
    ) -> IntakeResult:
        with self.service.sessions() as session:
            inbox = require_inbox(session, inbox_name)
            key = (inbox.id, inbox.created_at.isoformat(), model, self.settings.inbox_join_probability)
        index = INDEXES.get(*key)
        with index.lock:
            try:
                with transaction(self.service.sessions) as session:
                    return self._cluster_locked(session, inbox_name, batch, fresh, vectors, decided,
                                                languages, model)  # fmt: skip
            except BaseException:
                INDEXES.forget(*key)  # it may hold clusters that were never committed
                raise

    def _cluster_locked(
        self,
        session: Session,
        inbox_name: str,
        batch: list[ItemInput],
        fresh: list[ItemInput],
        vectors: np.ndarray,
        decided: list[Decided],
        languages: list[str | None],
        model: str,
    ) -> IntakeResult:
        repository = InboxRepository(session)
        inbox = require_inbox(session, inbox_name)
        seq = repository.take_writer_turn(inbox.id)
        session.refresh(inbox)
        index = synced(session, inbox, model, self.settings.inbox_join_probability)
        known = repository.existing_items(inbox.id, [i.id for i in batch])  # again: under the turn now
        threshold = cluster_threshold(inbox, model, self.settings.inbox_cluster_threshold)
        touched: dict[int, InboxCluster] = {}
        events: list[tuple[str, InboxCluster]] = []
        now = utcnow()
        added = 0
        for position, item in enumerate(fresh):
            if item.id in known:
                continue
            vector, choice = unit(vectors[position]), decided[position]
            received = as_utc(item.received_at or now)
            cluster: InboxCluster | None = None
            lead = lead_key(choice.decision, choice.match, choice.candidates, index.floor)
            target = index.matched.get(lead) if lead is not None else None
            if target is None:
                nearest, cosine = index.nearest(vector)
                target = nearest if nearest is not None and cosine >= threshold else None
            if target is not None:
                cluster = touched.get(target) or repository.cluster(inbox.id, target)
                if cluster is not None and contradicts(cluster, choice, index.floor):
                    cluster = None
            if target is None or cluster is None:
                cluster = InboxCluster(inbox_id=inbox.id, seq=seq, status="open", representative=item.text,
                                       size=0, vector_sum=None, model=model, candidates=[], languages={},
                                       sources={}, hourly={}, rejected=[], first_at=received,
                                       last_at=received)  # fmt: skip
                repository.add([cluster])
                events.append(("cluster.created", cluster))
            before = cluster.size
            self._grow(cluster, vector, received, item.source, languages[position], seq)
            if adopt(cluster, choice):
                events.append(("cluster.matched", cluster))
            if before < inbox.grew_after <= cluster.size:
                events.append(("cluster.grew", cluster))
            touched[cluster.id] = cluster
            index.apply([cluster])
            row = InboxItem(inbox_id=inbox.id, cluster_id=cluster.id, external_id=item.id, text=item.text,
                            received_at=received, source=item.source, language=languages[position],
                            meta=item.metadata, vector=to_bytes(vector), decision=choice.decision,
                            match_id=match_key(choice.match), probability=choice.probability)  # fmt: skip
            session.add(row)
            known[item.id] = row
            added += 1
        session.flush()
        for event, cluster in events:
            enqueue(session, inbox, event, cluster)
        index.mark = seq
        created = sum(1 for event, _ in events if event == "cluster.created")
        return IntakeResult(added, len(batch) - added, created, {i.id: known[i.id].cluster_id for i in batch})

    @staticmethod
    def _grow(
        cluster: InboxCluster,
        vector: np.ndarray,
        received: datetime,
        source: str | None,
        language: str | None,
        seq: int,
    ) -> None:
        total = from_bytes(cluster.vector_sum)
        cluster.vector_sum = to_bytes(vector if total is None else total + vector)
        cluster.size += 1
        cluster.first_at = min(cluster.first_at, received)
        cluster.last_at = max(cluster.last_at, received)
        cluster.languages = _count(cluster.languages, language)
        cluster.sources = _count(cluster.sources, source)
        cluster.hourly = _count(cluster.hourly, hour_of(received), HOURS_KEPT)
        cluster.seq, cluster.updated_at = seq, utcnow()
