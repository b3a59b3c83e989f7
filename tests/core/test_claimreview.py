"""ClaimReview records as documents: each publisher shape of tests/fixtures/claimreview, malformed records
named by their place and field, ids stable from the review's URL."""

from __future__ import annotations

from pathlib import Path

from app.core.claimreview import holds_claim_reviews, language_code, read_claim_reviews
from app.core.jsonld import read_blocks

FIXTURES = Path(__file__).parents[1] / "fixtures" / "claimreview"


def reviews_of(name: str):  # noqa: ANN201 - the test's own shorthand
    """The fixture's documents and problems."""
    return read_claim_reviews(read_blocks((FIXTURES / name).read_text(encoding="utf-8")))


def test_the_schema_org_example_maps_every_field() -> None:
    found = reviews_of("schema_org_example.json")
    assert found.problems == [] and len(found.documents) == 1
    document = found.documents[0]
    assert document.text == "The world is flat" and document.language == "en"
    assert document.metadata == {
        "title": "Is the world flat? We checked",
        "url": "https://example.com/news/science/worldisflat.html",
        "date_published": "2016-06-22",
        "author": "Example.com science watch",
        "in_language": "en",
        "verdict": "False",
        "rating_value": 1,
        "rating_best": 5,
        "rating_worst": 1,
        "claimant": "Square World Society",
        "claim_date": "2016-06-20",
        "appearances": ["https://example.flatworlders.com/we-know-that-the-world-is-flat"],
    }
    assert document.id.startswith("cr-") and len(document.id) == 23


def test_a_page_with_a_graph_and_other_blocks() -> None:
    found = reviews_of("publisher_page.html")
    assert found.problems == [] and [d.text for d in found.documents] == [
        "Las antenas 5G propagan el coronavirus por las ciudades"
    ]
    document = found.documents[0]
    assert document.language == "es" and document.metadata["in_language"] == "es-ES"
    assert document.metadata["verdict"] == "Falso" and document.metadata["claimant"] == "Cadena de WhatsApp"
    assert document.metadata["first_appearance"] == "https://social.example/post/5g"
    assert document.metadata["author"] == "Verifica Ejemplo"


def test_an_array_of_reviews_with_an_array_of_ratings_and_nested_claims() -> None:
    first, second = reviews_of("ratings_array.json").documents
    assert first.metadata["verdict"] == "Falso"  # the named rating of the two
    assert first.metadata["author"] == "Checagem Exemplo, Ana Souza" and first.language == "pt"
    assert first.metadata["title"] == "Vacinas não causam infertilidade"
    assert first.metadata["appearances"] == [
        "https://video.example/watch?v=abc", "https://social.example/post/1", "https://social.example/post/2"
    ]  # fmt: skip
    assert first.metadata["first_appearance"] == "https://video.example/watch?v=abc"
    assert second.metadata["verdict"] == "Enganoso" and "claimant" not in second.metadata
    assert first.id != second.id


def test_partial_and_malformed_records_in_json_lines() -> None:
    found = reviews_of("reviews.jsonl")
    assert [d.text for d in found.documents] == [
        "Drinking bleach cures the coronavirus infection.",
        "A shark was photographed swimming on a flooded highway.",
    ]
    assert found.documents[1].metadata == {"url": "https://factcheck.example.org/shark"}  # partial: kept
    assert [p.describe().split(":")[0:2] for p in found.problems] == [
        ["record 3 (line 3)", " claimReviewed"],
        ["record 4 (line 4)", " json"],
    ]
    assert "needs the claim's text" in found.problems[0].message


def test_fact_check_tools_answers_give_one_document_per_review() -> None:
    found = reviews_of("factchecktools_claims.json")
    assert [(d.text, d.metadata["verdict"], d.language) for d in found.documents] == [
        ("5G towers spread the coronavirus.", "False", "en"),
        ("5G towers spread the coronavirus.", "Falso", "es"),
        ("Onions in socks remove toxins.", "Misleading", "en"),
    ]
    assert found.documents[0].metadata["author"] == "Factcheck Example"
    assert found.documents[0].metadata["claimant"] == "Social media posts"


def test_ids_are_stable_and_a_pages_second_review_gets_its_own() -> None:
    text = (FIXTURES / "schema_org_example.json").read_text()
    first = read_claim_reviews(read_blocks(text)).documents[0].id
    assert read_claim_reviews(read_blocks(text)).documents[0].id == first
    twice = read_claim_reviews(read_blocks(f"[{text}, {text.replace('The world is flat', 'It is round')}]"))
    assert twice.documents[0].id == first and twice.documents[1].id != first


def test_the_format_is_told_from_the_content() -> None:
    assert holds_claim_reviews(read_blocks((FIXTURES / "publisher_page.html").read_text()))
    assert holds_claim_reviews(read_blocks((FIXTURES / "factchecktools_claims.json").read_text()))
    assert not holds_claim_reviews(read_blocks('{"id": "a", "text": "x"}\n{"id": "b", "text": "y"}\n'))
    assert not holds_claim_reviews(read_blocks("<html><p>no JSON-LD here</p></html>"))


def test_language_codes_from_what_publishers_write() -> None:
    assert [language_code(v) for v in ("es", "pt-BR", "pt_BR", "EN", {"alternateName": "de"})] == [
        "es", "pt", "pt", "en", "de"
    ]  # fmt: skip
    assert language_code("Spanish") is None and language_code(None) is None and language_code("xx") is None


def test_json_nested_too_deeply_is_a_malformed_record() -> None:
    deep = '{"@type": "ClaimReview", "claimReviewed": "x", "a": ' + "[" * 100_000 + "]" * 100_000 + "}"
    found = read_claim_reviews(read_blocks(deep + "\n" + '{"@type": "ClaimReview", "claimReviewed": "y"}'))
    assert [d.text for d in found.documents] == ["y"]
    assert [(p.record, p.field) for p in found.problems] == [(1, "json")]
