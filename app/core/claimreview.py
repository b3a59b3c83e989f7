"""schema.org ClaimReview records as corpus documents (docs/guides/claimreview.md).

`claimReviewed` is the text; the rest is metadata: the review's `headline` (`title`), its verdict
(`reviewRating.alternateName`: `verdict`; `ratingValue`, `bestRating`, `worstRating`: `rating_value`,
`rating_best`, `rating_worst`), `url`, `datePublished` (`date_published`), `author.name` (`author`),
`inLanguage` (`in_language`), and of the claim (`itemReviewed`) its author (`claimant`), date
(`claim_date`), `appearance` and `firstAppearance` URLs (`appearances`, `first_appearance`). A
document's id is stable from the review's URL (several reviews on one page: from the URL and the claim),
so importing a publisher's feed again updates what changed and adds nothing twice.

A record that cannot be a document is reported by its place and field, never guessed at.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from app.core.jsonld import Block, mentions_type, nodes_of_type
from indexes.languages import ISO_639_1

CLAIM_REVIEW = "ClaimReview"
MAX_LIST = 100  # metadata lists hold 100 values at most
MAX_STRING = 2000  # and strings 2,000 characters


class RecordError(ValueError):
    """A record that cannot be a document: its field and why."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.reason = message


@dataclass(frozen=True)
class Problem:
    """A malformed record: its number among the records (1 first), where it was, the field and why."""

    record: int
    where: str
    field: str
    message: str

    def describe(self) -> str:
        """`record 3 (line 3): claimReviewed: missing ...`."""
        return f"record {self.record} ({self.where}): {self.field}: {self.message}"

    def as_dict(self) -> dict[str, Any]:
        """The problem as a job's progress reports it."""
        return {"record": self.record, "where": self.where, "field": self.field, "error": self.message}


@dataclass(frozen=True)
class ReviewDocument:
    """A ClaimReview as a document: id, text, metadata, and its language (ISO 639-1) when it names one."""

    id: str
    text: str
    metadata: dict[str, Any]
    language: str | None


@dataclass
class Reviews:
    """The documents of an input's ClaimReview records, and the records that could not be documents."""

    documents: list[ReviewDocument] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


def is_fact_check_tools(value: Any) -> bool:
    """True for an answer of Google's Fact Check Tools API (`claims:search`): `{"claims": [...]}`."""
    return isinstance(value, dict) and isinstance(value.get("claims"), list) and "@type" not in value


def holds_claim_reviews(blocks: list[Block]) -> bool:
    """True when the input is ClaimReview JSON-LD (any block holds a ClaimReview node) or a Fact Check
    Tools answer."""
    valid = [block.value for block in blocks if block.error is None]
    return any(mentions_type(value, CLAIM_REVIEW) or is_fact_check_tools(value) for value in valid)


def fact_check_tools_reviews(answer: dict[str, Any]) -> list[dict[str, Any]]:
    """A Fact Check Tools answer's reviews as ClaimReview nodes: one per review of each claim (its
    `text`, `claimant`, `claimDate`; the review's `url`, `title`, `reviewDate`, `textualRating`,
    `languageCode`, `publisher.name`)."""
    nodes = []
    for claim in answer["claims"]:
        claim = claim if isinstance(claim, dict) else {}
        reviews = claim.get("claimReview")
        for review in reviews if isinstance(reviews, list) and reviews else [{}]:
            review = review if isinstance(review, dict) else {}
            nodes.append({
                "@type": CLAIM_REVIEW, "claimReviewed": claim.get("text"), "url": review.get("url"),
                "headline": review.get("title"), "datePublished": review.get("reviewDate"),
                "author": review.get("publisher"), "inLanguage": review.get("languageCode"),
                "reviewRating": {"alternateName": review.get("textualRating")},
                "itemReviewed": {"author": claim.get("claimant"), "datePublished": claim.get("claimDate")},
            })  # fmt: skip
    return nodes


def _string(value: Any) -> str | None:
    """A value as text: a string, a number, or a node's `name` / `@id` / `url`."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return value.strip()[:MAX_STRING] or None
    if isinstance(value, dict):
        return _string(value.get("name") or value.get("url") or value.get("@id"))
    return None


def _strings(value: Any) -> list[str]:
    items = value if isinstance(value, list) else [value]
    return [text for text in (_string(item) for item in items) if text][:MAX_LIST]


def _number(value: Any) -> int | float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return value
    try:
        number = float(str(value).strip())
    except ValueError:
        return None
    return int(number) if number.is_integer() else number


def language_code(value: Any) -> str | None:
    """An `inLanguage` as ISO 639-1: `es`, `es-ES`, `pt_BR`, or a Language node's `alternateName`."""
    if isinstance(value, dict):
        value = value.get("alternateName") or value.get("name")
    if not isinstance(value, str):
        return None
    code = value.strip().replace("_", "-").split("-")[0].lower()
    return code if code in ISO_639_1 else None


def _rating(review: dict[str, Any]) -> dict[str, Any]:
    """The verdict: the first rating with a name (publishers send one rating, or an array of them)."""
    ratings = review.get("reviewRating")
    listed = [r for r in (ratings if isinstance(ratings, list) else [ratings]) if isinstance(r, dict)]
    if ratings is not None and not listed:
        raise RecordError("reviewRating", "must be a Rating object or an array of them")
    rating = next((r for r in listed if _string(r.get("alternateName"))), listed[0] if listed else {})
    found = {
        "verdict": _string(rating.get("alternateName")),
        "rating_value": _number(rating.get("ratingValue")),
        "rating_best": _number(rating.get("bestRating")),
        "rating_worst": _number(rating.get("worstRating")),
    }
    return {key: value for key, value in found.items() if value is not None}


def _claim(review: dict[str, Any]) -> dict[str, Any]:
    """What the review says of the claim: who made it, when, where it appeared."""
    item = review.get("itemReviewed")
    if item is None:
        return {}
    if not isinstance(item, dict):
        raise RecordError("itemReviewed", "must be an object (a Claim or a CreativeWork)")
    appearances = _strings(item.get("appearance"))
    found = {
        "claimant": _string(item.get("author")),
        "claim_date": _string(item.get("datePublished")),
        "first_appearance": _string(item.get("firstAppearance")),
        "appearances": appearances or None,
    }
    return {key: value for key, value in found.items() if value is not None}


def review_document(review: dict[str, Any]) -> ReviewDocument:
    """One ClaimReview node as a document (its id from its URL and claim); RecordError naming the field."""
    text = review.get("claimReviewed")
    if not isinstance(text, str) or not text.strip():
        got = "missing" if text is None else "empty" if isinstance(text, str) else f"a {type(text).__name__}"
        raise RecordError("claimReviewed", f"{got}: a ClaimReview needs the claim's text here")
    url = _string(review.get("url"))
    metadata: dict[str, Any] = {
        "title": _string(review.get("headline") or review.get("name")),
        "url": url,
        "date_published": _string(review.get("datePublished")),
        "author": ", ".join(_strings(review.get("author"))) or None,
        "in_language": _string(review.get("inLanguage")),
        **_rating(review),
        **_claim(review),
    }
    metadata = {key: value for key, value in metadata.items() if value is not None}
    return ReviewDocument("", text.strip(), metadata, language_code(review.get("inLanguage")))


def _stable_id(url: str | None, text: str, repeat: int) -> str:
    """`cr-` and 20 hex digits of the review's URL (a page's second review: with the claim's text too;
    a review without a URL: of its claim's text)."""
    key = f"url:{url}" if url and repeat == 0 else f"url:{url}\ntext:{text}" if url else f"text:{text}"
    return "cr-" + hashlib.sha256(key.encode()).hexdigest()[:20]


def read_claim_reviews(blocks: list[Block]) -> Reviews:
    """Every ClaimReview of the blocks as a document, in order, and a problem for each malformed record
    (a block that is not JSON counts as one record)."""
    found = Reviews()
    seen_urls: dict[str, int] = {}
    number = 0
    for block in blocks:
        if block.error is not None:
            number += 1
            found.problems.append(Problem(number, block.where, "json", block.error))
            continue
        value = block.value
        tools = is_fact_check_tools(value)
        try:
            reviews = fact_check_tools_reviews(value) if tools else list(nodes_of_type(value, CLAIM_REVIEW))
        except RecursionError:
            number += 1
            found.problems.append(Problem(number, block.where, "json", "nested too deeply to read"))
            continue
        for review in reviews:
            number += 1
            try:
                document = review_document(review)
            except RecordError as error:
                found.problems.append(Problem(number, block.where, error.field, error.reason))
                continue
            url = document.metadata.get("url")
            repeat = seen_urls.get(url, 0) if url else 0
            if url:
                seen_urls[url] = repeat + 1
            doc_id = _stable_id(url, document.text, repeat)
            found.documents.append(
                ReviewDocument(doc_id, document.text, document.metadata, document.language)
            )
    return found
