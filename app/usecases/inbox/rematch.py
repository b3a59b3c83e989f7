"""Re-match on publish: documents added to a corpus an inbox follows are compared with the centroids of
the inbox's open clusters, and the clusters they come near are decided again, so a new fact-check
reaches the earlier tips it answers. Driven by the corpus's change log after the inbox's own mark (one
per corpus, in the database): O(change), never a rescan of every cluster, and a process that was down
catches up from the mark. Two processes may do the same work at once: only the one whose mark is still
current when it commits keeps it."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

import numpy as np

from app.db.corpus_lookup import require_corpus
from app.db.engine import transaction
from app.db.inbox_models import InboxCluster
from app.db.models import utcnow
from app.db.repositories.corpora import ChangeLog, CorpusRepository
from app.db.repositories.inbox import InboxRepository, require_inbox
from app.serving.context import ServiceContext
from app.usecases.inbox.centroids import INDEXES, match_key
from app.usecases.inbox.deciding import Decided, decide_texts
from app.usecases.inbox.intake import adopt, synced
from app.usecases.inbox.webhooks import enqueue

log = logging.getLogger(__name__)

CHANGES_PER_PASS = 2_000  # change-log entries read per inbox and corpus in one pass
CLUSTERS_PER_PASS = 500  # clusters decided again per pass at most (the nearest first)
REMATCHED_STATUSES = ("open", "needs_check")
Wait = Callable[[float, threading.Event], object]


def rematch_once(service: ServiceContext) -> int:
    """One pass over every inbox and followed corpus with changes past its mark; returns how many clusters
    got a new decision or new candidates."""
    if not service.serving.is_ready():
        return 0
    with service.sessions() as session:
        seqs = {mark.name: mark.change_seq for mark in CorpusRepository(session).marks()}
        work = [
            (inbox.name, corpus, int(inbox.marks.get(corpus, 0)))
            for inbox in InboxRepository(session).all()
            for corpus in inbox.corpora
            if seqs.get(corpus, 0) > int(inbox.marks.get(corpus, 0))
        ]
    return sum(_rematch(service, name, corpus, mark) for name, corpus, mark in work)


def _rematch(service: ServiceContext, inbox_name: str, corpus: str, mark: int) -> int:
    state = service.serving.state()
    model = state.model_version
    with service.sessions() as session:
        entries = ChangeLog(session, require_corpus(session, corpus)).since(mark, CHANGES_PER_PASS)
        inbox = require_inbox(session, inbox_name)
        corpora = list(inbox.corpora)
        floor = service.settings.inbox_join_probability
        index = INDEXES.get(inbox.id, inbox.created_at.isoformat(), model, floor)
        with index.lock:
            index = synced(session, inbox, model, floor)
    if not entries:
        return 0
    new_mark = int(entries[-1].seq)
    latest = {e.document_id: e for e in entries}
    added = [e for e in latest.values() if e.op == "upsert"]
    near: dict[int, float] = {}
    if added:
        opened = state.store.get(corpus)
        _, vectors = state.store.present_vectors(opened, [e.document_id for e in added])
        with index.lock:
            near = index.near(np.asarray(vectors, dtype=np.float32), service.settings.inbox_rematch_floor)
    nearest = sorted(near, key=lambda c: (-near[c], c))[:CLUSTERS_PER_PASS]
    with service.sessions() as session:
        found = InboxRepository(session).clusters(inbox.id, nearest)
        chosen = [found[c] for c in nearest if c in found and found[c].status in REMATCHED_STATUSES]
        texts = [c.representative for c in chosen]
        rejected = [set(c.rejected) for c in chosen]
    fresh: list[Decided] = []
    if texts:
        vectors = np.asarray(state.encoder.encode_bulk(texts, label="inbox re-match"), dtype=np.float32)
        fresh = decide_texts(service, state, corpora, texts, vectors, rejected)
    published = {f"{corpus}/{e.external_id}" for e in added}
    return _commit(service, inbox_name, corpus, mark, new_mark, [c.id for c in chosen], fresh, published)


def _commit(
    service: ServiceContext,
    inbox_name: str,
    corpus: str,
    mark: int,
    new_mark: int,
    cluster_ids: list[int],
    fresh: list[Decided],
    published: set[str],
) -> int:
    """Store the new decisions and move the mark, unless another process moved it first."""
    changed = 0
    with transaction(service.sessions) as session:
        repository = InboxRepository(session)
        inbox = require_inbox(session, inbox_name)
        seq = repository.take_writer_turn(inbox.id)
        session.refresh(inbox)
        if int(inbox.marks.get(corpus, 0)) != mark:
            return 0  # another process re-matched these changes already
        clusters = repository.clusters(inbox.id, cluster_ids)
        for cluster_id, decided in zip(cluster_ids, fresh, strict=True):
            cluster = clusters.get(cluster_id)
            if cluster is None or cluster.status not in REMATCHED_STATUSES:
                continue
            if _update(cluster, decided, published, seq):
                changed += 1
                if cluster.decision == "match" and match_key(cluster.match) in published:
                    enqueue(session, inbox, "cluster.matched", cluster)
        inbox.marks = {**inbox.marks, corpus: new_mark}
    return changed


def _update(cluster: InboxCluster, decided: Decided, published: set[str], seq: int) -> bool:
    """Adopt a more confident decision, or list newly published candidates; True when it changed."""
    before = _shown(cluster)
    adopt(cluster, decided)
    if _shown(cluster) != before:
        cluster.seq, cluster.updated_at = seq, utcnow()
        return True
    listed = {f"{c['corpus']}/{c['id']}" for c in decided.candidates}
    if listed & published:
        refused = set(cluster.rejected)
        cluster.candidates = [c for c in decided.candidates if f"{c['corpus']}/{c['id']}" not in refused]
        cluster.seq, cluster.updated_at = seq, utcnow()
        return True
    return False


def _shown(cluster: InboxCluster) -> tuple[object, ...]:
    """What the desk sees of a cluster's decision."""
    return (
        cluster.decision,
        match_key(cluster.match),
        tuple(f"{c['corpus']}/{c['id']}" for c in cluster.candidates),
    )


def rematch_forever(service: ServiceContext, wait: Wait, closed: threading.Event) -> None:
    """Re-match after every wait (a poll, or a document write's NOTIFY on PostgreSQL) until `closed`."""
    poll = service.settings.inbox_rematch_seconds
    while not closed.is_set():
        wait(poll, closed)
        if closed.is_set():
            return
        try:
            rematch_once(service)
        except Exception:  # noqa: BLE001 - the database may be away, or a corpus deleted: next pass
            log.exception("re-matching inboxes failed")
        # At most one pass per period, however often writes are announced: an idle process's reads
        # stay within its budget (tests/api/test_hot_path.py).
        closed.wait(poll)
