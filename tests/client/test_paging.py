"""2,500 documents upserted in batches with a progress bar and paged back, on SQLite and on PostgreSQL
(TEST_DATABASE_URL): every document exactly once, in a stable order, while writes go on meanwhile."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator

import pytest

from pairank.client import AsyncClient, Client
from tests.client.conftest import ADMIN_KEY, Serve, in_own_thread, url_of
from tests.conftest import POSTGRES_SKIP_REASON
from tests.helpers.postgres import postgres_schema
from tests.helpers.processes import Server

pytestmark = pytest.mark.postgres
CORPUS = "paging"
COUNT = 2_500


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest, serve: Serve, server: Server) -> Iterator[str]:
    """The shared server (SQLite), or one of the module's own on a fresh PostgreSQL schema."""
    if request.param == "sqlite":
        yield url_of(server)
        return
    base_url = os.environ.get("TEST_DATABASE_URL")
    if not base_url:
        pytest.skip(POSTGRES_SKIP_REASON)
    with postgres_schema(base_url) as database_url:
        own = serve(database_url)
        yield url_of(own)
        own.kill()  # before its schema is dropped


def test_upsert_with_a_progress_bar_and_page_through_every_document(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with Client(url, api_key=ADMIN_KEY) as client:
        client.create_corpus(CORPUS, "claim")
        documents = (
            {"id": f"doc-{n:05d}", "text": f"claim {n} about floods and towers"} for n in range(COUNT)
        )
        summed = client.upsert(CORPUS, documents, batch_size=1000, progress=True)
        assert (summed.inserted, summed.document_count) == (COUNT, COUNT)
        assert f"{COUNT}doc" in capsys.readouterr().err.replace(" ", "")  # the tqdm bar counted them all
        pages = []
        cursor: int | None = 0
        while cursor is not None:
            page = client.list_documents(CORPUS, limit=1000, cursor=cursor)
            pages.append([d.id for d in page.documents])
            cursor = page.next_cursor
        assert [len(p) for p in pages] == [1000, 1000, 500]
        seen: list[str] = []
        for document in client.iter_documents(CORPUS, page_size=1000):
            if len(seen) == 1500:  # halfway through the second page: writes meanwhile never shift a page
                client.delete_document(CORPUS, "doc-00003")
                client.upsert(CORPUS, [{"id": "doc-late", "text": "written while paging"}])
            seen.append(document.id)
        assert seen == [i for p in pages for i in p] + ["doc-late"]  # each once, in the stable order
        assert len(set(seen)) == COUNT + 1

    async def count() -> int:
        async with AsyncClient(url, api_key=ADMIN_KEY) as aclient:
            return len([d async for d in aclient.iter_documents(CORPUS, page_size=700)])

    assert in_own_thread(lambda: asyncio.run(count())) == COUNT  # one deleted, one added
    with Client(url, api_key=ADMIN_KEY) as client:
        client.delete_corpus(CORPUS)
