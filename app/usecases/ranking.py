"""Ranking use cases: search a corpus, rank given candidates or inline texts, score pairs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from app.core.errors import InvalidInputError
from app.core.limits import check_count, check_text, check_texts
from app.db.corpus_lookup import require_documents
from app.db.repositories.documents import found_documents
from app.observability.timing import stage
from app.search.decisions import Decider
from app.search.first_stage import LiveCorpus
from app.search.languages import LanguageRequest, QueryLanguage, admitted_ids, query_language
from app.search.ranked import RankedItem, Ranking, ranked_documents
from app.search.ranking_setting import RankingRequest, RankingSetting, RerankSetting, served_setting
from app.serving.context import ServiceContext
from app.serving.state import ServingState
from app.stores.port import CorpusVectors
from app.usecases.reranking import first_stage_depth, rerank_stage, reranked
from evaluation.decisions import DECISION_DEPTH
from indexes.first_stage import Hit, gather, given, rank_pool, sides_of

Served = tuple[list[list[RankedItem]], RankingSetting, RerankSetting | None, list[QueryLanguage]]


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
    (indexes/first_stage.py), as evaluations, comparisons, calibrations and the gate score it; each
    query is analysed in its language (app/search/languages.py).
    """

    def __init__(self, service: ServiceContext) -> None:
        self.service = service
        self.settings = service.settings

    def resolve_many(
        self, opened: CorpusVectors, hit_lists: Sequence[Sequence[Hit]], metadata: bool
    ) -> list[list[RankedItem]]:
        """Each input's hits as ranked documents, all read in one query (the database is the source of
        truth for ids and texts; a hit deleted meanwhile is left out)."""
        with stage("resolve"), self.service.sessions() as session:
            ids = list({h.doc_id: None for hits in hit_lists for h in hits})
            found = found_documents(session, opened.corpus_id, ids, metadata)
        return [ranked_documents(hits, found) for hits in hit_lists]

    def _allowed(
        self, opened: CorpusVectors, conditions: dict[str, Any] | None, same: QueryLanguage | None = None
    ) -> list[int] | None:
        """The ids a filter and a same-language restriction admit (read once per request), None without
        either."""
        if not conditions and same is None:
            return None
        with stage("search"):
            return admitted_ids(self.service.sessions, opened, conditions, same)

    def first_stage(
        self,
        state: ServingState,
        opened: CorpusVectors,
        queries: Sequence[str],
        depth: int,
        how: RankingSetting,
        conditions: dict[str, Any] | None,
        asked: LanguageRequest | None = None,
        vectors: np.ndarray | None = None,
    ) -> tuple[list[list[Hit]], list[QueryLanguage]]:
        """Each query's best `depth` documents of the corpus (or of those a filter, and with
        `same_language` the query's language, admit) under `how`, and each query's language: the one
        first stage (indexes/first_stage.py), the dense side of the queries of one language in one search."""
        asked = asked or LanguageRequest()
        languages = [query_language(opened, asked.language, query) for query in queries]
        groups: dict[str | None, list[int]] = {}
        for position, language in enumerate(languages):
            groups.setdefault(language.code if asked.same_language else None, []).append(position)
        if vectors is None:  # a caller that encoded the queries already (the inbox) hands them over
            vectors = state.encoder.encode(list(queries))
        corpus = LiveCorpus(state.store, opened)
        hits: list[list[Hit]] = [[] for _ in queries]
        for positions in groups.values():
            allowed = self._allowed(
                opened, conditions, languages[positions[0]] if asked.same_language else None
            )
            with stage("search"):
                texts = [queries[i] for i in positions]
                codes = [languages[i].code for i in positions]
                pools = gather(corpus, texts, vectors[positions], depth, sides_of(how), allowed, codes)
                for position, pool in zip(positions, pools, strict=True):
                    hits[position] = rank_pool(pool, how, depth)
        return hits, languages

    def served(
        self,
        state: ServingState,
        opened: CorpusVectors,
        queries: Sequence[str],
        k: int,
        conditions: dict[str, Any] | None,
        include_metadata: bool,
        requested: RankingRequest | None,
        asked: LanguageRequest | None = None,
        vectors: np.ndarray | None = None,
    ) -> Served:
        """Each query's best k documents as `rank` serves them (the first stage, then the corpus's or the
        request's re-ranking stage), with the setting, the stage and each query's language."""
        how = served_setting(opened.settings, requested, state.model_version)
        second = rerank_stage(
            self.service, requested.rerank if requested else None, opened.settings, state.model_version
        )
        depth = first_stage_depth(k, second)
        hit_lists, languages = self.first_stage(
            state, opened, queries, depth, how, conditions, asked, vectors
        )
        lists = self.resolve_many(opened, hit_lists, include_metadata)
        if second is not None:
            lists = [
                reranked(self.service, q, items, second, k) for q, items in zip(queries, lists, strict=True)
            ]
        return [items[:k] for items in lists], how, second, languages

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

    def rank_corpus(
        self,
        corpus_name: str,
        query: str,
        k: int,
        candidates: Sequence[str] | None,
        conditions: dict[str, Any] | None = None,
        include_metadata: bool = False,
        requested: RankingRequest | None = None,
        languages: LanguageRequest | None = None,
    ) -> Ranking:
        """Search the whole corpus, or rank only the given candidates; optionally only matching ones (and
        only those in the query's language); the corpus's (or the request's) re-ranking stage re-orders
        the top of it. A calibrated corpus's results carry the probability that each is the right match
        (the top DECISION_DEPTH)."""
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
            lists, how, second, found = self.served(
                state, opened, [query], depth, conditions, include_metadata, requested, languages
            )
            items, language = lists[0], found[0]
        else:
            items, how, second, language = self._rank_candidates(
                state, opened, query, depth, candidates, conditions, include_metadata, requested, languages
            )
        if decider is not None:
            items = [*decider.probabilities(query, items[:DECISION_DEPTH]), *items[DECISION_DEPTH:]]
        return Ranking(items[:k], state.model_version, how, second, language)

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
        asked: LanguageRequest | None,
    ) -> tuple[list[RankedItem], RankingSetting, RerankSetting | None, QueryLanguage]:
        """The given candidates (those a filter and the language admit) ranked as the corpus ranks, then
        re-ranked."""
        asked = asked or LanguageRequest()
        how = served_setting(opened.settings, requested, state.model_version)
        second = rerank_stage(
            self.service, requested.rerank if requested else None, opened.settings, state.model_version
        )
        language = query_language(opened, asked.language, query)
        allowed = self._allowed(opened, conditions, language if asked.same_language else None)
        ids = self._candidates(opened, candidates, allowed)
        vector = state.encoder.encode([query])[0]
        with stage("search"):
            pool = given(
                LiveCorpus(state.store, opened), query, vector, ids, how.mode != "dense", language.code
            )
            hits = rank_pool(pool, how, first_stage_depth(k, second))
        items = self.resolve_many(opened, [hits], include_metadata)[0]
        if second is not None:
            items = reranked(self.service, query, items, second, k)
        return items[:k], how, second, language

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
