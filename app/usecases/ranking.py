"""Ranking use cases: search a corpus, re-rank candidates or given texts, find duplicates, score pairs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from app.core.errors import InvalidInputError, NotFoundError
from app.core.limits import check_count, check_text, check_texts
from app.db.corpus_lookup import require_corpus
from app.db.repository import DocumentRepository, found_documents
from app.search.filtered import filtered_search, matching_ids, top_k
from app.search.hybrid import CANDIDATES, rerank, search_corpus
from app.search.ranking_setting import RankingRequest, RankingSetting, resolve_mode
from app.serving.context import ServiceContext
from app.stores.port import CorpusVectors
from indexes.fusion import FusedHit


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


@dataclass(frozen=True)
class Ranking:
    """A ranked list and the model version that produced it."""

    results: list[RankedItem]
    model: str
    ranking: RankingSetting | None = None  # corpus rankings: the mode used


@dataclass(frozen=True)
class DuplicateMatches:
    """The corpus documents at or above the threshold for one input text."""

    text: str
    id: str | None
    duplicates: list[RankedItem]


@dataclass(frozen=True)
class DuplicateReport:
    """Duplicates for every input text, with the threshold used."""

    results: list[DuplicateMatches]
    threshold: float
    threshold_source: str
    model: str
    ranking: RankingSetting


def order_by_score(ids: Sequence[str | int], scores: np.ndarray, k: int) -> list[tuple[str | int, float]]:
    """Top k (id, score), best first; equal scores keep request order so results are deterministic."""
    order = sorted(range(len(ids)), key=lambda i: -float(scores[i]))[:k]
    return [(ids[i], float(scores[i])) for i in order]


class RankingService:
    """Read-only use cases on the serving model and the corpus indexes."""

    def __init__(self, service: ServiceContext) -> None:
        self.service = service
        self.settings = service.settings

    def _resolve(
        self, opened: CorpusVectors, hits: Sequence[tuple[int, float]], metadata: bool = False
    ) -> list[RankedItem]:
        # Ids and texts come from the database, the source of truth; a hit deleted meanwhile is dropped.
        with self.service.sessions() as session:
            found = found_documents(session, opened.corpus_id, [doc_id for doc_id, _ in hits], metadata)
        kept = [(found[d], score) for d, score in hits if d in found]
        return [
            RankedItem(external_id, text, score, rank, meta)
            for rank, ((external_id, text, meta), score) in enumerate(kept, start=1)
        ]

    def _resolve_fused(
        self, opened: CorpusVectors, hits: Sequence[FusedHit], metadata: bool
    ) -> list[RankedItem]:
        parts = {hit.doc_id: hit for hit in hits}
        with self.service.sessions() as session:
            found = found_documents(session, opened.corpus_id, list(parts), metadata)
        kept = [parts[d] for d in parts if d in found]
        return [
            RankedItem(*found[h.doc_id][:2], h.score, rank, found[h.doc_id][2], h.dense, h.lexical)
            for rank, h in enumerate(kept, start=1)
        ]

    def _mode(self, corpus_name: str, requested: RankingRequest | None, model: str) -> RankingSetting:
        with self.service.sessions() as session:
            corpus = require_corpus(session, corpus_name)
            return resolve_mode(requested, corpus.ranking_calibration, model, corpus.default_ranking)

    def _fused_search(
        self,
        opened: CorpusVectors,
        query: str,
        vector: np.ndarray,
        k: int,
        how: RankingSetting,
        conditions: dict[str, Any] | None,
    ) -> list[FusedHit]:
        """Lexical or hybrid search of the whole corpus (or of the documents a filter admits)."""
        state, sessions = self.service.serving.state(), self.service.sessions
        pool = max(k, CANDIDATES)
        allowed: set[int] | None = None
        if conditions:
            dense_hits = filtered_search(state.store, opened, sessions, vector[None, :], pool, conditions)[0]
            allowed = set(matching_ids(sessions, opened.corpus_id, conditions))
        else:
            dense_hits = opened.search_one(vector, pool) if how.mode == "hybrid" else []
        return search_corpus(state.store, opened, query, vector, k, how, dense_hits, allowed)

    def _database_ids(self, corpus_name: str, field: str, external_ids: Sequence[str]) -> list[int]:
        with self.service.sessions() as session:
            corpus = require_corpus(session, corpus_name)
            found = DocumentRepository(session, corpus).ids_of(external_ids)
        missing = [doc_id for doc_id in external_ids if doc_id not in found]
        if missing:
            raise NotFoundError(
                f"{field}: documents not in corpus {corpus_name!r}: {missing[:10]}", field=field
            )
        return [found[doc_id] for doc_id in external_ids]

    def rank_corpus(
        self,
        corpus_name: str,
        query: str,
        k: int,
        candidates: Sequence[str] | None,
        conditions: dict[str, Any] | None = None,
        include_metadata: bool = False,
        requested: RankingRequest | None = None,
    ) -> Ranking:
        """Search the whole corpus, or rank only the given candidates; optionally only matching ones."""
        check_text(self.settings, "query", query)
        if candidates is not None:
            check_count("candidates", candidates, self.settings.max_candidates_per_request, "candidates")
        state = self.service.serving.state()
        opened = state.store.get(corpus_name)
        how = self._mode(corpus_name, requested, state.model_version)
        query_vector = state.encoder.encode([query])
        database_ids = None
        if candidates is not None:
            database_ids = self._database_ids(corpus_name, "candidates", list(dict.fromkeys(candidates)))
            if conditions:
                allowed = set(matching_ids(self.service.sessions, opened.corpus_id, conditions))
                database_ids = [d for d in database_ids if d in allowed]
        if how.mode != "dense":
            if database_ids is None:
                fused = self._fused_search(opened, query, query_vector[0], k, how, conditions)
            else:
                fused = rerank(state.store, opened, query, query_vector[0], database_ids, k, how)
            return Ranking(self._resolve_fused(opened, fused, include_metadata), state.model_version, how)
        if database_ids is not None:
            scores = state.store.vectors_of(opened, database_ids) @ query_vector[0]
            hits = top_k(database_ids, scores, k)
        elif conditions:
            sessions = self.service.sessions
            hits = filtered_search(state.store, opened, sessions, query_vector, k, conditions)[0]
        else:
            hits = opened.search_one(query_vector[0], k)
        return Ranking(self._resolve(opened, hits, include_metadata), state.model_version, how)

    def rank_texts(self, query: str, documents: Sequence[str], k: int) -> Ranking:
        """Rank texts given inline; each result's id is the text's position in the request."""
        check_text(self.settings, "query", query)
        check_count("documents", documents, self.settings.max_documents_per_request, "documents")
        check_texts(self.settings, "documents", documents)
        state = self.service.serving.state()
        vectors = state.encoder.encode([query, *documents])
        scores = vectors[1:] @ vectors[0]
        ranked = order_by_score(list(range(len(documents))), scores, k)
        items = [RankedItem(i, documents[int(i)], s, r) for r, (i, s) in enumerate(ranked, start=1)]
        return Ranking(items, state.model_version)

    def find_duplicates(
        self,
        corpus_name: str,
        inputs: Sequence[tuple[str | None, str]],
        threshold: float | None,
        k: int,
        conditions: dict[str, Any] | None = None,
        include_metadata: bool = False,
        requested: RankingRequest | None = None,
    ) -> DuplicateReport:
        """Corpus documents with cosine >= threshold for each (optional id, text); never an input's own id.

        In lexical and hybrid modes the candidates come from that ranking, in its order, and the
        threshold still applies to the cosine (it is calibrated on cosines).
        """
        check_count("texts", inputs, self.settings.max_texts_per_request, "texts")
        for position, (_, text) in enumerate(inputs):
            check_text(self.settings, f"texts[{position}]", text)
        state = self.service.serving.state()
        used, source, how = self._duplicate_settings(corpus_name, threshold, requested, state.model_version)
        opened = state.store.get(corpus_name)
        vectors = state.encoder.encode([text for _, text in inputs])
        if how.mode != "dense":
            results = []
            for (own_id, text), vector in zip(inputs, vectors, strict=True):
                fused = self._fused_search(opened, text, vector, k + 1, how, conditions)
                resolved = self._resolve_fused(
                    opened, [h for h in fused if h.dense >= used], include_metadata
                )
                kept = [item for item in resolved if item.id != own_id][:k]
                matches = [replace(item, rank=rank) for rank, item in enumerate(kept, start=1)]
                results.append(DuplicateMatches(text, own_id, matches))
            return DuplicateReport(results, used, source, state.model_version, how)
        # One extra hit per query so that excluding the input's own document still leaves k.
        if conditions:
            sessions = self.service.sessions
            all_hits = filtered_search(state.store, opened, sessions, vectors, k + 1, conditions)
        else:
            all_hits = opened.search(vectors, k + 1)
        results = []
        for (own_id, text), hits in zip(inputs, all_hits, strict=True):
            resolved = self._resolve(opened, [(d, s) for d, s in hits if s >= used], include_metadata)
            kept = [item for item in resolved if item.id != own_id][:k]
            matches = [replace(item, rank=rank) for rank, item in enumerate(kept, start=1)]
            results.append(DuplicateMatches(text, own_id, matches))
        return DuplicateReport(results, used, source, state.model_version, how)

    def _duplicate_settings(
        self, corpus_name: str, requested: float | None, requested_mode: RankingRequest | None, model: str
    ) -> tuple[float, str, RankingSetting]:
        """(threshold, its source, ranking) from one read of the corpus row."""
        with self.service.sessions() as session:
            corpus = require_corpus(session, corpus_name)
            how = resolve_mode(requested_mode, corpus.ranking_calibration, model, corpus.default_ranking)
            if requested is not None:
                return requested, "request", how
            # A calibrated threshold holds only for the model it was calibrated with.
            if corpus.duplicate_threshold is not None and corpus.threshold_model == model:
                return corpus.duplicate_threshold, "corpus", how
        return self.settings.duplicate_threshold, "default", how

    def document_texts(self, corpus_name: str, ids: Sequence[str]) -> list[tuple[str | None, str]]:
        """(id, text) of existing documents, for checking them against the rest of their corpus."""
        with self.service.sessions() as session:
            corpus = require_corpus(session, corpus_name)
            texts = DocumentRepository(session, corpus).texts(ids)
        missing = [doc_id for doc_id in ids if doc_id not in texts]
        if missing:
            raise NotFoundError(f"ids: documents not in corpus {corpus_name!r}: {missing[:10]}", field="ids")
        return [(doc_id, texts[doc_id]) for doc_id in ids]

    def similarity(self, pairs: Sequence[tuple[str, str]]) -> tuple[list[float], str]:
        """Cosine similarity of each (a, b) pair."""
        check_count("pairs", pairs, self.settings.max_pairs_per_request, "pairs")
        for position, (a, b) in enumerate(pairs):
            check_text(self.settings, f"pairs[{position}].a", a)
            check_text(self.settings, f"pairs[{position}].b", b)
        return self._pair_scores(pairs)

    def similarity_to_targets(self, source: str, targets: Sequence[str]) -> tuple[list[float], str]:
        """Cosine similarity of the source against each target."""
        check_text(self.settings, "source", source)
        check_count("targets", targets, self.settings.max_pairs_per_request, "targets")
        check_texts(self.settings, "targets", targets)
        return self._pair_scores([(source, target) for target in targets])

    def _pair_scores(self, pairs: Sequence[tuple[str, str]]) -> tuple[list[float], str]:
        if not pairs:
            raise InvalidInputError("pairs: at least one pair is required", "pairs")
        state = self.service.serving.state()
        unique = list(dict.fromkeys(text for pair in pairs for text in pair))
        position = {text: i for i, text in enumerate(unique)}
        vectors = state.encoder.encode(unique)
        scores = [float(vectors[position[a]] @ vectors[position[b]]) for a, b in pairs]
        return scores, state.model_version
