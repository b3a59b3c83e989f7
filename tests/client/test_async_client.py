"""The asyncio client against the real server: the same operations awaited, concurrent calls, async
paging, errors raised when awaited, and an import job awaited to its end."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from pairank.client import AsyncClient, AsyncJob, ConflictError, InvalidRequestError, NotFoundError
from tests.client.conftest import ADMIN_KEY, in_own_thread, url_of
from tests.helpers.processes import Server

CORPUS = "async-claims"


async def scenario(url: str, upload: Path) -> None:
    """Everything the test checks, in one event loop."""
    async with AsyncClient(url, api_key=ADMIN_KEY) as client:
        created = await client.create_corpus(CORPUS, "question")
        assert created.name == CORPUS and (await client.get_corpus(CORPUS)).kind == "question"
        seen: list[int] = []
        documents = [{"id": f"q{n}", "text": f"how do I fix error number {n}?"} for n in range(120)]
        summed = await client.upsert(
            CORPUS, documents, batch_size=50, progress=lambda done, _: seen.append(done)
        )
        assert summed.inserted == 120 and seen == [50, 100, 120]
        ids = [document.id async for document in client.iter_documents(CORPUS, page_size=40)]
        assert sorted(ids) == sorted(d["id"] for d in documents) and len(set(ids)) == 120
        ranked = await asyncio.gather(*(client.rank(CORPUS, f"error number {n}", k=1) for n in range(8)))
        assert all(len(r.results) == 1 for r in ranked)
        duplicates = await client.duplicates(CORPUS, ids=["q3"], threshold=0.5)
        assert duplicates.results[0].id == "q3"
        assert len((await client.similarity(source="error", targets=["error", "fix"])).scores) == 2
        pending = client.rank(CORPUS, "  ")  # nothing is checked or sent until it is awaited
        with pytest.raises(InvalidRequestError) as blank:
            await pending
        assert blank.value.field == "query"
        with pytest.raises(NotFoundError):
            await client.get_document(CORPUS, "nope")
        with pytest.raises(ConflictError):
            await client.create_corpus(CORPUS, "question")
        job = await client.import_file(CORPUS, upload)
        assert isinstance(job, AsyncJob)
        finished = await job.wait(timeout=60, poll_interval=0.1)
        assert finished.status == "succeeded" and job.status == "succeeded"
        assert (await job.refresh()).id == job.id
        assert (await client.get_document(CORPUS, "imported")).text == "an imported question?"
        await client.delete_corpus(CORPUS)


def test_the_async_client_awaits_every_kind_of_operation(server: Server, tmp_path: Path) -> None:
    upload = tmp_path / "one.jsonl"
    upload.write_text('{"id": "imported", "text": "an imported question?"}\n')
    in_own_thread(lambda: asyncio.run(scenario(url_of(server), upload)))
