"""Calibrate a corpus's duplicate threshold: the F1-optimal cosine on labeled pairs, with the active model."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from app.core.errors import InvalidInputError
from app.core.limits import check_count, check_text
from app.db.corpus_lookup import require_corpus, require_documents
from app.db.engine import transaction
from app.db.models import utcnow
from app.serving.context import ServiceContext
from evaluation.pairs import best_f1_threshold


@dataclass(frozen=True)
class CalibrationInput:
    """A text, the document it is compared with (stored id or inline text), and whether they match."""

    text: str
    document_id: str | None
    document: str | None
    label: int


@dataclass(frozen=True)
class CalibrationResult:
    """The stored threshold and its quality on the calibration pairs."""

    threshold: float
    precision: float
    recall: float
    f1: float
    accuracy: float
    pair_count: int
    model: str


class CalibrationService:
    """Find and store the duplicate threshold that maximizes F1 on a corpus's labeled pairs."""

    def __init__(self, service: ServiceContext) -> None:
        self.service = service
        self.settings = service.settings

    def calibrate(self, corpus_name: str, pairs: Sequence[CalibrationInput]) -> CalibrationResult:
        """Score the pairs with the active model, pick the F1-optimal threshold, store it on the corpus."""
        check_count("pairs", pairs, self.settings.max_pairs_per_request, "pairs")
        for position, pair in enumerate(pairs):
            check_text(self.settings, f"pairs[{position}].text", pair.text)
            if pair.document is not None:
                check_text(self.settings, f"pairs[{position}].document", pair.document)
        labels = [pair.label for pair in pairs]
        if len(set(labels)) < 2:
            raise InvalidInputError(
                "pairs: need at least one duplicate (label 1) and one non-duplicate (0)", "pairs"
            )
        state = self.service.serving.state()
        opened = state.store.get(corpus_name)
        stored_ids = [p.document_id for p in pairs if p.document_id is not None]
        with self.service.sessions() as session:
            database_ids = require_documents(session, opened.corpus_id, corpus_name, stored_ids, "pairs")
        texts = list(
            dict.fromkeys([p.text for p in pairs] + [p.document for p in pairs if p.document is not None])
        )
        row_of = {text: row for row, text in enumerate(texts)}
        encoded = state.encoder.encode_bulk(texts, label="calibration pairs")
        stored_vectors = state.store.vectors_of(opened, [database_ids[d] for d in stored_ids])
        stored = dict(zip(stored_ids, stored_vectors, strict=True)) if stored_ids else {}
        scores = np.array(
            [
                float(
                    encoded[row_of[p.text]]
                    @ (
                        stored[p.document_id]
                        if p.document_id is not None
                        else encoded[row_of[p.document or ""]]
                    )
                )
                for p in pairs
            ]
        )
        best = best_f1_threshold(scores, labels)
        result = CalibrationResult(
            best.threshold,
            best.precision,
            best.recall,
            best.f1,
            best.accuracy,
            len(pairs),
            state.model_version,
        )
        with transaction(self.service.sessions) as session:
            corpus = require_corpus(session, corpus_name)
            corpus.duplicate_threshold = result.threshold
            corpus.threshold_model = result.model
            corpus.calibration = {
                "precision": result.precision,
                "recall": result.recall,
                "f1": result.f1,
                "accuracy": result.accuracy,
                "pair_count": result.pair_count,
                "calibrated_at": utcnow().isoformat(),
            }
        return result
