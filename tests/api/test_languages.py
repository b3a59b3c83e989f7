"""Languages over the API: a corpus's language, `multi` corpora, queries in a language, `same_language`,
and a change of language rebuilt in the background while queries go on (SQLite, PostgreSQL, pgvector)."""

from __future__ import annotations

import time
from typing import Any

from fastapi.testclient import TestClient

from app.control.worker import JobWorker
from app.process import JOB_HANDLERS
from tests.api.conftest import ClientFactory
from tests.api.test_documents import runtime_of
from tests.indexes.test_languages import CORPORA

LEXICAL = {"mode": "lexical"}


def make_corpus(client: TestClient, name: str, language: str, documents: list[dict[str, Any]]) -> None:
    """A claim corpus in a language with the given documents."""
    created = client.post("/v1/corpora", json={"name": name, "kind": "claim", "language": language})
    assert created.status_code == 201, created.text
    if documents:
        written = client.post(f"/v1/corpora/{name}/documents", json={"documents": documents})
        assert written.status_code == 200, written.text


def claims_of(language: str) -> list[dict[str, Any]]:
    """The language's mini-corpus as documents `<language>-<n>`."""
    return [{"id": f"{language}-{n}", "text": text} for n, text in enumerate(CORPORA[language][0])]


def top(client: TestClient, corpus: str, query: str, **options: Any) -> dict[str, Any]:
    """A lexical rank's response (200 checked)."""
    response = client.post(f"/v1/corpora/{corpus}/rank", json={"query": query, "k": 3, **LEXICAL, **options})
    assert response.status_code == 200, response.text
    return dict(response.json())


def wait_language(client: TestClient, corpus: str, job_id: str) -> dict[str, Any]:
    """Poll a change of language until it ends."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        job: dict[str, Any] = client.get(f"/v1/corpora/{corpus}/language/{job_id}").json()
        if job["status"] not in ("queued", "running"):
            return job
        time.sleep(0.05)
    raise AssertionError(f"the change of language never ended: {job}")


def test_a_corpus_in_spanish_finds_inflected_claims(client: TestClient) -> None:
    make_corpus(client, "es-claims", "es", claims_of("es"))
    assert client.get("/v1/corpora/es-claims").json()["language"] == "es"
    assert client.get("/v1/corpora/es-claims/index").json()["lexical"]["language"] == "es"
    for query, wanted in CORPORA["es"][1]:
        answer = top(client, "es-claims", query)
        assert answer["results"][0]["id"] == f"es-{wanted}", (query, answer)
        assert answer["language"] == {"code": "es", "source": "corpus"}
    # The request may name another language: the query is analysed in it (here, English: no match).
    named = top(client, "es-claims", "¿Causó la vacunación esterilidad?", language="en")
    assert named["language"] == {"code": "en", "source": "request"} and named["results"] == []
    # same_language: a corpus of one language keeps all of its documents or none.
    assert top(client, "es-claims", "vacunación", same_language=True)["results"]
    assert top(client, "es-claims", "vacunación", language="pt", same_language=True)["results"] == []


def test_bad_languages_are_refused_naming_the_field(client: TestClient) -> None:
    for code, why in (("xx", "not an ISO 639-1 language code"), ("spanish", "at most 5 characters")):
        refused = client.post("/v1/corpora", json={"name": "c", "kind": "claim", "language": code})
        assert refused.status_code == 422 and refused.json()["errors"][0]["field"] == "language"
        assert why in refused.json()["detail"], refused.text
    make_corpus(client, "c", "es", [])
    wrong = client.post(
        "/v1/corpora/c/documents", json={"documents": [{"id": "a", "text": "x", "language": "pt"}]}
    )
    assert wrong.status_code == 422 and wrong.json()["field"] == "documents[0].language", wrong.text
    bad = client.post("/v1/corpora/c/rank", json={"query": "x", "language": "qq"})
    assert bad.status_code == 422 and "language" in bad.text
    assert client.put("/v1/corpora/c/language", json={"language": "zz"}).status_code == 422
    assert client.put("/v1/corpora/nope/language", json={"language": "pt"}).status_code == 404


def test_a_multi_corpus_detects_each_documents_language_and_the_querys(client: TestClient) -> None:
    documents = [*claims_of("es"), *claims_of("pt"), *claims_of("de"), *claims_of("ar")]
    documents[0]["language"] = "es"  # given (the others are detected)
    make_corpus(client, "many", "multi", documents)
    stored = {
        d["id"]: d["language"] for d in client.get("/v1/corpora/many/documents?limit=100").json()["documents"]
    }
    assert sum(stored[d["id"]] == d["id"][:2] for d in documents) >= len(documents) - 1, stored
    answer = top(client, "many", "Die Regierung verheimlicht einen Todesfall")
    assert answer["language"]["code"] == "de" and answer["language"]["source"] == "detected"
    assert answer["results"][0]["id"] == "de-1"
    # same_language: only documents in the query's language, in every mode.
    for mode in ("dense", "lexical", "hybrid"):
        kept = top(client, "many", "Uma antena espalha os vírus", mode=mode, same_language=True)
        assert kept["results"] and {r["id"][:2] for r in kept["results"]} == {"pt"}, kept
    exported = [line for line in client.get("/v1/corpora/many/export").text.splitlines() if line]
    assert all('"language": ' in line for line in exported) and len(exported) == len(documents)
    duplicates = client.post(
        "/v1/corpora/many/duplicates",
        json={"texts": ["Os governos esconderam as mortes da pandemia", "اللقاحات تسبب العقم عند النساء"],
              "threshold": -1, "k": 3, "same_language": True},
    ).json()  # fmt: skip
    assert [r["language"]["code"] for r in duplicates["results"]] == ["pt", "ar"]
    for result, language in zip(duplicates["results"], ("pt", "ar"), strict=True):
        assert result["duplicates"] and {d["id"][:2] for d in result["duplicates"]} == {language}


def test_a_change_of_language_rebuilds_in_the_background(make_client: ClientFactory) -> None:
    client = make_client(embedded_worker=False)
    other = make_client(embedded_worker=False, sync_seconds=0)  # another process on the same database
    make_corpus(client, "claims", "en", claims_of("pt"))
    query = "A vacinação causou isso?"
    assert top(client, "claims", query)["results"] == []  # English analysis misses the inflected claim
    assert top(other, "claims", query)["results"] == []  # (the other process opens the corpus in English)
    started = client.put("/v1/corpora/claims/language", json={"language": "pt"})
    assert started.status_code == 202 and started.json()["kind"] == "language", started.text
    job_id = started.json()["id"]
    assert client.put("/v1/corpora/claims/language", json={"language": "es"}).status_code == 409
    # Queued, not run yet: queries are answered as before, in the previous language.
    answer = top(client, "claims", query)
    assert answer["language"] == {"code": "en", "source": "corpus"} and answer["results"] == []
    client.post(
        "/v1/corpora/claims/documents",
        json={"documents": [{"id": "late", "text": "Vacinações causaram isto"}]},
    )
    assert JobWorker(runtime_of(client), JOB_HANDLERS).run_once()
    job = wait_language(client, "claims", job_id)
    assert job["status"] == "succeeded" and job["progress"]["stage"] == "done", job
    assert client.get("/v1/corpora/claims").json()["language"] == "pt"
    answer = top(client, "claims", query)
    assert answer["language"] == {"code": "pt", "source": "corpus"}
    assert {r["id"] for r in answer["results"]} == {"pt-0", "late"}  # written after the job began
    # The other process serves the previous language until its sync, then the new one (the job's index).
    assert top(other, "claims", query)["results"] == []
    runtime_of(other).serving.state().store.follow()
    assert top(other, "claims", query)["results"] == answer["results"]
    lexical = other.get("/v1/corpora/claims/index").json()["lexical"]
    assert lexical == {
        **client.get("/v1/corpora/claims/index").json()["lexical"],
        "language": "pt",
        "documents": 5,
    }


def test_a_corpus_becoming_multi_detects_its_documents(client: TestClient) -> None:
    make_corpus(client, "mixed", "en", [*claims_of("de"), *claims_of("es")])
    assert {d["language"] for d in client.get("/v1/corpora/mixed/documents").json()["documents"]} == {None}
    started = client.put("/v1/corpora/mixed/language", json={"language": "multi"})
    job = wait_language(client, "mixed", started.json()["id"])
    assert job["status"] == "succeeded" and job["progress"]["detected"] == 8, job
    stored = {d["id"]: d["language"] for d in client.get("/v1/corpora/mixed/documents").json()["documents"]}
    assert all(language == doc_id[:2] for doc_id, language in stored.items()), stored
    assert top(client, "mixed", "Ein Funkmast verbreitet Viren")["results"][0]["id"] == "de-3"
    back = client.put("/v1/corpora/mixed/language", json={"language": "de"})
    assert wait_language(client, "mixed", back.json()["id"])["status"] == "succeeded"
    assert {d["language"] for d in client.get("/v1/corpora/mixed/documents").json()["documents"]} == {None}
