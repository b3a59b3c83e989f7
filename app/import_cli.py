"""`pairank import --corpus NAME FILE|BEIR_DIR`: bulk-import documents through a running service.

Streams the file to `POST /v1/corpora/{name}/imports` with the Python client (a BEIR folder's corpus.jsonl
is converted on the fly: `title` + `text` become the text, the title is kept as metadata), then follows
the job with a progress bar until it ends. The file is JSON lines of documents, or ClaimReview fact-checks
(a fact-check page, JSON-LD, a Fact Check Tools answer): the service tells which from its content. The
service does the work; this command only uploads and watches.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from pairank.client import Client, Job, JobFailedError, NotFoundError, PairankError
from pairank.client.ops.imports import import_source


def main(argv: list[str]) -> int:
    """Upload, then poll the job until it succeeds (0) or fails (1); 2 when there is nothing to upload."""
    parser = argparse.ArgumentParser(prog="pairank import", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "source",
        type=Path,
        help="a JSON-lines file ({id, text, metadata?, language?}), a BEIR folder, or ClaimReview: a "
        "fact-check page (.html), JSON-LD (.json, .jsonl) or a Fact Check Tools answer",
    )
    parser.add_argument("--corpus", required=True, help="target corpus (created when --kind is given)")
    parser.add_argument(
        "--kind", choices=("claim", "answer", "question"), help="create the corpus if missing"
    )
    parser.add_argument(
        "--language", help="with --kind: the new corpus's language (ISO 639-1, or multi; default en)"
    )
    parser.add_argument(
        "--on-error",
        choices=("refuse", "skip"),
        default="refuse",
        help="a malformed record: refuse the import (nothing written), or skip it (listed at the end)",
    )
    parser.add_argument("--url", default="http://127.0.0.1:8000", help="the service (default %(default)s)")
    parser.add_argument(
        "--api-key",
        default=os.environ.get("PAIRANK_API_KEY"),
        help="a write key, sent as `Authorization: Bearer` (default: $PAIRANK_API_KEY)",
    )
    args = parser.parse_args(argv)
    try:
        body = import_source(args.source)
    except FileNotFoundError as missing:
        print(f"pairank import: {missing}", file=sys.stderr)
        return 2
    with Client(args.url, api_key=args.api_key, timeout=600) as client:
        try:
            if args.kind:
                try:
                    client.get_corpus(args.corpus)
                except NotFoundError:
                    client.create_corpus(args.corpus, args.kind, language=args.language)
            job = client.import_file(args.corpus, args.source if args.source.is_file() else body,
                                     on_error=args.on_error)  # fmt: skip
        except PairankError as error:
            print(f"pairank import: {error}", file=sys.stderr)
            return 1
        return follow(job, args.corpus)


def follow(job: Job, corpus: str) -> int:
    """Show the job's progress until it ends; 0 when it succeeded."""
    try:
        record = job.wait(progress=True)
    except JobFailedError as failed:
        print(f"pairank import: job {job.id} {failed.record.status}: {failed.record.error}", file=sys.stderr)
        return 1
    except PairankError as error:  # the service stopped answering while the job ran
        print(f"pairank import: job {job.id}: {error}", file=sys.stderr)
        return 1
    progress = record.progress or {}
    counts = {key: progress.get(key, 0) for key in ("inserted", "updated", "unchanged")}
    kind = "fact-checks" if progress.get("format") == "claimreview" else "documents"
    print(f"imported {progress.get('done', 0)} {kind} into {corpus}: {counts} (job {job.id})")
    for problem in progress.get("problems", []):
        where = problem.get("where") or problem.get("id")
        print(
            f"skipped record {problem.get('record', '?')} ({where}): {problem['field']}: {problem['error']}"
        )
    return 0
