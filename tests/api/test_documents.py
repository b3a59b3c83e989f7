"""Documents as users expect: paging, export and import, metadata kept or replaced, filters, read-back."""

from __future__ import annotations

import json
import random
import time
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.search import filtered as filtered_search
from app.serving.runtime import Runtime
from tests.api.conftest import ClientFactory, add_claims

pytestmark = pytest.mark.postgres
WORDS = ["moon", "vaccine", "tower", "shark", "flood", "carrot", "bleach", "earth", "studio", "highway"]


def runtime_of(client: TestClient) -> Runtime:
    """The runtime behind a test client's app."""
    runtime: Runtime = client.app.state.runtime  # type: ignore[attr-defined]
    return runtime


def make_corpus(client: TestClient, count: int, name: str = "docs") -> list[dict[str, Any]]:
    """A corpus of `count` documents with varied metadata."""
    rng = random.Random(0)
    documents = [
        {
            "id": f"d{i}",
            "text": " ".join(rng.choices(WORDS, k=8)),
            "metadata": {
                "lang": rng.choice(["en", "fr", "ar"]),
                "year": rng.choice([2019, 2020, 2021]),
                "checked": rng.random() < 0.5,
            },
        }
        for i in range(count)
    ]
    assert client.post("/v1/corpora", json={"name": name, "kind": "claim"}).status_code == 201
    for start in range(0, count, 500):
        response = client.post(
            f"/v1/corpora/{name}/documents", json={"documents": documents[start : start + 500]}
        )
        assert response.status_code == 200, response.text
    return documents


def wait_job(client: TestClient, url: str) -> dict[str, Any]:
    """Poll an import until it ends."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        job = client.get(url).json()
        if job["status"] not in ("queued", "running"):
            return job
        time.sleep(0.05)
    raise AssertionError(f"job never ended: {job}")


def jsonl(documents: list[dict[str, Any]]) -> bytes:
    """Documents as JSON lines."""
    return "".join(json.dumps(d) + "\n" for d in documents).encode()


def test_pages_are_stable_and_complete(client: TestClient) -> None:
    documents = make_corpus(client, 250)
    seen: list[str] = []
    cursor = 0
    while True:
        page = client.get(f"/v1/corpora/docs/documents?limit=100&cursor={cursor}").json()
        seen += [d["id"] for d in page["documents"]]
        if cursor == 0:  # a delete between pages never shifts the next page
            assert client.delete("/v1/corpora/docs/documents/d0").status_code == 204
        if page["next_cursor"] is None:
            break
        cursor = page["next_cursor"]
    assert seen == [d["id"] for d in documents]
    assert client.get("/v1/corpora/nope/documents").status_code == 404


def test_export_then_import_round_trips(client: TestClient) -> None:
    make_corpus(client, 120)
    exported = client.get("/v1/corpora/docs/export")
    assert exported.status_code == 200 and exported.headers["content-type"].startswith("application/x-ndjson")
    lines = [json.loads(line) for line in exported.text.splitlines()]
    assert len(lines) == 120 and set(lines[0]) == {"id", "text", "metadata"}
    assert client.post("/v1/corpora", json={"name": "copy", "kind": "claim"}).status_code == 201
    started = client.post(
        "/v1/corpora/copy/imports", content=exported.content, headers={"content-type": "application/x-ndjson"}
    )
    assert started.status_code == 202 and started.json()["kind"] == "import"
    job = wait_job(client, f"/v1/corpora/copy/imports/{started.json()['id']}")
    assert job["status"] == "succeeded", job
    assert job["progress"]["done"] == job["progress"]["total"] == 120 and job["progress"]["inserted"] == 120
    copied = client.get("/v1/corpora/copy/export").text.splitlines()
    assert [json.loads(line) for line in copied] == lines


def test_a_bad_line_fails_the_import_before_anything_is_written(client: TestClient) -> None:
    client.post("/v1/corpora", json={"name": "c", "kind": "claim"})
    body = b'{"id": "a", "text": "fine"}\n{"id": "b", "text": "fine too"}\n{"id": "c"}\n'
    started = client.post(
        "/v1/corpora/c/imports", content=body, headers={"content-type": "application/x-ndjson"}
    )
    job = wait_job(client, f"/v1/corpora/c/imports/{started.json()['id']}")
    assert job["status"] == "failed" and job["error"].startswith("line 3: text")
    assert client.get("/v1/corpora/c").json()["document_count"] == 0


def test_a_failed_import_resumes_from_its_last_committed_chunk(make_client: ClientFactory) -> None:
    client = make_client(max_documents_per_request=100, max_text_chars=60)
    client.post("/v1/corpora", json={"name": "c", "kind": "claim"})
    documents = [{"id": f"d{i}", "text": f"claim {i} about the moon"} for i in range(250)]
    documents[150]["text"] = "a claim far longer than the sixty characters allowed right now, about carrots"
    started = client.post(
        "/v1/corpora/c/imports", content=jsonl(documents), headers={"content-type": "application/x-ndjson"}
    )
    url = f"/v1/corpora/c/imports/{started.json()['id']}"
    job = wait_job(client, url)
    assert job["status"] == "failed" and "exceeds the limit of 60" in job["error"]
    assert job["progress"]["done"] == 100 and client.get("/v1/corpora/c").json()["document_count"] == 100
    runtime_of(client).settings.max_text_chars = 10_000  # the operator raises the limit
    assert client.post(f"{url}/resume").status_code == 202
    job = wait_job(client, url)
    assert job["status"] == "succeeded" and job["progress"]["done"] == 250
    assert job["progress"]["inserted"] == 250  # the first 100 were not counted (nor written) twice
    assert client.get("/v1/corpora/c").json()["document_count"] == 250
    assert client.post(f"{url}/resume").status_code == 409
    assert client.post(f"{url}/cancel").status_code == 409


def test_omitted_metadata_is_kept_and_null_clears_it(client: TestClient) -> None:
    add_claims(client)
    url = "/v1/corpora/claims/documents"
    client.post(url, json={"documents": [{"id": "c1", "text": "first", "metadata": {"source": "snopes"}}]})
    client.post(url, json={"documents": [{"id": "c1", "text": "second"}]})
    assert client.get(f"{url}/c1").json()["metadata"] == {"source": "snopes"}
    client.post(url, json={"documents": [{"id": "c1", "text": "second", "metadata": None}]})
    assert client.get(f"{url}/c1").json()["metadata"] is None


@pytest.mark.parametrize("exact_limit", [50_000, 5], ids=["scored-exactly", "searched-deeper"])
def test_filtered_results_are_the_top_k_among_matching_documents(
    client: TestClient, monkeypatch: pytest.MonkeyPatch, exact_limit: int
) -> None:
    monkeypatch.setattr(filtered_search, "EXACT_LIMIT", exact_limit)
    documents = make_corpus(client, 300)
    rng = random.Random(1)
    filters: list[dict[str, Any]] = [
        {"lang": "fr"},
        {"year": 2020, "checked": True},
        {"lang": {"in": ["en", "ar"]}, "year": {"in": [2019, 2021]}},
        {"lang": "de"},
        {"year": "2020"},  # a string never matches a number
    ]
    for conditions in filters:
        query = " ".join(rng.choices(WORDS, k=6))
        matching = [
            d["id"] for d in documents if all(_matches(d["metadata"], k, v) for k, v in conditions.items())
        ]
        body = {"query": query, "k": 10, "filter": conditions, "include_metadata": True, "mode": "dense"}
        results = client.post("/v1/corpora/docs/rank", json=body).json()["results"]
        # The claim corpus's default, hybrid, normalises over its own candidates: only the filter and k
        # can be compared with the dense reference.
        fused = client.post("/v1/corpora/docs/rank", json={**body, "mode": None}).json()["results"]
        assert all(_matches(r["metadata"], k, v) for r in fused for k, v in conditions.items())
        assert len(fused) == len(results) == min(10, len(matching))
        if not matching:
            continue
        reference = client.post(
            "/v1/corpora/docs/rank",
            json={"query": query, "k": 10, "candidates": matching, "mode": "dense"},
        )
        assert [r["id"] for r in results] == [r["id"] for r in reference.json()["results"]], conditions
        assert all(_matches(r["metadata"], k, v) for r in results for k, v in conditions.items())
    duplicates = client.post(
        "/v1/corpora/docs/duplicates",
        json={"ids": ["d1"], "threshold": -1, "k": 5, "filter": {"lang": "en"}, "include_metadata": True},
    ).json()
    assert all(
        m["metadata"]["lang"] == "en" and m["id"] != "d1" for m in duplicates["results"][0]["duplicates"]
    )


def _matches(metadata: dict[str, Any], key: str, wanted: Any) -> bool:
    values = wanted["in"] if isinstance(wanted, dict) else [wanted]
    value = metadata.get(key)
    return any(type(value) is type(v) and value == v for v in values)


scalar = st.one_of(
    st.text(max_size=40),
    st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.none(),
)
metadata = st.dictionaries(
    st.text(min_size=1, max_size=20).filter(lambda k: not any(ord(c) < 32 or ord(c) == 127 for c in k)),
    st.one_of(scalar, st.lists(scalar, max_size=5)),
    max_size=6,
)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=st.text(min_size=1, max_size=200).filter(lambda t: t.strip()), meta=metadata)
def test_every_stored_document_reads_back_as_written(
    client: TestClient, text: str, meta: dict[str, Any]
) -> None:
    if client.get("/v1/corpora/rb").status_code == 404:
        client.post("/v1/corpora", json={"name": "rb", "kind": "claim"})
    stored = client.post(
        "/v1/corpora/rb/documents", json={"documents": [{"id": "x", "text": text, "metadata": meta}]}
    )
    assert stored.status_code in (200, 422), stored.text  # never a 5xx
    if stored.status_code == 200:
        document = client.get("/v1/corpora/rb/documents/x").json()
        assert document["text"] == text and document["metadata"] == meta
