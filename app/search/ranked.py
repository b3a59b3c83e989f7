"""What searches answer: ranked documents, a ranking with the model and stages that made it, and
duplicate reports (records shared by rank, compare and evaluations)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from app.search.languages import QueryLanguage
from app.search.ranking_setting import RankingSetting, RerankSetting
from indexes.fusion import Hit


@dataclass(frozen=True)
class RankedItem:
    """One ranked document: id (a corpus id, or a position for inline texts), text, cosine and rank."""

    id: str | int
    text: str
    score: float
    rank: int
    metadata: dict[str, Any] | None = None
    dense_score: float | None = None  # lexical and hybrid modes: the two components of `score`
    lexical_score: float | None = None
    rerank_score: float | None = None  # a re-ranked result (the top k): the cross-encoder's score
    probability: float | None = None  # a calibrated corpus: the chance that it is the right match

    @property
    def cosine(self) -> float:
        """The document's cosine with the query (in dense mode, the score)."""
        return self.dense_score if self.dense_score is not None else self.score


@dataclass(frozen=True)
class Ranking:
    """A ranked list and the model version that produced it."""

    results: list[RankedItem]
    model: str
    ranking: RankingSetting | None = None  # corpus rankings: the mode used
    rerank: RerankSetting | None = None  # and the re-ranking stage, when one ran
    language: QueryLanguage | None = None  # corpus rankings: the language the query was analysed in


@dataclass(frozen=True)
class DuplicateMatches:
    """The corpus documents at or above the threshold for one input text."""

    text: str
    id: str | None
    duplicates: list[RankedItem]
    language: QueryLanguage | None = None  # the language the text was analysed in


@dataclass(frozen=True)
class DuplicateReport:
    """Duplicates for every input text, with the threshold used and what it was compared with."""

    results: list[DuplicateMatches]
    threshold: float
    threshold_source: str
    model: str
    ranking: RankingSetting
    threshold_on: str = "cosine"  # or "probability": a calibrated corpus decides by its match policy


def ranked_documents(
    hits: Iterable[Hit], found: Mapping[int, tuple[str, str, dict[str, Any] | None]]
) -> list[RankedItem]:
    """Hits as ranked documents, given the documents read for them (id, text, metadata by database id);
    a hit whose document was deleted meanwhile is left out and the ranks close up."""
    kept = [(h, found[h.doc_id]) for h in hits if h.doc_id in found]
    return [
        RankedItem(doc_id, text, h.score, rank, metadata, h.dense, h.lexical)
        for rank, (h, (doc_id, text, metadata)) in enumerate(kept, start=1)
    ]
