"""Tiny on-disk datasets and a fake encoder for the evaluation tests (no ../shared, no model)."""

from __future__ import annotations

import json
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

CORPUS = {
    "vc1": ("Moon landing", "The moon landing was staged in a film studio."),
    "vc2": ("", "Drinking bleach cures the coronavirus."),
    "vc3": ("Vaccines", "Vaccines cause autism in children."),
    "vc4": ("", "The earth is flat and NASA hides it."),
    "vc5": ("", "Sharks swim on flooded highways after hurricanes."),
}
QUERIES = {
    "q1": "was the moon landing staged in a studio",
    "q2": "does bleach cure the coronavirus",
    "q3": "is the earth flat",
    "q4": "a query of another split",
}


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")


def write_beir(folder: Path, qrels: dict[str, dict[str, str]], queries: dict[str, str] = QUERIES) -> Path:
    """A BEIR folder over CORPUS; `qrels` maps split -> TSV body without its header."""
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    corpus = [
        {"_id": doc_id, "text": text, **({"title": title} if title else {})}
        for doc_id, (title, text) in CORPUS.items()
    ]
    write_jsonl(folder / "corpus.jsonl", corpus)
    write_jsonl(folder / "queries.jsonl", [{"_id": qid, "text": text} for qid, text in queries.items()])
    for split, body in qrels.items():
        (folder / "qrels" / f"{split}.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(body))
    return folder


def retrieval_dataset(folder: Path) -> Path:
    """One positive per query: a retrieval set (PFCC-S-like)."""
    return write_beir(
        folder, {"dev": ["q1\tvc1\t1\n", "q2\tvc2\t1\n", "q3\tvc4\t1\n"], "train": ["q4\tvc5\t1\n"]}
    )


def rerank_dataset(folder: Path) -> Path:
    """Judged candidate lists with negatives: a re-ranking set (CQA-like)."""
    rows = ["q1\tvc1\t1\n", "q1\tvc3\t0\n", "q1\tvc5\t0\n", "q2\tvc2\t1\n", "q2\tvc4\t0\n", "q2\tvc9\t1\n"]
    return write_beir(folder, {"dev": rows})


def pairs_dataset(folder: Path, graded: bool) -> Path:
    """Pair files only (STS-b-like when graded, MRPC-like otherwise)."""
    folder.mkdir(parents=True, exist_ok=True)
    texts = [text for _, text in CORPUS.values()]
    labels = [4.5, 0.5, 2.0, 1.0, 3.2] if graded else [1, 0, 1, 0, 1]
    records = [
        {"query": texts[i], "document": texts[(i + offset) % len(texts)], "label": label}
        for i, (offset, label) in enumerate(zip([0, 1, 0, 2, 0], labels, strict=True))
    ]
    write_jsonl(folder / "dev_pairs.jsonl", records)
    return folder


class FakeEncoder:
    """Hashed bag of words, L2-normalized; records every batch it is asked to encode."""

    def __init__(self, dim: int = 64) -> None:
        self.dim = dim
        self.calls: list[list[str]] = []

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        matrix = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().replace(".", " ").split():
                matrix[row, zlib.crc32(word.encode()) % self.dim] += 1.0
        return matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
