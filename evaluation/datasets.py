"""Load evaluation data: BEIR-layout folders and `*_pairs.jsonl` pair files.

BEIR layout (as in `../shared/data/`): `corpus.jsonl` (`_id`, `text`, optional `title`), `queries.jsonl`
(`_id`, `text`) and `qrels/<split>.tsv` (`query-id<TAB>corpus-id<TAB>score`, TREC qrels also accepted).
A document's text is `title + " " + text` when it has a title, as BEIR's own evaluation does.
Pair files hold one `{"query", "document", "label"}` object per line.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaluation.trec_io import read_qrels

# ANTIQUE keeps its official 1-4 grades; its README (and the BSC paper) count 3-4 as relevant.
_DEFAULT_RELEVANCE_LEVELS = {"antique": 3}


@dataclass(frozen=True)
class BeirDataset:
    """A labeled ranking set: the whole corpus, the split's queries and their judgments."""

    corpus: dict[str, str]
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]
    name: str = ""
    split: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class LabeledPair:
    """Two texts and their gold label (0/1 relevance or a graded similarity)."""

    query: str
    document: str
    label: float


def _read_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (line number, object) for each non-blank line; ValueError with file:line when malformed."""
    with path.open(encoding="utf-8") as handle:
        for line_number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise ValueError(f"{path}:{line_number}: invalid JSON: {error.msg}") from None
            if not isinstance(record, dict):
                raise ValueError(f"{path}:{line_number}: expected a JSON object")
            yield line_number, record


def _required_text(record: dict[str, Any], key: str, path: Path, line_number: int) -> str:
    """The string field `key`, or a ValueError naming the file, line and field."""
    value = record.get(key)
    if not isinstance(value, str):
        raise ValueError(f"{path}:{line_number}: field {key!r} must be a string")
    return value


def read_texts(path: Path, *, with_title: bool = False) -> dict[str, str]:
    """Read a BEIR `corpus.jsonl` or `queries.jsonl` into {id: text}, prefixing titles if asked."""
    texts: dict[str, str] = {}
    for line_number, record in _read_jsonl(path):
        record_id = record.get("_id")
        if not isinstance(record_id, str | int) or str(record_id) == "":
            raise ValueError(f"{path}:{line_number}: field '_id' must be a non-empty string")
        text = _required_text(record, "text", path, line_number)
        title = record.get("title")
        if with_title and isinstance(title, str) and title.strip():
            text = f"{title.strip()} {text}"
        texts[str(record_id)] = text
    return texts


def qrels_path(folder: Path, split: str) -> Path:
    """The qrels file of a split: `qrels/<split>.tsv` (or `.txt`/`.qrels` TREC files)."""
    for suffix in (".tsv", ".txt", ".qrels"):
        candidate = folder / "qrels" / f"{split}{suffix}"
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(f"no qrels for split {split!r} in {folder / 'qrels'}")


def load_beir(folder: str | Path, split: str, *, with_titles: bool = True) -> BeirDataset:
    """Load a BEIR-layout folder; queries are those judged in the split (all must have a text)."""
    folder = Path(folder)
    qrels = read_qrels(qrels_path(folder, split))
    all_queries = read_texts(folder / "queries.jsonl")
    missing = [query_id for query_id in qrels if query_id not in all_queries]
    if missing:
        raise ValueError(
            f"{len(missing)} queries of {folder}/qrels/{split} have no text in queries.jsonl, "
            f"e.g. {missing[:5]}"
        )
    corpus = read_texts(folder / "corpus.jsonl", with_title=with_titles)
    # A judged document without text stays in the qrels: it is relevant but can never be retrieved,
    # exactly as trec_eval treats a relevant document missing from a run.
    missing_docs = sum(1 for judgments in qrels.values() for doc_id in judgments if doc_id not in corpus)
    return BeirDataset(
        corpus=corpus,
        queries={query_id: all_queries[query_id] for query_id in qrels},
        qrels=qrels,
        name=folder.name,
        split=split,
        metadata={"judged_documents_without_text": missing_docs},
    )


def pairs_path(folder: str | Path, split: str) -> Path | None:
    """`<split>_pairs.jsonl` in the folder, or None."""
    candidate = Path(folder) / f"{split}_pairs.jsonl"
    return candidate if candidate.is_file() else None


def load_pairs(path: str | Path) -> list[LabeledPair]:
    """Read a `*_pairs.jsonl` file into LabeledPairs (label: a number or a boolean)."""
    path = Path(path)
    pairs: list[LabeledPair] = []
    for line_number, record in _read_jsonl(path):
        label = record.get("label")
        if not isinstance(label, int | float):  # bool is an int, so true/false labels pass too
            raise ValueError(f"{path}:{line_number}: field 'label' must be a number")
        query = _required_text(record, "query", path, line_number)
        document = _required_text(record, "document", path, line_number)
        pairs.append(LabeledPair(query, document, float(label)))
    return pairs


def default_relevance_level(folder: str | Path) -> int:
    """The relevance level a dataset is scored with: 3 for ANTIQUE (grades 1-4), else 1."""
    return _DEFAULT_RELEVANCE_LEVELS.get(Path(folder).resolve().name.lower(), 1)


def infer_task(folder: str | Path, split: str) -> str:
    """Guess how a split is evaluated: `pairs`, `rerank` or `retrieval` (rules in the body)."""
    folder = Path(folder)
    has_pairs = pairs_path(folder, split) is not None
    try:
        qrels = read_qrels(qrels_path(folder, split))
    except FileNotFoundError:
        if has_pairs:
            return "pairs"
        raise
    except ValueError:
        # Non-integer grades are similarity scores (STS-b), not relevance judgments.
        if has_pairs:
            return "pairs"
        raise
    judged = sum(len(judgments) for judgments in qrels.values())
    one_per_query = judged == len(qrels)
    has_negatives = any(grade <= 0 for judgments in qrels.values() for grade in judgments.values())
    # A lone candidate judged non-relevant cannot be ranked: these are classification pairs (MRPC).
    if has_pairs and one_per_query and has_negatives:
        return "pairs"
    # Judged candidate lists (CQA: 10 per query, ANTIQUE: ~12) are re-ranked; a query with about one
    # judged positive (PFCC-S) is a retrieval query against the whole corpus.
    return "rerank" if judged >= 2 * len(qrels) else "retrieval"


def infer_pair_task(pairs: list[LabeledPair]) -> str:
    """`f1` when every label is 0 or 1, else `spearman` (graded similarity)."""
    return "f1" if all(pair.label in (0.0, 1.0) for pair in pairs) else "spearman"
