"""Labelled pairs -> relevance judgements: the one rule the trainer's dev evaluator and the gate share.

A pair (query, document, label) judges the document for the query. The label becomes a trec_eval grade
by `relevance_grade` (rounded half up, never below 0: labels in [0, 1] give 0 or 1, graded labels keep
their grade), so a 0.3 "weakly related" label is not relevant anywhere and a 2 ("perfect match") stays
a 2 for nDCG. Pairs with a not-relevant judgement are a re-ranking set (each query's own candidates,
answers to a thread); positives only are a retrieval set (rank against every document).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal, Protocol

from evaluation.datasets import BeirDataset

__all__ = ["JudgedPair", "judge_pairs", "pair_task", "relevance_grade", "write_beir"]


class JudgedPair(Protocol):
    """Anything with a query, a document and a numeric label (LabeledPair, an exported pair)."""

    @property
    def query(self) -> str: ...

    @property
    def document(self) -> str: ...

    @property
    def label(self) -> float: ...


def relevance_grade(label: float) -> int:
    """The trec_eval grade of a pair's label: rounded half up, and 0 for anything below 0.5."""
    return max(0, math.floor(label + 0.5))


def pair_task(pairs: Sequence[JudgedPair]) -> Literal["retrieval", "rerank"]:
    """`rerank` when some pair judges its document not relevant, else `retrieval`."""
    return "rerank" if any(relevance_grade(p.label) == 0 for p in pairs) else "retrieval"


def _fresh_id(prefix: str, taken: Mapping[str, object] | set[str], start: int) -> str:
    """`prefix<n>` for the first n >= start not already taken (corpus ids may look like ours)."""
    n = start
    while f"{prefix}{n}" in taken:
        n += 1
    return f"{prefix}{n}"


def judge_pairs(
    pairs: Sequence[JudgedPair],
    corpus: Mapping[str, str] | None = None,
    *,
    name: str = "pairs",
    split: str = "dev",
) -> BeirDataset:
    """Queries, documents and qrels from pairs; a repeated (query, document) keeps its highest grade.

    `corpus` (id -> text) joins the documents with its own ids, so retrieval ranks every corpus
    document; a paired document whose text is in it is judged under that id, any other gets a new one.
    """
    documents: dict[str, str] = dict(corpus or {})
    id_of_text = {text: doc_id for doc_id, text in documents.items()}
    query_ids: dict[str, str] = {}
    qrels: dict[str, dict[str, int]] = {}
    for pair in pairs:
        query_id = query_ids.get(pair.query)
        if query_id is None:
            query_id = query_ids[pair.query] = f"pair-q{len(query_ids)}"
        doc_id = id_of_text.get(pair.document)
        if doc_id is None:
            doc_id = _fresh_id("pair-d", documents, len(id_of_text))
            id_of_text[pair.document] = doc_id
            documents[doc_id] = pair.document
        grade = relevance_grade(pair.label)
        judged = qrels.setdefault(query_id, {})
        judged[doc_id] = max(grade, judged.get(doc_id, grade))
    return BeirDataset(
        corpus=documents,
        queries={query_id: text for text, query_id in query_ids.items()},
        qrels=qrels,
        name=name,
        split=split,
    )


def write_beir(dataset: BeirDataset, folder: Path) -> Path:
    """Write a dataset as a BEIR folder (corpus.jsonl, queries.jsonl, qrels/<split>.tsv) for `load_beir`."""
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    for file_name, texts in (("corpus.jsonl", dataset.corpus), ("queries.jsonl", dataset.queries)):
        with (folder / file_name).open("w", encoding="utf-8") as handle:
            for record_id, text in texts.items():
                handle.write(json.dumps({"_id": record_id, "text": text}, ensure_ascii=False) + "\n")
    with (folder / "qrels" / f"{dataset.split}.tsv").open("w", encoding="utf-8") as handle:
        handle.write("query-id\tcorpus-id\tscore\n")
        for query_id, judged in dataset.qrels.items():
            for doc_id, grade in judged.items():
                handle.write(f"{query_id}\t{doc_id}\t{grade}\n")
    return folder
