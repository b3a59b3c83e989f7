"""Labelled pairs as the trainer and the gate read them: the document resolved to its text, the label a
float, and the JSON-lines file a retraining job stages."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol


class PairRecord(Protocol):
    """A pair as stored or as sent: the document is a stored id or an inline text."""

    @property
    def query(self) -> str:
        """The query text."""

    @property
    def document_id(self) -> str | None:
        """The corpus document's id, when the document is a stored one."""

    @property
    def document(self) -> str | None:
        """The document's text, when given inline."""

    @property
    def label(self) -> float:
        """How well the document answers the query."""


@dataclass(frozen=True)
class ExportedPair:
    """A pair with its document resolved to text, ready for a training file."""

    query: str
    document: str
    label: float


def export_pairs(pairs: Sequence[PairRecord], texts: Mapping[str, str]) -> list[ExportedPair]:
    """The pairs with their documents' texts (`texts`: stored id -> text); a pair whose stored document
    is gone is left out."""
    exported = []
    for pair in pairs:
        text = pair.document if pair.document is not None else texts.get(pair.document_id or "")
        if text is not None:
            exported.append(ExportedPair(pair.query, text, float(pair.label)))
    return exported


def write_pairs(path: Path, pairs: Sequence[ExportedPair]) -> None:
    """Write pairs as JSONL ({query, document, label} per line), the trainer's input format."""
    with path.open("w", encoding="utf-8") as handle:
        for pair in pairs:
            handle.write(
                json.dumps({"query": pair.query, "document": pair.document, "label": pair.label}) + "\n"
            )


def read_pairs(path: Path) -> list[ExportedPair]:
    """Pairs written by `write_pairs`."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [ExportedPair(r["query"], r["document"], float(r["label"])) for r in rows]
