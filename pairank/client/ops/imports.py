"""Bulk imports: a JSON-lines file or a BEIR folder streamed to `POST /v1/corpora/{name}/imports`."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path

from app.schemas.admin import JobOut
from pairank.client.calls import Call, Exchange, Steps, reads
from pairank.client.ops import segment

CHUNK_BYTES = 1 << 20


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


def import_file(corpus: str, source: str | Path | bytes | Iterable[bytes]) -> Steps[JobOut]:
    """Upload documents for a bulk import job (a JSON-lines file, a BEIR folder, bytes or an iterable of
    byte chunks), streamed; the job validates every line before it writes anything. Not retried: each
    upload is a new job."""
    content = import_source(source) if isinstance(source, str | Path) else source
    exchange = Exchange(
        "POST",
        f"/v1/corpora/{segment(corpus)}/imports",
        content=content,
        headers={"content-type": "application/x-ndjson"},
    )
    return (yield Call(exchange, reads(JobOut), idempotent=False))
