"""The desk's triage of an inbox's clusters: confirm a match (a judged positive pair per item, with the
person's key: training data), reject a candidate (negative pairs), set a status, move an item or split it
off (each move records the item's cosine to both clusters: the data the joining threshold is calibrated
on, F1-optimal as the duplicate threshold is)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from sqlalchemy.orm import Session

from app.core.errors import InvalidInputError, NotFoundError
from app.db.corpus_lookup import require_corpus, require_documents
from app.db.engine import transaction
from app.db.inbox_models import CLUSTER_STATUSES, Inbox, InboxAction, InboxCluster, InboxItem
from app.db.models import Document, utcnow
from app.db.repositories.inbox import InboxRepository, require_inbox
from app.db.repositories.pairs import PairRepository
from app.serving.context import ServiceContext
from app.usecases.inbox.centroids import from_bytes, match_key, to_bytes, unit
from app.usecases.inbox.deciding import decide_texts
from app.usecases.inbox.intake import adopt
from app.usecases.inbox.records import cluster_record, hour_of
from app.usecases.inbox.webhooks import enqueue
from evaluation.pairs import best_f1_threshold

MIN_LABELED_MOVES = 4  # moves and splits before an inbox's own threshold replaces the default


@dataclass(frozen=True)
class TriageResult:
    """The clusters an action changed (as records) and the judged pairs it stored."""

    clusters: list[dict[str, Any]]
    pairs: int = 0


class TriageService:
    """Actions of the desk on clusters; each takes the inbox's writer turn."""

    def __init__(self, service: ServiceContext) -> None:
        self.service = service

    def _cluster(self, session: Session, inbox: Inbox, cluster_id: int) -> InboxCluster:
        found = InboxRepository(session).cluster(inbox.id, cluster_id)
        if found is None or found.size == 0:
            raise NotFoundError(f"cluster {cluster_id} does not exist in inbox {inbox.name!r}", "cluster_id")
        return found

    def _judge(self, session: Session, inbox: Inbox, cluster: InboxCluster, corpus: str, doc: str,
               label: float, judged_by: str | None) -> tuple[int, str]:  # fmt: skip
        """Store (or relabel) a pair of each item's text and the document; returns how many, and the
        document's text."""
        if corpus not in inbox.corpora:
            raise InvalidInputError(f"corpus: inbox {inbox.name!r} does not follow {corpus!r}", "corpus")
        found = require_corpus(session, corpus)
        document = session.get(
            Document, require_documents(session, found.id, corpus, [doc], "document_id")[doc]
        )
        pairs = PairRepository(session, found.id)
        pairs.take_writer_turn()
        texts = {item.text for item in InboxRepository(session).items_of([cluster.id])[cluster.id]}
        for text in sorted(texts):
            pair = pairs.find(text, doc)
            if pair is None:
                pairs.add_many([{"query": text, "document_id": doc, "document": None, "label": label,
                                 "split": None, "judged_by": judged_by}])  # fmt: skip
            else:
                pair.label, pair.judged_by, pair.updated_at = label, judged_by, utcnow()
        return len(texts), document.text if document is not None else ""

    def confirm(self, name: str, cluster_id: int, corpus: str | None, doc: str | None,
                judged_by: str | None) -> TriageResult:  # fmt: skip
        """The cluster is answered by a document (its match when none is named): positive pairs."""
        with transaction(self.service.sessions) as session:
            inbox = require_inbox(session, name)
            seq = InboxRepository(session).take_writer_turn(inbox.id)
            cluster = self._cluster(session, inbox, cluster_id)
            if corpus is None or doc is None:
                if cluster.match is None:
                    raise InvalidInputError(
                        "document_id: the cluster has no match; name the document", "document_id"
                    )
                corpus, doc = str(cluster.match["corpus"]), str(cluster.match["id"])
            count, text = self._judge(session, inbox, cluster, corpus, doc, 1.0, judged_by)
            chosen = next((c for c in cluster.candidates if c["corpus"] == corpus and c["id"] == doc), None)
            if chosen is None:
                chosen = {"corpus": corpus, "id": doc, "text": text, "rank": 0,
                          "score": 0.0, "probability": None}  # fmt: skip
            was_match = cluster.decision == "match" and match_key(cluster.match) == f"{corpus}/{doc}"
            cluster.decision, cluster.match, cluster.status = "match", chosen, "answered"
            cluster.rejected = [r for r in cluster.rejected if r != f"{corpus}/{doc}"]
            cluster.seq, cluster.updated_at = seq, utcnow()
            if not was_match:
                enqueue(session, inbox, "cluster.matched", cluster)
            self._act(session, inbox, "confirm", cluster, {"corpus": corpus, "id": doc}, judged_by)
            return TriageResult([cluster_record(cluster, None)], count)

    def reject(
        self, name: str, cluster_id: int, corpus: str, doc: str, judged_by: str | None
    ) -> TriageResult:
        """A candidate is not about the cluster's claim: negative pairs, never suggested for it again."""
        with transaction(self.service.sessions) as session:
            inbox = require_inbox(session, name)
            seq = InboxRepository(session).take_writer_turn(inbox.id)
            cluster = self._cluster(session, inbox, cluster_id)
            count, _ = self._judge(session, inbox, cluster, corpus, doc, 0.0, judged_by)
            key = f"{corpus}/{doc}"
            cluster.rejected = sorted({*cluster.rejected, key})
            cluster.candidates = [c for c in cluster.candidates if f"{c['corpus']}/{c['id']}" != key]
            if match_key(cluster.match) == key:
                cluster.match, cluster.decision = None, "review"
                if cluster.status == "answered":
                    cluster.status = "open"
            cluster.seq, cluster.updated_at = seq, utcnow()
            self._act(session, inbox, "reject", cluster, {"corpus": corpus, "id": doc}, judged_by)
            return TriageResult([cluster_record(cluster, None)], count)

    def set_status(self, name: str, cluster_id: int, status: str, judged_by: str | None) -> TriageResult:
        """Set the cluster's status (open, needs_check, answered, dismissed)."""
        if status not in CLUSTER_STATUSES:
            raise InvalidInputError(f"status: one of {', '.join(CLUSTER_STATUSES)}", "status")
        with transaction(self.service.sessions) as session:
            inbox = require_inbox(session, name)
            seq = InboxRepository(session).take_writer_turn(inbox.id)
            cluster = self._cluster(session, inbox, cluster_id)
            cluster.status, cluster.seq, cluster.updated_at = status, seq, utcnow()
            self._act(session, inbox, "status", cluster, {"status": status}, judged_by)
            return TriageResult([cluster_record(cluster, None)])

    def move(self, name: str, item_id: str, cluster_id: int | None, judged_by: str | None) -> TriageResult:
        """Move an item to another cluster, or split it off into a new one (`cluster_id` None)."""
        with transaction(self.service.sessions) as session:
            inbox = require_inbox(session, name)
            repository = InboxRepository(session)
            seq = repository.take_writer_turn(inbox.id)
            item = repository.existing_items(inbox.id, [item_id]).get(item_id)
            if item is None:
                raise NotFoundError(f"item {item_id!r} does not exist in inbox {name!r}", "item_id")
            source = self._cluster(session, inbox, item.cluster_id)
            vector = from_bytes(item.vector)
            if cluster_id == source.id:
                raise InvalidInputError(
                    f"cluster_id: item {item_id!r} is in cluster {cluster_id} already", "cluster_id"
                )
            target = self._cluster(session, inbox, cluster_id) if cluster_id is not None else None
            if source.size == 1 and target is None:
                raise InvalidInputError(f"item_id: {item_id!r} is alone in its cluster already", "item_id")
            if vector is not None:
                self._labeled(session, inbox, source, vector, False, judged_by)
                if target is not None:
                    self._labeled(session, inbox, target, vector, True, judged_by)
            self._leave(session, source, item, vector, seq)
            if target is None:
                target = InboxCluster(inbox_id=inbox.id, seq=seq, status="open", representative=item.text,
                                      size=0, model=source.model, decision=item.decision,
                                      probability=item.probability, candidates=[], languages={}, sources={},
                                      hourly={}, rejected=[], first_at=item.received_at,
                                      last_at=item.received_at)  # fmt: skip
                repository.add([target])
                self._decide(inbox, target, item)
                enqueue(session, inbox, "cluster.created", target)
            self._join(target, item, vector, seq)
            session.flush()
            self._calibrate(session, inbox)
            changed = [source, target] if source.size else [target]
            return TriageResult([cluster_record(c, None) for c in changed])

    def _decide(self, inbox: Inbox, cluster: InboxCluster, item: InboxItem) -> None:
        """A cluster split off gets its own decision and candidates (its one item's)."""
        state = self.service.serving.state()
        vector = from_bytes(item.vector)
        if vector is None or cluster.model != state.model_version:
            vector = np.asarray(state.encoder.encode([item.text]), dtype=np.float32)[0]
        (decided,) = decide_texts(self.service, state, list(inbox.corpora), [item.text], vector[None, :])
        adopt(cluster, decided)

    def _labeled(self, session: Session, inbox: Inbox, cluster: InboxCluster, vector: np.ndarray,
                 same: bool, judged_by: str | None) -> None:  # fmt: skip
        total = from_bytes(cluster.vector_sum)
        if total is None or cluster.model is None:
            return
        if same is False and cluster.size > 1:  # its cosine to the others, without itself
            total = total - vector
        cosine = float(unit(total) @ unit(vector))
        session.add(InboxAction(inbox_id=inbox.id, kind="move" if same else "split", cluster_id=cluster.id,
                                similarity=round(cosine, 6), same=same, judged_by=judged_by,
                                detail={"model": cluster.model}))  # fmt: skip

    @staticmethod
    def _leave(
        session: Session, cluster: InboxCluster, item: InboxItem, vector: np.ndarray | None, seq: int
    ) -> None:
        total = from_bytes(cluster.vector_sum)
        if total is not None and vector is not None:
            cluster.vector_sum = to_bytes(total - vector)
        cluster.size -= 1
        hour = hour_of(item.received_at)
        hourly = {**cluster.hourly, hour: cluster.hourly.get(hour, 1) - 1}
        cluster.hourly = {h: n for h, n in hourly.items() if n > 0}
        for field in ("languages", "sources"):
            key = getattr(item, "language" if field == "languages" else "source")
            counts = dict(getattr(cluster, field))
            if key in counts:
                counts[key] -= 1
                setattr(cluster, field, {k: n for k, n in counts.items() if n > 0})
        rest = [i for i in InboxRepository(session).items_of([cluster.id])[cluster.id] if i.id != item.id]
        if rest:
            cluster.first_at = min(i.received_at for i in rest)
            cluster.last_at = max(i.received_at for i in rest)
            if cluster.representative == item.text:
                cluster.representative = rest[0].text
        cluster.seq, cluster.updated_at = seq, utcnow()

    @staticmethod
    def _join(cluster: InboxCluster, item: InboxItem, vector: np.ndarray | None, seq: int) -> None:
        total = from_bytes(cluster.vector_sum)
        if vector is not None:
            cluster.vector_sum = to_bytes(vector if total is None else total + vector)
        cluster.size += 1
        cluster.first_at, cluster.last_at = (
            min(cluster.first_at, item.received_at),
            max(cluster.last_at, item.received_at),
        )
        hour = hour_of(item.received_at)
        cluster.hourly = {**cluster.hourly, hour: cluster.hourly.get(hour, 0) + 1}
        if item.language:
            cluster.languages = {
                **cluster.languages,
                item.language: cluster.languages.get(item.language, 0) + 1,
            }
        if item.source:
            cluster.sources = {**cluster.sources, item.source: cluster.sources.get(item.source, 0) + 1}
        item.cluster_id = cluster.id
        cluster.seq, cluster.updated_at = seq, utcnow()

    def _calibrate(self, session: Session, inbox: Inbox) -> None:
        """The F1-optimal joining cosine on the recorded moves and splits, once there are both kinds."""
        labeled = InboxRepository(session).labeled_similarities(inbox.id)
        if len(labeled) < MIN_LABELED_MOVES or len({same for _, same in labeled}) < 2:
            return
        best = best_f1_threshold([s for s, _ in labeled], [1.0 if same else 0.0 for _, same in labeled])
        model = self.service.serving.version()
        inbox.threshold, inbox.threshold_model = round(float(best.threshold), 6), model

    @staticmethod
    def _act(session: Session, inbox: Inbox, kind: str, cluster: InboxCluster, detail: dict[str, Any],
             judged_by: str | None) -> None:  # fmt: skip
        session.add(InboxAction(inbox_id=inbox.id, kind=kind, cluster_id=cluster.id, detail=detail,
                                judged_by=judged_by))  # fmt: skip
