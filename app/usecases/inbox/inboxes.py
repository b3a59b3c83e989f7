"""Inboxes and what the desk reads of them: create, show, delete; clusters by page; webhook deliveries."""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from sqlalchemy.exc import IntegrityError

from app.core.errors import ConflictError, InvalidInputError, NotFoundError
from app.db.corpus_lookup import require_corpus
from app.db.engine import transaction
from app.db.inbox_models import CLUSTER_STATUSES, Inbox
from app.db.repositories.inbox import CLUSTER_SORTS, InboxRepository, require_inbox
from app.serving.context import ServiceContext
from app.usecases.inbox.records import cluster_record, delivery_record, inbox_record

DECISIONS = ("match", "review", "new", "none")
MAX_WEBHOOKS = 10


@dataclass(frozen=True)
class WebhookInput:
    """A URL to POST events to, and the secret that signs them (generated when omitted)."""

    url: str
    secret: str | None = None


@dataclass(frozen=True)
class InboxInput:
    """A new inbox: its name, the corpora it matches against, its language, its webhooks."""

    name: str
    corpora: Sequence[str]
    language: str | None = None
    webhooks: Sequence[WebhookInput] = ()
    grew_after: int = 10


def check_url(field: str, url: str) -> None:
    """An http(s) URL with a host, else InvalidInputError naming the field."""
    try:
        parts = urlsplit(url)
        usable = parts.scheme in ("http", "https") and bool(parts.hostname)
        parts.port  # noqa: B018 - raises on a port out of range, as the sender would later
    except ValueError:  # a malformed IPv6 literal, a port out of range
        usable = False
    if not usable:
        raise InvalidInputError(f"{field}: {url!r} is not an http(s) URL", field)


class InboxService:
    """Inboxes, their clusters and deliveries."""

    def __init__(self, service: ServiceContext) -> None:
        self.service = service
        self.settings = service.settings

    def create(self, command: InboxInput) -> dict[str, Any]:
        """Create an inbox (409 when the name is taken); the webhooks' secrets are shown this once."""
        if not command.corpora:
            raise InvalidInputError("corpora: name at least one corpus", "corpora")
        if len(command.webhooks) > MAX_WEBHOOKS:
            raise InvalidInputError(f"webhooks: at most {MAX_WEBHOOKS}", "webhooks")
        for position, hook in enumerate(command.webhooks):
            check_url(f"webhooks[{position}].url", hook.url)
        hooks = [{"url": h.url, "secret": h.secret or secrets.token_hex(24)} for h in command.webhooks]
        corpora = list(dict.fromkeys(command.corpora))
        try:
            with transaction(self.service.sessions) as session:
                marks = {}
                for position, name in enumerate(corpora):
                    try:
                        marks[name] = int(require_corpus(session, name).change_seq)
                    except NotFoundError as error:
                        raise NotFoundError(str(error), f"corpora[{position}]") from error
                if InboxRepository(session).get(command.name) is not None:
                    raise ConflictError(f"inbox {command.name!r} already exists", "name")
                inbox = Inbox(name=command.name, corpora=corpora, language=command.language, webhooks=hooks,
                              grew_after=command.grew_after, cluster_seq=0, marks=marks)  # fmt: skip
                InboxRepository(session).add([inbox])
                record = inbox_record(inbox)
        except IntegrityError as error:
            raise ConflictError(f"inbox {command.name!r} already exists", "name") from error
        record["webhooks"] = [{"url": h["url"], "secret": h["secret"]} for h in hooks]
        return record

    def get(self, name: str) -> dict[str, Any]:
        """An inbox with its cluster and item counts."""
        with self.service.sessions() as session:
            inbox = require_inbox(session, name)
            return {**inbox_record(inbox), **InboxRepository(session).counts(inbox.id)}

    def all(self) -> list[dict[str, Any]]:
        """Every inbox."""
        with self.service.sessions() as session:
            return [inbox_record(inbox) for inbox in InboxRepository(session).all()]

    def delete(self, name: str) -> None:
        """Delete an inbox and everything in it."""
        with transaction(self.service.sessions) as session:
            InboxRepository(session).delete(require_inbox(session, name))

    def clusters(
        self,
        name: str,
        *,
        sort: str = "size",
        limit: int = 20,
        cursor: int | None = None,
        statuses: Sequence[str] = (),
        decisions: Sequence[str] = (),
        items: int | None = None,
    ) -> tuple[list[dict[str, Any]], int | None]:
        """A page of clusters (`sort`: size, last_arrival, first_arrival, newest), each with every item
        (its first `items` when given), and the cursor of the next page (None at the end)."""
        if sort not in CLUSTER_SORTS:
            raise InvalidInputError(f"sort: one of {', '.join(CLUSTER_SORTS)}", "sort")
        for status in statuses:
            if status not in CLUSTER_STATUSES:
                raise InvalidInputError(
                    f"status: {status!r} is not one of {', '.join(CLUSTER_STATUSES)}", "status"
                )
        for decision in decisions:
            if decision not in DECISIONS:
                raise InvalidInputError(
                    f"decision: {decision!r} is not one of {', '.join(DECISIONS)}", "decision"
                )
        with self.service.sessions() as session:
            inbox = require_inbox(session, name)
            repository = InboxRepository(session)
            after = repository.cluster(inbox.id, cursor) if cursor is not None else None
            if cursor is not None and after is None:
                raise InvalidInputError(f"cursor: no cluster {cursor} in inbox {name!r}", "cursor")
            page = repository.page(inbox.id, sort, limit + 1, after, statuses, decisions)
            shown = page[:limit]
            listed = repository.items_of([c.id for c in shown], items)
            records = [cluster_record(c, listed[c.id]) for c in shown]
        return records, (shown[-1].id if len(page) > limit else None)

    def cluster(self, name: str, cluster_id: int) -> dict[str, Any]:
        """One cluster with every item."""
        with self.service.sessions() as session:
            inbox = require_inbox(session, name)
            repository = InboxRepository(session)
            found = repository.cluster(inbox.id, cluster_id)
            if found is None or found.size == 0:
                raise NotFoundError(f"cluster {cluster_id} does not exist in inbox {name!r}", "cluster_id")
            return cluster_record(found, repository.items_of([found.id])[found.id])

    def deliveries(
        self, name: str, limit: int = 50, cursor: int | None = None
    ) -> tuple[list[dict[str, Any]], int | None]:
        """The inbox's webhook deliveries, newest first, and the next page's cursor."""
        with self.service.sessions() as session:
            inbox = require_inbox(session, name)
            found = InboxRepository(session).deliveries(inbox.id, limit + 1, cursor)
            records = [delivery_record(d) for d in found[:limit]]
        return records, (found[limit - 1].id if len(found) > limit else None)
