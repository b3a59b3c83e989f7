"""One worked example per request body, shown in /docs and the OpenAPI schema (`examples`).

They refer to the demo-style corpus `claims` with documents `c1`..`c5`; tests validate every example
against its model and send it to a live app, so an example that stops being valid fails the suite.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from app.schemas.admin import ApiKeyCreate, JudgementIn, PairsCreate, SplitRequest
from app.schemas.compare import CompareMetricsRequest, CompareRequest
from app.schemas.corpora import CorpusCreate, CorpusLanguageChange, CorpusRanking, DocumentsUpsert
from app.schemas.evaluations import CalibrationRequest, EvaluationCreate, RankingCalibrationRequest
from app.schemas.inbox import ConfirmIn, InboxCreate, ItemsIn, MoveIn, RejectIn, StatusIn
from app.schemas.matching import MatchPolicyIn, MatchRequest
from app.schemas.ranking import CorpusRankRequest, DuplicatesRequest, SimilarityRequest, TextRankRequest
from app.schemas.retraining import RetrainRequest
from app.schemas.workbench import JudgementEdit, JudgementScaleIn, JudgementsImport, QuerySetCreate

_CLAIM = "Is it true that the moon landing was filmed in a studio?"
REQUEST_EXAMPLES: dict[type[BaseModel], dict[str, Any]] = {
    CorpusCreate: {"name": "claims", "kind": "claim", "description": "Fact-checked claims, English."},
    DocumentsUpsert: {
        "documents": [
            {"id": "c1", "text": "The moon landing was staged in a film studio.", "metadata": {"lang": "en"}},
            {"id": "c2", "text": "Drinking bleach cures the coronavirus infection."},
        ]
    },
    CorpusRanking: {"mode": "hybrid", "alpha": 0.2, "fusion": "linear"},
    CorpusLanguageChange: {"language": "en"},
    CorpusRankRequest: {"query": _CLAIM, "k": 5, "filter": {"lang": "en"}, "include_metadata": True},
    TextRankRequest: {
        "query": "How do I renew my passport?",
        "documents": ["Passports are renewed online or at a post office.", "Visas take ten days."],
        "k": 2,
    },
    DuplicatesRequest: {"texts": [_CLAIM, "Bleach kills the coronavirus if you drink it."], "k": 3},
    SimilarityRequest: {"pairs": [{"a": "The earth is flat.", "b": "NASA hides that the earth is flat."}]},
    EvaluationCreate: {
        "name": "claims smoke test",
        "corpus": "claims",
        "queries": [{"id": "q1", "text": _CLAIM}],
        "qrels": [{"query_id": "q1", "document_id": "c1", "relevance": 1}],
        "metrics": ["MAP", "MRR@10", "P@1"],
    },
    CalibrationRequest: {
        "pairs": [
            {"text": _CLAIM, "document_id": "c1", "label": 1},
            {"text": "Vaccines contain microchips.", "document_id": "c3", "label": 0},
        ]
    },
    RankingCalibrationRequest: {"metric": "MRR", "folds": 2},
    PairsCreate: {
        "pairs": [
            {"query": _CLAIM, "document_id": "c1", "label": 1},
            {"query": "Is drinking bleach a covid cure?", "document": "Vaccines cause autism.", "label": 0},
        ]
    },
    SplitRequest: {"dev_fraction": 0.2, "seed": 0},
    JudgementIn: {"query": _CLAIM, "document_id": "c1", "label": 1, "note": "the same claim, reworded"},
    MatchRequest: {"text": _CLAIM, "filter": {"lang": "en"}},
    MatchPolicyIn: {"match_precision": 0.95, "min_words": 3},
    InboxCreate: {
        "name": "tips",
        "corpora": ["claims"],
        "language": "en",
        "webhooks": [{"url": "https://desk.example.org/hooks/pairank"}],
    },  # fmt: skip
    ItemsIn: {
        "items": [
            {
                "id": "wa-1001",
                "text": "Is it true the moon landing was filmed in a studio?",
                "received_at": "2026-11-28T09:15:00Z",
                "source": "whatsapp",
            },  # fmt: skip
            {"id": "wa-1002", "text": "They faked the moon landing in a film studio", "source": "whatsapp"},
        ]
    },
    ConfirmIn: {"corpus": "claims", "document_id": "c1"},
    RejectIn: {"corpus": "claims", "document_id": "c3"},
    StatusIn: {"status": "answered"},
    MoveIn: {"item_id": "wa-1002"},
    QuerySetCreate: {"name": "hard claims", "queries": [_CLAIM, "does bleach cure covid?"]},
    JudgementScaleIn: {"judgement_scale": "graded"},
    JudgementEdit: {"label": 0, "note": "on second reading: a different claim"},
    JudgementsImport: {
        "format": "jsonl",
        "text": '{"query": "moon landing staged?", "document_id": "c1", "label": 1}\n'
        '{"query": "moon landing staged?", "document_id": "c2", "label": 0, "note": "bleach, not moon"}\n',
    },
    CompareRequest: {
        "query": _CLAIM,
        "k": 5,
        "left": {"mode": "dense"},
        "right": {"mode": "hybrid", "alpha": 0.3},
    },
    CompareMetricsRequest: {
        "left": {"mode": "dense"},
        "right": {"mode": "lexical"},
        "metrics": ["MRR", "MAP"],
    },
    RetrainRequest: {"corpus": "claims", "epochs": 1, "batch_size": 32, "auto_activate": False},
    ApiKeyCreate: {"scope": "write", "corpora": ["claims"], "name": "tipline bot"},
}
