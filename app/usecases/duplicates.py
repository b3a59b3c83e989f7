"""Duplicates: the corpus documents that are the same as each input text, never the input's own document.

The candidates are the list `rank` serves for the text (app/usecases/ranking.py: the one first stage,
each text analysed in its language). A corpus calibrated for the serving model decides with its match
policy: a duplicate is a document whose calibrated probability reaches the auto-match threshold
(`threshold_on: probability`). Otherwise, and whenever the request names a threshold, the cosine
decides: the request's threshold, else the corpus's calibrated one for this model, else the setting.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from app.core.errors import NotFoundError
from app.core.limits import check_count, check_text
from app.db.corpus_lookup import require_corpus
from app.db.repositories.documents import DocumentRepository
from app.search.decisions import Decider
from app.search.languages import LanguageRequest
from app.search.ranked import DuplicateMatches, DuplicateReport
from app.search.ranking_setting import RankingRequest, RankingSetting, served_setting
from app.serving.context import ServiceContext
from app.stores.port import CorpusVectors
from app.usecases.ranking import RankingService
from evaluation.decisions import DECISION_DEPTH


class DuplicateService:
    """Find duplicates of texts (or of stored documents) in a corpus."""

    def __init__(self, service: ServiceContext) -> None:
        self.service = service
        self.settings = service.settings

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
        """Each (optional id, text)'s duplicates in the corpus (module docstring); with `same_language`
        only documents in the text's language are candidates."""
        check_count("texts", inputs, self.settings.max_texts_per_request, "texts")
        for position, (_, text) in enumerate(inputs):
            check_text(self.settings, f"texts[{position}]", text)
        state = self.service.serving.state()
        opened = state.store.get(corpus_name)
        used, source, how = self._threshold(opened, threshold, requested, state.model_version)
        settings = opened.settings
        decider = Decider.of(settings.match_calibration, settings.match_policy, state.model_version)
        if source == "request":
            decider = None
        ranking = RankingService(self.service)
        # One extra hit per query so that excluding the input's own document still leaves k.
        depth = max(k, DECISION_DEPTH) + 1 if decider is not None else k + 1
        texts = [text for _, text in inputs]
        found, found_languages = ranking.first_stage(state, opened, texts, depth, how, conditions, languages)
        if decider is None:
            found = [[h for h in hits if h.cosine >= used] for hits in found]
        resolved = ranking.resolve_many(opened, found, include_metadata)
        results = []
        for (own_id, text), items, language in zip(inputs, resolved, found_languages, strict=True):
            kept = [item for item in items if item.id != own_id]
            if decider is not None:  # the policy decides: the probability of being the same claim
                head = decider.probabilities(text, kept[:DECISION_DEPTH])
                kept = [item for item in head if (item.probability or 0.0) >= decider.thresholds.match]
            matches = [replace(item, rank=rank) for rank, item in enumerate(kept[:k], start=1)]
            results.append(DuplicateMatches(text, own_id, matches, language))
        if decider is not None:
            return DuplicateReport(
                results, decider.thresholds.match, "policy", state.model_version, how, "probability"
            )
        return DuplicateReport(results, used, source, state.model_version, how)

    def _threshold(
        self,
        opened: CorpusVectors,
        requested: float | None,
        requested_mode: RankingRequest | None,
        model: str,
    ) -> tuple[float, str, RankingSetting]:
        """(cosine threshold, its source, ranking) from the corpus's settings kept on its opened index."""
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
