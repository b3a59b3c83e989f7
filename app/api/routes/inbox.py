"""The tips inbox: inboxes, items in, clusters out, the desk's triage, webhook deliveries."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query, Request, Response

from app.api.deps import get_runtime
from app.api.security import READ, WRITE, WriteAccess, check_corpus_access, judge_name
from app.schemas.errors import COMMON_ERRORS, CONFLICT, NOT_FOUND, error_responses
from app.schemas.inbox import (
    ClusterOut,
    ClusterPage,
    ClusterStatus,
    ConfirmIn,
    DecisionFilter,
    DeliveryOut,
    DeliveryPage,
    InboxCreate,
    InboxList,
    InboxOut,
    ItemsIn,
    ItemsOut,
    MoveIn,
    RejectIn,
    StatusIn,
    TriageOut,
)
from app.usecases.inbox.inboxes import InboxInput, InboxService, WebhookInput
from app.usecases.inbox.intake import IntakeService, ItemInput
from app.usecases.inbox.triage import TriageResult, TriageService

router = APIRouter(
    prefix="/v1/inboxes", tags=["inbox"], responses={**error_responses(*COMMON_ERRORS), **NOT_FOUND}
)

InboxName = Annotated[
    str,
    Path(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", description="Inbox name."),
]
ClusterId = Annotated[int, Path(ge=1, le=2**31 - 1, description="Cluster id.")]


def inboxes(request: Request) -> InboxService:
    """Inboxes on this app's runtime."""
    return InboxService(get_runtime(request))


def intake(request: Request) -> IntakeService:
    """Item intake on this app's runtime."""
    return IntakeService(get_runtime(request))


def triage(request: Request) -> TriageService:
    """The desk's actions on this app's runtime."""
    return TriageService(get_runtime(request))


Inboxes = Annotated[InboxService, Depends(inboxes)]
Intake = Annotated[IntakeService, Depends(intake)]
Triage = Annotated[TriageService, Depends(triage)]


def _triaged(result: TriageResult) -> TriageOut:
    return TriageOut(clusters=[ClusterOut.model_validate(c) for c in result.clusters], pairs=result.pairs)


@router.post("", status_code=201, response_model=InboxOut, responses=CONFLICT)
def create_inbox(body: InboxCreate, service: Inboxes, principal: WriteAccess) -> InboxOut:
    """Create an inbox that matches its items against `corpora`; its webhooks' secrets are shown only here."""
    for corpus in body.corpora:
        check_corpus_access(principal, corpus)
    hooks = [WebhookInput(h.url, h.secret) for h in body.webhooks]
    command = InboxInput(body.name, body.corpora, body.language, hooks, body.grew_after)
    return InboxOut.model_validate(service.create(command))


@router.get("", response_model=InboxList, dependencies=[READ])
def list_inboxes(service: Inboxes) -> InboxList:
    """Every inbox."""
    return InboxList(inboxes=[InboxOut.model_validate(i) for i in service.all()])


@router.get("/{name}", response_model=InboxOut, dependencies=[READ])
def get_inbox(name: InboxName, service: Inboxes) -> InboxOut:
    """An inbox with its cluster and item counts."""
    return InboxOut.model_validate(service.get(name))


@router.delete("/{name}", status_code=204, response_class=Response, dependencies=[WRITE])
def delete_inbox(name: InboxName, service: Inboxes) -> Response:
    """Delete an inbox with its items, clusters and deliveries."""
    service.delete(name)
    return Response(status_code=204)


@router.post("/{name}/items", response_model=ItemsOut, dependencies=[WRITE])
def add_items(name: InboxName, body: ItemsIn, service: Intake) -> ItemsOut:
    """Take items (idempotent by id): when this returns they are stored, clustered and decided."""
    items = [ItemInput(i.id, i.text, i.received_at, i.source, i.language, i.metadata) for i in body.items]
    result = service.add_items(name, items)
    return ItemsOut(
        added=result.added,
        duplicates=result.duplicates,
        clusters_created=result.clusters_created,
        clusters=result.clusters,
    )


@router.get("/{name}/clusters", response_model=ClusterPage, dependencies=[READ])
def list_clusters(
    name: InboxName,
    service: Inboxes,
    sort: Annotated[str, Query(pattern="^(size|last_arrival|first_arrival|newest)$")] = "size",
    status: Annotated[list[ClusterStatus] | None, Query(max_length=4)] = None,
    decision: Annotated[
        list[DecisionFilter] | None, Query(max_length=4, description="`none`: undecided.")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
    cursor: Annotated[
        int | None, Query(ge=1, le=2**31 - 1, description="`next_cursor` of the last page.")
    ] = None,
    items: Annotated[
        int | None,
        Query(ge=0, le=1_000_000, description="At most this many items per cluster; omitted: all."),
    ] = None,
) -> ClusterPage:
    """A page of clusters: largest (`size`), latest (`last_arrival`), oldest (`first_arrival`) or newest
    first, filtered by status and decision."""
    found, next_cursor = service.clusters(
        name,
        sort=sort,
        limit=limit,
        cursor=cursor,
        statuses=status or (),
        decisions=decision or (),
        items=items,
    )
    return ClusterPage(clusters=[ClusterOut.model_validate(c) for c in found], next_cursor=next_cursor)


@router.get("/{name}/clusters/{cluster_id}", response_model=ClusterOut, dependencies=[READ])
def get_cluster(name: InboxName, cluster_id: ClusterId, service: Inboxes) -> ClusterOut:
    """One cluster with every one of its items."""
    return ClusterOut.model_validate(service.cluster(name, cluster_id))


@router.post("/{name}/clusters/{cluster_id}/confirm", response_model=TriageOut)
def confirm(
    name: InboxName, cluster_id: ClusterId, body: ConfirmIn, service: Triage, who: WriteAccess
) -> TriageOut:
    """Confirm the cluster's match (or the named document): a positive judged pair per item, by you."""
    return _triaged(service.confirm(name, cluster_id, body.corpus, body.document_id, judge_name(who)))


@router.post("/{name}/clusters/{cluster_id}/reject", response_model=TriageOut)
def reject(
    name: InboxName, cluster_id: ClusterId, body: RejectIn, service: Triage, who: WriteAccess
) -> TriageOut:
    """Reject a candidate: a negative judged pair per item; it is never suggested for the cluster again."""
    return _triaged(service.reject(name, cluster_id, body.corpus, body.document_id, judge_name(who)))


@router.put("/{name}/clusters/{cluster_id}/status", response_model=TriageOut)
def set_status(
    name: InboxName, cluster_id: ClusterId, body: StatusIn, service: Triage, who: WriteAccess
) -> TriageOut:
    """Set the cluster's status: open, needs_check, answered or dismissed (takes no new items)."""
    return _triaged(service.set_status(name, cluster_id, body.status, judge_name(who)))


@router.post("/{name}/moves", response_model=TriageOut)
def move(name: InboxName, body: MoveIn, service: Triage, who: WriteAccess) -> TriageOut:
    """Move an item to another cluster, or split it off (`cluster_id` omitted): calibrates the threshold."""
    return _triaged(service.move(name, body.item_id, body.cluster_id, judge_name(who)))


@router.get("/{name}/deliveries", response_model=DeliveryPage, dependencies=[READ])
def deliveries(
    name: InboxName,
    service: Inboxes,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: Annotated[int | None, Query(ge=1, le=2**31 - 1)] = None,
) -> DeliveryPage:
    """The inbox's webhook deliveries, newest first: event, URL, attempts, status, the last answer."""
    found, next_cursor = service.deliveries(name, limit, cursor)
    return DeliveryPage(deliveries=[DeliveryOut.model_validate(d) for d in found], next_cursor=next_cursor)
