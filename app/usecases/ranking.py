"""Ranking use cases: search a corpus, re-rank candidates or given texts, find duplicates, score pairs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from app.core.errors import InvalidInputError, NotFoundError
from app.core.limits import check_count, check_text, check_texts
from app.db.corpus_lookup import require_corpus, require_documents
from app.db.repositories.documents import DocumentRepository, found_documents
from app.observability.timing import stage
from app.search.decisions import Decider
from app.search.filtered import matching_ids
from app.search.first_stage import LiveCorpus
from app.search.ranked import DuplicateMatches, DuplicateReport, RankedItem, Ranking, ranked_documents
from app.search.ranking_setting import RankingRequest, RankingSetting, RerankSetting, served_setting
from app.serving.context import ServiceContext
from app.serving.state import ServingState
from app.stores.port import CorpusVectors
from app.usecases.reranking import first_stage_depth, rerank_stage, reranked
from evaluation.decisions import DECISION_DEPTH
from indexes.first_stage import Hit, gather, given, rank_pool, sides_of


def order_by_score(ids: Sequence[str | int], scores: np.ndarray, k: int) -> list[tuple[str | int, float]]:
    """Top k (id, score), best first; equal scores keep request order so results are deterministic."""
    order = sorted(range(len(ids)), key=lambda i: -float(scores[i]))[:k]
    return [(ids[i], float(scores[i])) for i in order]


class RankingService:
    """Read-only use cases on the serving model and the corpus indexes.

    A request reads the serving state once (a model swap meanwhile never mixes two models in one
    answer) and the database once when nothing else is asked (resolving the hits to documents): the
    corpus's rankings come from its opened index, a filter is evaluated once, and the hits of every
    input text are resolved together. Every corpus list comes from the one first stage
    (indexes/first_stage.py), as evaluations, comparisons, calibrations and the gate score it.
    """

    def __init__(self, service: ServiceContext) -> None:
        self.service = service
        self.settings = service.settings

    def _resolve_many(
        self, opened: CorpusVectors, hit_lists: Sequence[Sequence[Hit]], metadata: bool
    ) -> list[list[RankedItem]]:
        """Each input's hits as ranked documents, all read in one query (the database is the source of
        truth for ids and texts; a hit deleted meanwhile is left out)."""
        with stage("resolve"), self.service.sessions() as session:
            ids = list({h.doc_id: None for hits in hit_lists for h in hits})
            found = found_documents(session, opened.corpus_id, ids, metadata)
        return [ranked_documents(hits, found) for hits in hit_lists]

    def _allowed(self, opened: CorpusVectors, conditions: dict[str, Any] | None) -> list[int] | None:
        """The ids a filter admits (read once per request), None without a filter."""
        if not conditions:
            return None
        with stage("search"):
            return matching_ids(self.service.sessions, opened.corpus_id, conditions)

    def first_stage(
        self,
        state: ServingState,
        opened: CorpusVectors,
        queries: Sequence[str],
        depth: int,
        how: RankingSetting,
        allowed: list[int] | None,
    ) -> list[list[Hit]]:
        """Each query's best `depth` documents of the corpus (or of those a filter admits) under `how`:
        the one first stage (indexes/first_stage.py), every query's dense side in one search."""
        vectors = state.encoder.encode(list(queries))
        corpus = LiveCorpus(state.store, opened)
        with stage("search"):
            pools = gather(corpus, queries, vectors, depth, sides_of(how), allowed)
            return [rank_pool(pool, how, depth) for pool in pools]

    def _candidates(
        self, opened: CorpusVectors, external_ids: Sequence[str], allowed: list[int] | None
    ) -> list[int]:
        """The given candidates' database ids (404 naming the first missing), those a filter admits."""
        with stage("resolve"), self.service.sessions() as session:
            found = require_documents(session, opened.corpus_id, opened.name, external_ids, "candidates")
        ids = [found[doc_id] for doc_id in dict.fromkeys(external_ids)]
        if allowed is None:
            return ids
        admitted = set(allowed)
        return [d for d in ids if d in admitted]

    def served(
        self,
        state: ServingState,
        opened: CorpusVectors,
        queries: Sequence[str],
        k: int,
        conditions: dict[str, Any] | None,
        include_metadata: bool,
        requested: RankingRequest | None,
    ) -> tuple[list[list[RankedItem]], RankingSetting, RerankSetting | None]:
        """Each query's best k documents as `rank` serves them (the first stage, then the corpus's or the
        request's re-ranking stage), with the setting and the stage that ranked them."""
        how = served_setting(opened.settings, requested, state.model_version)
        second = rerank_stage(
            self.service, requested.rerank if requested else None, opened.settings.default_ranking
        )
        allowed = self._allowed(opened, conditions)
        hit_lists = self.first_stage(state, opened, queries, first_stage_depth(k, second), how, allowed)
        lists = self._resolve_many(opened, hit_lists, include_metadata)
        if second is not None:
            lists = [
                reranked(self.service, q, items, second, k) for q, items in zip(queries, lists, strict=True)
            ]
        return [items[:k] for items in lists], how, second

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
        """Search the whole corpus, or rank only the given candidates; optionally only matching ones;
        the corpus's (or the request's) re-ranking stage re-orders the top of it. A calibrated corpus's
        results carry the probability that each is the right match (the top DECISION_DEPTH)."""
        check_text(self.settings, "query", query)
        if candidates is not None:
            check_count("candidates", candidates, self.settings.max_candidates_per_request, "candidates")
        state = self.service.serving.state()
        opened = state.store.get(corpus_name)
        decider = Decider.of(
            opened.settings.match_calibration, opened.settings.match_policy, state.model_version
        )
        depth = max(k, DECISION_DEPTH) if decider is not None else k
        if candidates is None:
            lists, how, second = self.served(
                state, opened, [query], depth, conditions, include_metadata, requested
            )
            items = lists[0]
        else:
            items, how, second = self._rank_candidates(
                state, opened, query, depth, candidates, conditions, include_metadata, requested
            )
        if decider is not None:
            head = decider.probabilities(query, items[:DECISION_DEPTH])
            items = [*head, *items[DECISION_DEPTH:]]
        return Ranking(items[:k], state.model_version, how, second)

    def _rank_candidates(
        self,
        state: ServingState,
        opened: CorpusVectors,
        query: str,
        k: int,
        candidates: Sequence[str],
        conditions: dict[str, Any] | None,
        include_metadata: bool,
        requested: RankingRequest | None,
    ) -> tuple[list[RankedItem], RankingSetting, RerankSetting | None]:
        """The given candidates (those a filter admits) ranked as the corpus ranks, then re-ranked."""
        how = served_setting(opened.settings, requested, state.model_version)
        second = rerank_stage(
            self.service, requested.rerank if requested else None, opened.settings.default_ranking
        )
        ids = self._candidates(opened, candidates, self._allowed(opened, conditions))
        vector = state.encoder.encode([query])[0]
        with stage("search"):
            pool = given(LiveCorpus(state.store, opened), query, vector, ids, how.mode != "dense")
            hits = rank_pool(pool, how, first_stage_depth(k, second))
        items = self._resolve_many(opened, [hits], include_metadata)[0]
        if second is not None:
            items = reranked(self.service, query, items, second, k)
        return items[:k], how, second

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
        opened = state.store.get(corpus_name)
        used, source, how = self._duplicate_settings(opened, threshold, requested, state.model_version)
        decider = Decider.of(
            opened.settings.match_calibration, opened.settings.match_policy, state.model_version
        )
        if source == "request" or decider is None:
            decider = None
        allowed = self._allowed(opened, conditions)
        # One extra hit per query so that excluding the input's own document still leaves k.
        depth = max(k, DECISION_DEPTH) + 1 if decider is not None else k + 1
        found = self.first_stage(state, opened, [text for _, text in inputs], depth, how, allowed)
        if decider is None:
            found = [[h for h in hits if h.cosine >= used] for hits in found]
        resolved = self._resolve_many(opened, found, include_metadata)
        results = []
        for (own_id, text), items in zip(inputs, resolved, strict=True):
            kept = [item for item in items if item.id != own_id]
            if decider is not None:  # the policy decides: the probability of being the same claim
                head = decider.probabilities(text, kept[:DECISION_DEPTH])
                kept = [item for item in head if (item.probability or 0.0) >= decider.thresholds.match]
            matches = [replace(item, rank=rank) for rank, item in enumerate(kept[:k], start=1)]
            results.append(DuplicateMatches(text, own_id, matches))
        if decider is not None:
            return DuplicateReport(
                results, decider.thresholds.match, "policy", state.model_version, how, "probability"
            )
        return DuplicateReport(results, used, source, state.model_version, how)

    def _duplicate_settings(
        self,
        opened: CorpusVectors,
        requested: float | None,
        requested_mode: RankingRequest | None,
        model: str,
    ) -> tuple[float, str, RankingSetting]:
        """(threshold, its source, ranking) from the corpus's settings kept on its opened index."""
        settings = opened.settings
        how = served_setting(settings, requested_mode, model)
        if requested is not None:
            return requested, "request", how
        # A calibrated threshold holds only for the model it was calibrated with.
        if settings.duplicate_threshold is not None and settings.threshold_model == model:
            return settings.duplicate_threshold, "corpus", how
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
