"""Request and response models of the tips inbox: inboxes, items, clusters, triage, webhook deliveries."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from app.schemas.common import CorpusName, DocumentId, LanguageCode, Metadata, NonBlankText, limited
from app.schemas.requests import RequestModel

ClusterStatus = Literal["open", "needs_check", "answered", "dismissed"]
Decision = Literal["match", "review", "new"]
DecisionFilter = Literal["match", "review", "new", "none"]
Secret = Annotated[
    str, Field(min_length=16, max_length=200, description="Signs the events (16-200 characters).")
]


class WebhookIn(RequestModel):
    """A URL that receives the inbox's signed events."""

    url: str = Field(
        min_length=8,
        max_length=2000,
        # ASCII only, spelled out: regex engines disagree on what `\s` matches (U+0085 is whitespace to
        # Python and Rust, not to JSON Schema's ECMA regexes), and JSON Schema cannot tell a valid IPv6
        # literal from a bad one. International hosts go in their punycode form; paths percent-encoded.
        pattern=(
            r"^https?://[A-Za-z0-9][A-Za-z0-9.\-]*"
            r"(?::(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[0-9]{1,4}))?"
            r"(?:[/?#][\x21-\x7e]*)?$"
        ),
        description="An http(s) URL: an ASCII host name (punycode) or IPv4 address, an optional port, "
        "then printable ASCII (percent-encode the rest).",
    )
    secret: Secret | None = Field(None, description="Omitted: one is generated and shown once.")


class InboxCreate(RequestModel):
    """POST /v1/inboxes body."""

    name: CorpusName
    corpora: list[CorpusName] = Field(
        min_length=1, max_length=20, description="The corpora it matches against."
    )
    language: LanguageCode | None = Field(None, description="Its items' language when they name none.")
    webhooks: list[WebhookIn] = Field([], max_length=10)
    grew_after: int = Field(
        10, ge=2, le=1_000_000, description="`cluster.grew` fires when a cluster reaches it."
    )


class WebhookOut(BaseModel):
    """A webhook: its URL (the secret only in the answer to the inbox's creation)."""

    url: str
    secret: str | None = Field(None, exclude_if=lambda value: value is None)


class InboxOut(BaseModel):
    """An inbox."""

    name: str
    corpora: list[str]
    language: str | None
    webhooks: list[WebhookOut]
    grew_after: int
    threshold: float | None = Field(
        description="Its calibrated joining cosine (null: the configured default)."
    )
    created_at: datetime
    clusters: int | None = Field(None, exclude_if=lambda value: value is None)
    items: int | None = Field(None, exclude_if=lambda value: value is None)


class InboxList(BaseModel):
    """Every inbox."""

    inboxes: list[InboxOut]


class ItemIn(RequestModel):
    """One incoming text."""

    id: DocumentId
    text: NonBlankText
    received_at: Annotated[datetime, Field(strict=False)] | None = Field(
        None, description="When it arrived (RFC 3339); omitted: now."
    )
    source: str | None = Field(None, min_length=1, max_length=200, description="Where it came from.")
    language: LanguageCode | None = None
    metadata: Metadata | None = None


class ItemsIn(RequestModel):
    """POST /v1/inboxes/{name}/items body."""

    items: list[ItemIn] = limited("max_inbox_items_per_request", min_length=1)


class ItemsOut(BaseModel):
    """What an intake did: new items, resent ones, clusters started, and each item's cluster."""

    added: int
    duplicates: int
    clusters_created: int
    clusters: dict[str, int] = Field(description="Item id -> its cluster's id.")


class Candidate(BaseModel):
    """A document of a followed corpus, as `/match` shows it, with its corpus."""

    corpus: str
    id: str
    text: str
    rank: int
    score: float
    probability: float | None


class ItemOut(BaseModel):
    """One item as it came, with its own decision."""

    id: str
    text: str
    received_at: datetime
    source: str | None
    language: str | None
    metadata: dict[str, Any] | None
    cluster_id: int
    decision: Decision | None
    match_id: str | None = Field(description="`corpus/id` of its own auto-match.")
    probability: float | None


class Arrivals(BaseModel):
    """Arrivals in one UTC hour."""

    hour: str
    count: int


class ClusterOut(BaseModel):
    """Items about one claim, with what the corpora know of it and the desk's status."""

    id: int
    status: ClusterStatus
    representative: str
    size: int
    first_arrival: datetime
    last_arrival: datetime
    languages: dict[str, int]
    sources: dict[str, int]
    arrivals_per_hour: list[Arrivals]
    decision: Decision | None = Field(description="From the corpora's match policy; null: none calibrated.")
    probability: float | None
    match: Candidate | None
    candidates: list[Candidate]
    rejected: list[str] = Field(description="`corpus/id` of candidates the desk rejected.")
    items: list[ItemOut] | None = Field(None, exclude_if=lambda value: value is None)


class ClusterPage(BaseModel):
    """A page of clusters."""

    clusters: list[ClusterOut]
    next_cursor: int | None = Field(description="Pass as `cursor` for the next page; null at the end.")


class ConfirmIn(RequestModel):
    """Confirm a cluster's match: one of its candidates (or its match when omitted) answers it."""

    corpus: CorpusName | None = None
    document_id: DocumentId | None = None


class RejectIn(RequestModel):
    """Reject a candidate of a cluster: it is not about that check."""

    corpus: CorpusName
    document_id: DocumentId


class StatusIn(RequestModel):
    """Set a cluster's status."""

    status: ClusterStatus


class MoveIn(RequestModel):
    """Move an item to another cluster, or (`cluster_id` omitted) split it off into a cluster of its own."""

    item_id: DocumentId
    cluster_id: int | None = Field(None, ge=1, le=2**31 - 1)


class TriageOut(BaseModel):
    """What a triage action did: the cluster(s) after it, and the judged pairs it stored."""

    clusters: list[ClusterOut]
    pairs: int = 0


class DeliveryOut(BaseModel):
    """One webhook event's delivery."""

    id: int
    event: str
    url: str
    status: Literal["pending", "delivered", "failed"]
    attempts: int
    last_status_code: int | None
    last_error: str | None
    next_attempt_at: datetime | None
    created_at: datetime
    delivered_at: datetime | None
    cluster_id: int | None


class DeliveryPage(BaseModel):
    """A page of deliveries, newest first."""

    deliveries: list[DeliveryOut]
    next_cursor: int | None
