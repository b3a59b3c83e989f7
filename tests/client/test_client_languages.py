"""The client's language and ClaimReview surface against a real `pairank serve`: a corpus's language, a
change of language followed to its end, a rank's language, fact-checks imported with `on_error`."""

from __future__ import annotations

from pathlib import Path

import pytest

from pairank.client import Client, InvalidRequestError, JobFailedError
from pairank.client.ops.imports import content_type

FIXTURES = Path(__file__).parents[1] / "fixtures" / "claimreview"


def test_languages_through_the_client(admin: Client) -> None:
    created = admin.create_corpus("client-es", "claim", language="es")
    assert created.language == "es" and admin.get_corpus("client-es").language == "es"
    admin.upsert("client-es", [{"id": "a", "text": "Las vacunas causan infertilidad en las mujeres jóvenes"}])
    answer = admin.rank("client-es", "¿Causó la vacunación esterilidad?", mode="lexical")
    assert answer.language is not None and answer.language.code == "es" and answer.results[0].id == "a"
    with pytest.raises(InvalidRequestError) as refused:
        admin.create_corpus("client-xx", "claim", language="xx")  # refused by the API's model
    assert refused.value.field == "language"
    job = admin.set_language("client-es", "multi")
    assert job.record.kind == "language"
    record = job.wait(timeout=60, poll_interval=0.1)
    assert record.progress is not None and record.progress["detected"] == 1
    assert admin.get_corpus("client-es").language == "multi"
    assert admin.get_document("client-es", "a").language == "es"
    kept = admin.rank("client-es", "Uma antena espalha os vírus", same_language=True)
    assert kept.language is not None and kept.language.code == "pt" and kept.results == []
    admin.delete_corpus("client-es")


def test_fact_checks_through_the_client(admin: Client) -> None:
    admin.create_corpus("client-checks", "claim")
    with pytest.raises(JobFailedError) as refused:
        admin.import_file("client-checks", FIXTURES / "reviews.jsonl").wait(timeout=60, poll_interval=0.1)
    assert "record 3 (line 3): claimReviewed" in (refused.value.record.error or "")
    skipped = admin.import_file("client-checks", FIXTURES / "reviews.jsonl", on_error="skip")
    record = skipped.wait(timeout=60, poll_interval=0.1)
    assert (
        record.progress is not None and record.progress["skipped"] == 2 and record.progress["inserted"] == 2
    )
    page = admin.import_file("client-checks", (FIXTURES / "publisher_page.html").read_bytes())
    assert page.wait(timeout=60, poll_interval=0.1).progress["format"] == "claimreview"  # type: ignore[index]
    assert admin.get_corpus("client-checks").document_count == 3
    admin.delete_corpus("client-checks")


def test_an_upload_is_labelled_by_its_first_bytes() -> None:
    assert content_type(b"\n<!DOCTYPE html><html>") == "text/html"
    assert content_type(b'[{"@type": "ClaimReview"}]') == "application/ld+json"
    assert (
        content_type(b'{"@context": "https://schema.org", "@type": "ClaimReview"}\n') == "application/ld+json"
    )
    assert content_type(b'{"id": "a", "text": "x"}\n') == "application/x-ndjson"
