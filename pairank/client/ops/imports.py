"""Bulk imports: a JSON-lines file, a BEIR folder or ClaimReview fact-checks (a page, JSON-LD, a Fact
Check Tools answer) streamed to `POST /v1/corpora/{name}/imports`."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path

from app.schemas.admin import JobOut
from pairank.client.calls import Call, Exchange, Steps, reads
from pairank.client.ops import segment

CHUNK_BYTES = 1 << 20
SNIFF_BYTES = 1 << 16
_JSON_LD_MARKS = (b'"@type"', b'"@graph"', b'"@context"')


def content_type(head: bytes) -> str:
    """The media type of an upload from its first bytes: a page, JSON-LD, or JSON lines of documents (the
    service tells the format from the content again; this only labels it)."""
    start = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if start.startswith(b"<"):
        return "text/html"
    if start.startswith(b"[") or any(mark in head for mark in _JSON_LD_MARKS):
        return "application/ld+json"
    return "application/x-ndjson"


def beir_lines(corpus: Path) -> Iterator[bytes]:
    """A BEIR corpus.jsonl as import lines: `title` + `text` the text, the title kept as metadata."""
    with corpus.open(encoding="utf-8") as handle:
        for line in handle:
            if not line.strip():
                continue
            row = json.loads(line)
            title = str(row.get("title") or "").strip()
            text = f"{title} {row['text']}".strip() if title else row["text"]
            document = {"id": str(row["_id"]), "text": text, "metadata": {"title": title} if title else None}
            yield (json.dumps(document, ensure_ascii=False) + "\n").encode()


def _file_chunks(path: Path) -> Iterator[bytes]:
    with path.open("rb") as handle:
        while chunk := handle.read(CHUNK_BYTES):
            yield chunk


def import_source(source: str | Path) -> Iterator[bytes]:
    """The bytes to upload for a JSON-lines file (`{"id", "text", "metadata"?}` per line) or a BEIR folder
    (its corpus.jsonl converted); FileNotFoundError at once when there is nothing to read."""
    path = Path(source)
    if path.is_dir():
        if not (path / "corpus.jsonl").is_file():
            raise FileNotFoundError(f"{path} has no corpus.jsonl")
        return beir_lines(path / "corpus.jsonl")
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist")
    return _file_chunks(path)


def _head(source: str | Path | bytes | Iterable[bytes]) -> bytes:
    if isinstance(source, bytes):
        return source[:SNIFF_BYTES]
    if isinstance(source, str | Path) and Path(source).is_file():
        with Path(source).open("rb") as handle:
            return handle.read(SNIFF_BYTES)
    return b""  # a BEIR folder (converted to JSON lines) or chunks: JSON lines unless told otherwise


def import_file(
    corpus: str, source: str | Path | bytes | Iterable[bytes], *, on_error: str | None = None
) -> Steps[JobOut]:
    """Upload documents for a bulk import job (a JSON-lines file, a BEIR folder, ClaimReview fact-checks:
    a page, JSON-LD or a Fact Check Tools answer; bytes or an iterable of byte chunks), streamed; the job
    validates every record before it writes anything, and `on_error="skip"` leaves malformed ones out
    (listed in its progress). Not retried: each upload is a new job."""
    head = _head(source)
    content = import_source(source) if isinstance(source, str | Path) else source
    exchange = Exchange(
        "POST",
        f"/v1/corpora/{segment(corpus)}/imports",
        params={"on_error": on_error} if on_error is not None else None,
        content=content,
        headers={"content-type": content_type(head)},
    )
    return (yield Call(exchange, reads(JobOut), idempotent=False))
