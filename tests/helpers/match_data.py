"""A claim corpus for match decisions: 60 dated claims (one stored twice) and 40 judged questions, each
sharing words with its claim, with one judged-irrelevant claim each (enough to calibrate)."""

from __future__ import annotations

import random
from typing import Any

TOPICS = ["vaccines", "bananas", "towers", "elections", "sharks", "bleach", "masks", "gold", "water", "eggs"]
PLACES = ["Kenya", "Brazil", "Texas", "Paris", "Manila", "Lagos", "Ohio", "Lima", "Delhi", "Oslo"]
ACTORS = ["minister", "celebrity", "doctor", "farmer", "teacher", "senator"]


def claims() -> list[dict[str, Any]]:
    """60 claims with a `published` date and a `year`, and one stored twice (other quote marks)."""
    rng = random.Random(3)
    docs = []
    for i in range(60):
        text = (
            f"The {rng.choice(ACTORS)} said {TOPICS[i % 10]} were banned in {PLACES[i // 6]} in {1990 + i}."
        )
        published = f"20{10 + i % 15:02d}-0{1 + i % 9}-15"
        docs.append({"id": f"c{i:02d}", "text": text, "metadata": {"published": published, "year": 1990 + i}})
    docs.append({"id": "c60", "text": docs[7]["text"].replace("said", "\u201csaid\u201d"),
                 "metadata": {"published": "2024-01-01", "year": 1997}})  # fmt: skip
    return docs


def judged_pairs(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """40 judged queries: a word-sharing question about claim i (relevant) and claim i+11 (not)."""
    pairs: list[dict[str, Any]] = []
    for i in range(40):
        doc = docs[i]
        words = doc["text"].split()
        pairs.append({"query": f"were {words[3]} banned in {words[7]} in {words[9].rstrip('.')}?",
                      "document_id": doc["id"], "label": 1})  # fmt: skip
        pairs.append({"query": pairs[-1]["query"], "document_id": docs[(i + 11) % 60]["id"], "label": 0})
    return pairs
