"""An import's upload read as documents: its format told from the content, each record validated.

A page, a JSON document or JSON lines holding ClaimReview JSON-LD (or an answer of Google's Fact Check
Tools) is read as fact-checks (app/core/claimreview.py); anything else as one document per line
(`{"id", "text", "metadata"?, "language"?}`). A malformed record is named by its place and field:
`line 3: text: ...`, `record 4 (script 2): claimReviewed: ...`. The import job refuses them all, or
leaves them out (`on_error=skip`) and lists them in its progress.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from app.core.claimreview import holds_claim_reviews, read_claim_reviews
from app.core.errors import InvalidInputError
from app.core.jsonld import Block, is_html, read_blocks
from app.schemas.corpora import DocumentIn
from app.schemas.json_safety import check_body
from indexes.languages import MULTI

Row = tuple[str, str, dict[str, Any] | None, bool]  # id, text, metadata, metadata given
VALIDATE_STEP = 500  # lines validated between two chances to yield
SNIFF_BYTES = 1 << 16
_JSON_LD_MARKS = ('"@type"', '"@graph"', '"@context"', '"claims"')


@dataclass
class Records:
    """An upload read: its format, the documents to write with their own languages, and the malformed
    records (a message naming each, and the record as the job's progress lists it)."""

    format: str
    rows: list[Row] = field(default_factory=list)
    languages: list[str | None] = field(default_factory=list)
    problems: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


class _RecordError(Exception):
    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field, self.reason = field, reason


def _may_be_json_ld(head: str) -> bool:
    """Whether the upload's start may be JSON-LD or a Fact Check Tools answer (read whole to tell), rather
    than JSON lines of documents (read line by line)."""
    return head.lstrip("\ufeff \t\r\n").startswith("[") or any(mark in head for mark in _JSON_LD_MARKS)


def read_records(path: Path, corpus_language: str, skip: bool, pause: Callable[[float], None]) -> Records:
    """The upload's documents; with `skip` false, InvalidInputError at the first malformed line (JSON
    lines) — ClaimReview problems are all collected, for the caller to refuse or list. `pause(started)`
    is called between steps (an import yields to queries)."""
    with path.open("rb") as handle:
        head = handle.read(SNIFF_BYTES).decode("utf-8", errors="replace")
    if is_html(head) or _may_be_json_ld(head):
        text = path.read_text(encoding="utf-8", errors="replace")
        blocks = read_blocks(text)
        if is_html(text) or holds_claim_reviews(blocks):
            return _claim_reviews(blocks, corpus_language == MULTI)
    return _documents(path, corpus_language, skip, pause)


def _claim_reviews(blocks: list[Block], multi: bool) -> Records:
    found = read_claim_reviews(blocks)
    records = Records("claimreview", problems=[(p.describe(), p.as_dict()) for p in found.problems])
    for document in found.documents:
        try:  # the limits every document meets (a text's length, metadata's shape)
            DocumentIn.model_validate(
                {"id": document.id, "text": document.text, "metadata": document.metadata}
            )
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            name = "claimReviewed" if where == "text" else where
            message = f"review {document.metadata.get('url') or document.id}: {name}: {first['msg']}"
            records.problems.append((message, {"id": document.id, "field": name, "error": first["msg"]}))
            continue
        records.rows.append((document.id, document.text, document.metadata, True))
        # A corpus of one language keeps a review's `inLanguage` in its metadata only.
        records.languages.append(document.language if multi else None)
    return records


def _document(raw: bytes, corpus_language: str) -> DocumentIn:
    problem = check_body(raw)
    if problem is not None:
        raise _RecordError(problem[0], problem[1])
    try:
        document = DocumentIn.model_validate(json.loads(raw))
    except ValidationError as error:
        first = error.errors()[0]
        raise _RecordError(".".join(str(p) for p in first["loc"]) or "line", first["msg"]) from error
    if corpus_language != MULTI and document.language not in (None, corpus_language):
        reason = (
            f"the corpus is in {corpus_language!r}, not {document.language!r} (a 'multi' corpus takes both)"
        )
        raise _RecordError("language", reason)
    return document


def _documents(path: Path, corpus_language: str, skip: bool, pause: Callable[[float], None]) -> Records:
    records = Records("documents")
    step_started = time.monotonic()
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if number % VALIDATE_STEP == 0:
                pause(step_started)
                step_started = time.monotonic()
            if not raw.strip():
                continue
            try:
                document = _document(raw, corpus_language)
            except _RecordError as error:
                message = f"line {number}: {error.field}: {error.reason}"
                if not skip:
                    raise InvalidInputError(message, "body") from error
                listed = {
                    "record": number,
                    "where": f"line {number}",
                    "field": error.field,
                    "error": error.reason,
                }
                records.problems.append((message, listed))
                continue
            given = "metadata" in document.model_fields_set
            records.rows.append((document.id, document.text, document.metadata, given))
            records.languages.append(document.language)
    return records
