"""Read and write qrels and runs, as BEIR-style TSV or TREC text, with the format detected from content.

* TSV: a header `query-id<TAB>corpus-id<TAB>score`, then one tab-separated row per judgment or result.
  Ids may contain spaces; only tabs separate fields.
* TREC qrels: `qid iter docid rel` (4 whitespace-separated fields, `iter` ignored).
* TREC run: `qid Q0 docid rank score tag` (6 fields); as in trec_eval the rank column is ignored and the
  score alone orders the documents.

Blank lines are skipped. A malformed line raises ValueError naming the file and the line number, and so
does a repeated (query, document) pair, which trec_eval also refuses.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TypeVar

TSV_HEADER = ("query-id", "corpus-id", "score")
Value = TypeVar("Value", int, float)


def _parse_grade(text: str) -> int:
    """An integer grade; `1.0` is accepted (some BEIR exports write floats), `0.5` is not."""
    try:
        return int(text)
    except ValueError:
        number = float(text)  # raises ValueError for non-numbers, reported with the line by the caller
        if not number.is_integer():
            raise ValueError(f"relevance grade must be an integer, got {text!r}") from None
        return int(number)


def _parse_score(text: str) -> float:
    """A run score: any float but NaN, which cannot be ranked."""
    score = float(text)
    if math.isnan(score):
        raise ValueError("score is NaN")
    return score


def _format_value(value: float) -> str:
    """Integers as written, floats (numpy ones too) in their shortest round-tripping form."""
    return str(value) if isinstance(value, int) else repr(float(value))


def _read(
    path: str | Path, kind: str, trec_fields: int, value_index: int, parse: Callable[[str], Value]
) -> dict[str, dict[str, Value]]:
    """Shared reader: detect the format from the first non-blank line, then parse every line."""
    path = Path(path)
    table: dict[str, dict[str, Value]] = {}
    is_tsv: bool | None = None
    with path.open(encoding="utf-8") as handle:
        for line_number, raw_line in enumerate(handle, start=1):
            line = raw_line.rstrip("\r\n")
            if not line.strip():
                continue
            if is_tsv is None:
                is_tsv = tuple(field.strip().lower() for field in line.split("\t")) == TSV_HEADER
                if is_tsv:
                    continue
            fields = line.split("\t") if is_tsv else line.split()
            expected = 3 if is_tsv else trec_fields
            if len(fields) != expected:
                if is_tsv:
                    layout = "query-id<TAB>corpus-id<TAB>score"
                else:
                    trec_layout = "qid iter docid rel" if trec_fields == 4 else "qid Q0 docid rank score tag"
                    layout = f"TREC {trec_layout}, or TSV after a query-id<TAB>corpus-id<TAB>score header"
                raise ValueError(
                    f"{path}:{line_number}: malformed {kind} line: expected {expected} fields ({layout}), "
                    f"found {len(fields)}"
                )
            query_id, doc_id, value_text = (
                (fields[0], fields[1], fields[2]) if is_tsv else (fields[0], fields[2], fields[value_index])
            )
            if not query_id or not doc_id:
                raise ValueError(f"{path}:{line_number}: empty query or document id in {kind} line")
            try:
                value = parse(value_text.strip())
            except ValueError as error:
                raise ValueError(f"{path}:{line_number}: bad {kind} value {value_text!r}: {error}") from None
            documents = table.setdefault(query_id, {})
            if doc_id in documents:
                raise ValueError(
                    f"{path}:{line_number}: duplicate {kind} entry for query {query_id!r}, "
                    f"document {doc_id!r}"
                )
            documents[doc_id] = value
    return table


def read_qrels(path: str | Path) -> dict[str, dict[str, int]]:
    """Read qrels ({query: {doc: grade}}) from TSV-with-header or TREC `qid iter docid rel` lines."""
    return _read(path, "qrels", 4, 3, _parse_grade)


def read_run(path: str | Path) -> dict[str, dict[str, float]]:
    """Read a run ({query: {doc: score}}) from TSV-with-header or TREC `qid Q0 docid rank score tag` lines."""
    return _read(path, "run", 6, 4, _parse_score)


def write_qrels_trec(qrels: Mapping[str, Mapping[str, int]], path: str | Path) -> None:
    """Write qrels in TREC format (`qid 0 docid rel`)."""
    with Path(path).open("w", encoding="utf-8") as handle:
        for query_id, judgments in qrels.items():
            for doc_id, grade in judgments.items():
                handle.write(f"{query_id} 0 {doc_id} {grade}\n")


def write_run_trec(run: Mapping[str, Mapping[str, float]], path: str | Path, tag: str = "pairank") -> None:
    """Write a run in TREC format (`qid Q0 docid rank score tag`), ranked as trec_eval would rank it."""
    from evaluation.metrics import rank_documents

    with Path(path).open("w", encoding="utf-8") as handle:
        for query_id, scores in run.items():
            for rank, doc_id in enumerate(rank_documents(scores), start=1):
                handle.write(f"{query_id} Q0 {doc_id} {rank} {_format_value(scores[doc_id])} {tag}\n")


def write_tsv(table: Mapping[str, Mapping[str, float]], path: str | Path) -> None:
    """Write qrels or a run as TSV with the `query-id<TAB>corpus-id<TAB>score` header."""
    with Path(path).open("w", encoding="utf-8") as handle:
        handle.write("\t".join(TSV_HEADER) + "\n")
        for query_id, values in table.items():
            for doc_id, value in values.items():
                handle.write(f"{query_id}\t{doc_id}\t{_format_value(value)}\n")
