"""`pairank import --corpus NAME FILE.jsonl|BEIR_DIR`: bulk-import documents through a running service.

Streams the file to `POST /v1/corpora/{name}/imports` (a BEIR folder's corpus.jsonl is converted on
the fly: `title` + `text` become the text, the title is kept as metadata), then follows the job with a
progress bar until it ends. The service does the work; this command only uploads and watches.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
from tqdm.auto import tqdm


def beir_lines(corpus: Path) -> Iterator[bytes]:
    """A BEIR corpus.jsonl as import lines: {"id", "text", "metadata": {"title"}}."""
    with corpus.open(encoding="utf-8") as handle:
        for line in handle:
            if not line.strip():
                continue
            row = json.loads(line)
            title = str(row.get("title") or "").strip()
            text = f"{title} {row['text']}".strip() if title else row["text"]
            document = {"id": str(row["_id"]), "text": text, "metadata": {"title": title} if title else None}
            yield (json.dumps(document, ensure_ascii=False) + "\n").encode()


def file_lines(path: Path) -> Iterator[bytes]:
    """An import file as it is, in 1 MiB chunks."""
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            yield chunk


def main(argv: list[str]) -> int:
    """Upload, then poll the job until it succeeds (0) or fails (1)."""
    parser = argparse.ArgumentParser(prog="pairank import", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "source", type=Path, help="a JSON-lines file ({id, text, metadata?}) or a BEIR folder"
    )
    parser.add_argument("--corpus", required=True, help="target corpus (created when --kind is given)")
    parser.add_argument(
        "--kind", choices=("claim", "answer", "question"), help="create the corpus if missing"
    )
    parser.add_argument("--url", default="http://127.0.0.1:8000", help="the service (default %(default)s)")
    parser.add_argument(
        "--api-key",
        default=os.environ.get("PAIRANK_API_KEY"),
        help="a write key, sent as `Authorization: Bearer` (default: $PAIRANK_API_KEY)",
    )
    args = parser.parse_args(argv)
    if args.source.is_dir():
        corpus_file = args.source / "corpus.jsonl"
        if not corpus_file.is_file():
            print(f"pairank import: {args.source} has no corpus.jsonl", file=sys.stderr)
            return 2
        body: Iterator[bytes] = beir_lines(corpus_file)
    elif args.source.is_file():
        body = file_lines(args.source)
    else:
        print(f"pairank import: {args.source} does not exist", file=sys.stderr)
        return 2
    headers = {"Authorization": f"Bearer {args.api_key}"} if args.api_key else {}
    with httpx.Client(base_url=args.url, headers=headers, timeout=600) as http:
        if args.kind and http.get(f"/v1/corpora/{args.corpus}").status_code == 404:
            http.post("/v1/corpora", json={"name": args.corpus, "kind": args.kind}).raise_for_status()
        started = http.post(
            f"/v1/corpora/{args.corpus}/imports",
            content=body,
            headers={"content-type": "application/x-ndjson"},
        )
        if started.status_code != 202:
            print(f"pairank import: {started.status_code} {started.text}", file=sys.stderr)
            return 1
        return follow(http, args.corpus, started.json()["id"])


def follow(http: httpx.Client, corpus: str, job_id: str) -> int:
    """Show the job's progress until it ends; 0 when it succeeded."""
    with tqdm(desc=f"import into {corpus}", unit="doc") as bar:
        while True:
            job = http.get(f"/v1/corpora/{corpus}/imports/{job_id}").json()
            progress = job.get("progress") or {}
            bar.total = progress.get("total")
            bar.n = progress.get("done", 0)
            bar.refresh()
            if job["status"] not in ("queued", "running"):
                break
            time.sleep(0.5)
    counts = {key: progress.get(key, 0) for key in ("inserted", "updated", "unchanged")}
    if job["status"] != "succeeded":
        print(f"pairank import: job {job_id} {job['status']}: {job['error']}", file=sys.stderr)
        return 1
    print(f"imported {progress.get('done', 0)} documents into {corpus}: {counts} (job {job_id})")
    return 0
