"""Ranking use cases: search a corpus, re-rank candidates or given texts, find duplicates, score pairs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any, NamedTuple

import numpy as np

from app.core.errors import InvalidInputError, NotFoundError
from app.core.limits import check_count, check_text, check_texts
from app.db.corpus_lookup import require_corpus
from app.db.repositories.corpora import DocumentRepository, found_documents
from app.observability.timing import stage
from app.search.filtered import filtered_search, top_k
from app.search.hybrid import CANDIDATES, rerank, search_corpus
from app.search.languages import LanguageRequest, QueryLanguage, admitted_ids, query_language
from app.search.ranked import DuplicateMatches, DuplicateReport, RankedItem, Ranking, ranked_documents
from app.search.ranking_setting import RankingRequest, RankingSetting, resolve_mode
from app.serving.context import ServiceContext
from app.stores.port import CorpusVectors
from app.usecases.reranking import first_stage_depth, rerank_stage, reranked
from indexes.fusion import FusedHit


class _Hit(NamedTuple):
    """A hit of any mode: its id, score, and in lexical and hybrid modes the two component scores."""

    doc_id: int
    score: float
    dense: float | None = None
    lexical: float | None = None


def _dense(hits: Sequence[tuple[int, float]]) -> list[_Hit]:
    """Dense hits (no components)."""
    return [_Hit(doc_id, score) for doc_id, score in hits]


def _fused(hits: Sequence[FusedHit]) -> list[_Hit]:
    """Fused hits with their components."""
    return [_Hit(h.doc_id, h.score, h.dense, h.lexical) for h in hits]


def order_by_score(ids: Sequence[str | int], scores: np.ndarray, k: int) -> list[tuple[str | int, float]]:
    """Top k (id, score), best first; equal scores keep request order so results are deterministic."""
    order = sorted(range(len(ids)), key=lambda i: -float(scores[i]))[:k]
    return [(ids[i], float(scores[i])) for i in order]


class RankingService:
    """Read-only use cases on the serving model and the corpus indexes.

    A rank reads the database once when nothing else is asked (resolving the hits to documents): the
    corpus's rankings come from its opened index, a filter is evaluated once, and the hits of every
    input text are resolved together.
    """

    def __init__(self, service: ServiceContext) -> None:
        self.service = service
        self.settings = service.settings

    def _found(
        self, opened: CorpusVectors, doc_ids: Sequence[int], metadata: bool
    ) -> dict[int, tuple[str, str, dict[str, Any] | None]]:
        # Ids and texts come from the database, the source of truth; a hit deleted meanwhile is absent.
        with stage("resolve"), self.service.sessions() as session:
            return found_documents(session, opened.corpus_id, doc_ids, metadata)

    def _resolve_many(
        self, opened: CorpusVectors, hit_lists: Sequence[Sequence[_Hit]], metadata: bool
    ) -> list[list[RankedItem]]:
        """Each input's hits as ranked documents, all read in one query."""
        found = self._found(opened, list({h.doc_id: None for hits in hit_lists for h in hits}), metadata)
        return [ranked_documents(hits, found) for hits in hit_lists]

    def _resolve(self, opened: CorpusVectors, hits: Sequence[_Hit], metadata: bool) -> list[RankedItem]:
        return self._resolve_many(opened, [hits], metadata)[0]

    def _mode(self, opened: CorpusVectors, requested: RankingRequest | None, model: str) -> RankingSetting:
        settings = opened.settings  # kept on the opened corpus: no read of its row per request
        return resolve_mode(requested, settings.ranking_calibration, model, settings.default_ranking)

    def _allowed(
        self, opened: CorpusVectors, conditions: dict[str, Any] | None, same: QueryLanguage | None = None
    ) -> list[int] | None:
        """The ids a filter and a same-language restriction admit (read once per request), None without
        either."""
        if not conditions and same is None:
            return None
        with stage("search"):
            return admitted_ids(self.service.sessions, opened, conditions, same)

    def _fused_searches(
        self,
        opened: CorpusVectors,
        queries: Sequence[str],
        vectors: np.ndarray,
        k: int,
        how: RankingSetting,
        allowed: list[int] | None,
        languages: Sequence[str | None] | None = None,
    ) -> list[list[FusedHit]]:
        """Lexical or hybrid search of the corpus (or of the documents a filter admits) per query, each
        analysed in its language (None: the corpus's); the dense side of every query in one search."""
        store = self.service.serving.state().store
        pool = max(k, CANDIDATES)
        with stage("search"):
            if allowed is not None:
                dense_hits = filtered_search(store, opened, vectors, pool, allowed)
            elif how.mode == "hybrid":
                dense_hits = (
                    opened.search(vectors, pool)
                    if len(queries) > 1
                    else [opened.search_one(vectors[0], pool)]
                )
            else:
                dense_hits = [[] for _ in queries]
            admitted = set(allowed) if allowed is not None else None
            codes = languages if languages is not None else [None] * len(queries)
            return [
                search_corpus(store, opened, query, vector, k, how, hits, admitted, language)
                for query, vector, hits, language in zip(queries, vectors, dense_hits, codes, strict=True)
            ]

    def _database_ids(self, corpus_name: str, field: str, external_ids: Sequence[str]) -> list[int]:
        with stage("resolve"), self.service.sessions() as session:
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
        languages: LanguageRequest | None = None,
    ) -> Ranking:
        """Search the whole corpus, or rank only the given candidates; optionally only matching ones (and
        only those in the query's language); the corpus's (or the request's) re-ranking stage re-orders
        the top of it."""
        check_text(self.settings, "query", query)
        if candidates is not None:
            check_count("candidates", candidates, self.settings.max_candidates_per_request, "candidates")
        state = self.service.serving.state()
        opened = state.store.get(corpus_name)
        how = self._mode(opened, requested, state.model_version)
        second = rerank_stage(
            self.service, requested.rerank if requested else None, opened.settings.default_ranking
        )
        shown, k = k, first_stage_depth(k, second)
        query_vector = state.encoder.encode([query])
        asked = languages or LanguageRequest()
        language = query_language(opened, asked.language, query)
        allowed = self._allowed(opened, conditions, language if asked.same_language else None)
        database_ids = None
        if candidates is not None:
            database_ids = self._database_ids(corpus_name, "candidates", list(dict.fromkeys(candidates)))
            if allowed is not None:
                admitted = set(allowed)
                database_ids = [d for d in database_ids if d in admitted]
        if how.mode != "dense":
            code = language.code
            if database_ids is None:
                fused = self._fused_searches(opened, [query], query_vector, k, how, allowed, [code])[0]
            else:
                with stage("search"):
                    fused = rerank(state.store, opened, query, query_vector[0], database_ids, k, how, code)
            items = self._resolve(opened, _fused(fused), include_metadata)
        else:
            with stage("search"):
                if database_ids is not None:
                    scores = state.store.vectors_of(opened, database_ids) @ query_vector[0]
                    hits = top_k(database_ids, scores, k)
                elif allowed is not None:
                    hits = filtered_search(state.store, opened, query_vector, k, allowed)[0]
                else:
                    hits = opened.search_one(query_vector[0], k)
            items = self._resolve(opened, _dense(hits), include_metadata)
        if second is not None:
            items = reranked(self.service, query, items, second, shown)
        return Ranking(items[:shown], state.model_version, how, second, language)

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
        languages: LanguageRequest | None = None,
    ) -> DuplicateReport:
        """Corpus documents with cosine >= threshold for each (optional id, text); never an input's own id.

        In lexical and hybrid modes the candidates come from that ranking, in its order, and the
        threshold still applies to the cosine (it is calibrated on cosines). Each text is analysed in
        its language; with `same_language` only documents in it are candidates.
        """
        check_count("texts", inputs, self.settings.max_texts_per_request, "texts")
        for position, (_, text) in enumerate(inputs):
            check_text(self.settings, f"texts[{position}]", text)
        state = self.service.serving.state()
        opened = state.store.get(corpus_name)
        used, source, how = self._duplicate_settings(opened, threshold, requested, state.model_version)
        texts = [text for _, text in inputs]
        vectors = state.encoder.encode(texts)
        asked = languages or LanguageRequest()
        found = [query_language(opened, asked.language, text) for text in texts]
        # Texts of one language share a search (and, with `same_language`, the ids it admits).
        groups: dict[str | None, list[int]] = {}
        for position, language in enumerate(found):
            groups.setdefault(language.code if asked.same_language else None, []).append(position)
        hit_lists: list[list[_Hit]] = [[] for _ in inputs]
        for positions in groups.values():
            same = found[positions[0]] if asked.same_language else None
            group_texts = [texts[i] for i in positions]
            codes = [found[i].code for i in positions]
            allowed = self._allowed(opened, conditions, same)
            searched = self._duplicate_hits(
                opened, group_texts, vectors[positions], codes, k, how, allowed, used
            )
            for position, hits in zip(positions, searched, strict=True):
                hit_lists[position] = hits
        resolved = self._resolve_many(opened, hit_lists, include_metadata)
        results = []
        for (own_id, text), items, language in zip(inputs, resolved, found, strict=True):
            kept = [item for item in items if item.id != own_id][:k]
            matches = [replace(item, rank=rank) for rank, item in enumerate(kept, start=1)]
            results.append(DuplicateMatches(text, own_id, matches, language))
        return DuplicateReport(results, used, source, state.model_version, how)

    def _duplicate_hits(
        self,
        opened: CorpusVectors,
        texts: list[str],
        vectors: np.ndarray,
        codes: list[str | None],
        k: int,
        how: RankingSetting,
        allowed: list[int] | None,
        used: float,
    ) -> list[list[_Hit]]:
        """Each text's hits at or above the threshold (one extra, should its own document be among them)."""
        state = self.service.serving.state()
        if how.mode != "dense":
            fused = self._fused_searches(opened, texts, vectors, k + 1, how, allowed, codes)
            return [_fused([h for h in hits if h.dense >= used]) for hits in fused]
        with stage("search"):
            if allowed is not None:
                all_hits = filtered_search(state.store, opened, vectors, k + 1, allowed)
            else:
                all_hits = opened.search(vectors, k + 1)
        return [_dense([(d, s) for d, s in hits if s >= used]) for hits in all_hits]

    def _duplicate_settings(
        self,
        opened: CorpusVectors,
        requested: float | None,
        requested_mode: RankingRequest | None,
        model: str,
    ) -> tuple[float, str, RankingSetting]:
        """(threshold, its source, ranking) from the corpus's settings kept on its opened index."""
        settings = opened.settings
        how = resolve_mode(requested_mode, settings.ranking_calibration, model, settings.default_ranking)
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
