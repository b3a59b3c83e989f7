"""Judgements out (TREC qrels, the queries as JSONL, every judgement as CSV) and judged pairs in (JSONL or
CSV, checked line by line: a broken line is a 422 naming its number and field)."""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from app.core.errors import InvalidInputError
from app.core.grades import aggregate, check_grade
from app.core.limits import check_text
from app.core.text_hash import text_sha256
from app.db.corpus_lookup import require_corpus
from app.db.engine import transaction
from app.db.repositories.documents import DocumentReader
from app.db.repositories.judgements import JudgementFilter, JudgementRepository
from app.db.repositories.pairs import PairRepository
from app.serving.context import ServiceContext
from app.usecases.workbench.judgements import view
from app.usecases.workbench.judging import judge_pair
from evaluation.judgements import relevance_grade

MAX_IMPORT_LINES = 10_000
CSV_COLUMNS = ("id", "query_id", "query", "document_id", "judged_by", "grade", "unsure", "note",
               "aggregate", "disagreement", "created_at", "updated_at")  # fmt: skip


def query_id(query: str) -> str:
    """A query's id in exports: stable, no spaces (`q` and 16 hex digits of its SHA-256)."""
    return "q" + text_sha256(query)[:16]


def _trec_id(document_id: str) -> str:
    """A document id as one TREC field: whitespace percent-encoded."""
    return "".join(f"%{ord(c):02X}" if c.isspace() or c == "%" else c for c in document_id)


@dataclass(frozen=True)
class ImportedLine:
    """One judged pair of an import file, with its line number."""

    line: int
    query: str
    document_id: str
    label: float
    note: str | None


def _bad(line: int, field: str, problem: str) -> InvalidInputError:
    return InvalidInputError(f"line {line}: {field}: {problem}", field)


def _row(line: int, record: dict[str, Any]) -> ImportedLine:
    """A record of a file as a judged pair, or the 422 naming its line and field."""
    values: dict[str, str] = {}
    for field in ("query", "document_id"):
        value = record.get(field)
        if not isinstance(value, str) or not value.strip():
            raise _bad(line, field, "required, a non-blank text")
        values[field] = value
    raw = record.get("label", record.get("grade"))
    try:
        label = float(raw) if isinstance(raw, (int, float, str)) and not isinstance(raw, bool) else math.nan
    except ValueError:
        label = math.nan
    if not math.isfinite(label):
        raise _bad(line, "label", f"{raw!r} is not a number")
    note = record.get("note")
    if note is not None and not isinstance(note, str):
        raise _bad(line, "note", "a text if given")
    return ImportedLine(line, values["query"], values["document_id"], label, note or None)


def parse_import(kind: str, text: str) -> list[ImportedLine]:
    """The judged pairs of a JSONL or CSV file's text; a 422 naming the first broken line and field."""
    rows: list[ImportedLine] = []
    if kind == "jsonl":
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise _bad(number, "text", f"not JSON ({error.msg}, column {error.colno})") from None
            if not isinstance(record, dict):
                raise _bad(number, "text", "not a JSON object")
            rows.append(_row(number, record))
    else:
        reader = csv.DictReader(io.StringIO(text))
        missing = {"query", "document_id"} - set(reader.fieldnames or ())
        if missing or not {"label", "grade"} & set(reader.fieldnames or ()):
            raise _bad(1, "text", "the header must name query, document_id and label")
        for record in reader:
            rows.append(_row(reader.line_num, dict(record)))
    if not rows:
        raise InvalidInputError("text: no judged pair in the file", "text")
    if len(rows) > MAX_IMPORT_LINES:
        raise InvalidInputError(f"text: {len(rows)} lines exceed the limit of {MAX_IMPORT_LINES}", "text")
    return rows


class ExchangeService:
    """Export and import of a corpus's judgements."""

    def __init__(self, service: ServiceContext) -> None:
        self.service = service

    def export(self, name: str, kind: str) -> str:
        """The corpus's judgements as `trec` qrels, `jsonl` queries or `csv` judgement rows."""
        if kind == "csv":
            return self._csv(name)
        with self.service.sessions() as session:
            pairs = PairRepository(session, require_corpus(session, name).id).list()
        if kind == "jsonl":
            queries = dict.fromkeys(pair.query for pair in pairs)
            return "".join(json.dumps({"id": query_id(q), "text": q}) + "\n" for q in queries)
        labels: dict[tuple[str, str], list[float | None]] = {}
        for pair in pairs:
            if pair.document_id is not None:
                labels.setdefault((query_id(pair.query), _trec_id(pair.document_id)), []).append(pair.label)
        lines = []
        for (qid, docid), grades in labels.items():
            grade = aggregate(grades).grade
            if grade is not None:
                lines.append(f"{qid} 0 {docid} {relevance_grade(grade)}\n")
        return "".join(lines)

    def _csv(self, name: str) -> str:
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(CSV_COLUMNS)
        for row in self._judgements(name):
            writer.writerow([row.id, query_id(row.query), row.query, row.document_id, row.judged_by,
                             row.grade, row.unsure, row.note, row.aggregate, row.disagreement,
                             row.created_at.isoformat(),
                             row.updated_at.isoformat() if row.updated_at else ""])  # fmt: skip
        return out.getvalue()

    def _judgements(self, name: str) -> Iterator[Any]:
        after = 0
        while True:
            with self.service.sessions() as session:
                repository = JudgementRepository(session, require_corpus(session, name).id)
                rows = [view(j, p) for j, p in repository.page(JudgementFilter(), after, 1000)]
            yield from rows
            if len(rows) < 1000:
                return
            after = rows[-1].id

    def import_judgements(self, name: str, kind: str, text: str, judged_by: str) -> tuple[int, int]:
        """Store the file's judged pairs as the sender's judgements (all or nothing): (judged, pairs)."""
        rows = parse_import(kind, text)
        for row in rows:
            check_text(self.service.settings, f"line {row.line}: query", row.query)
        with transaction(self.service.sessions) as session:
            corpus = require_corpus(session, name)
            for row in rows:
                try:
                    check_grade(corpus.judgement_scale, row.label)
                except InvalidInputError as error:
                    raise _bad(row.line, "label", error.message.removeprefix("label: ")) from None
            pairs = PairRepository(session, corpus.id)
            pairs.take_writer_turn()
            found = DocumentReader(session, corpus.id).ids_of([row.document_id for row in rows])
            for row in rows:
                if row.document_id not in found:
                    raise _bad(row.line, "document_id", f"{row.document_id!r} is not in corpus {name!r}")
                judge_pair(session, corpus.id, (row.query, row.document_id), judged_by, row.label, row.note)
            return len(rows), pairs.counts()["total"]
