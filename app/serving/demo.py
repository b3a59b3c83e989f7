"""The demo corpus of fact-checked claims that ships with pairank (created with `pairank serve --demo`)."""

from __future__ import annotations

import json
import logging
from importlib import resources
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from app.core.defaults import DEFAULT_RANKING_BY_KIND
from app.core.errors import ConflictError
from app.core.text_hash import text_sha256
from app.db.engine import transaction
from app.db.repositories.corpora import CorpusRepository
from app.db.repositories.documents import DocumentInput, DocumentRepository

DEMO_CORPUS = "demo-claims"
log = logging.getLogger(__name__)


def demo_documents() -> list[dict[str, Any]]:
    """The ~50 demo claims as {id, text, metadata} dicts."""
    lines = resources.files("app").joinpath("demo/claims.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def seed_demo_corpus(sessions: sessionmaker[Session]) -> bool:
    """Create the demo corpus with its claims unless it exists; True when created."""
    try:
        return _create_demo_corpus(sessions)
    except ConflictError:  # another worker created it at the same moment
        return False


def _create_demo_corpus(sessions: sessionmaker[Session]) -> bool:
    with transaction(sessions) as session:
        corpora = CorpusRepository(session)
        if corpora.get(DEMO_CORPUS) is not None:
            return False
        corpus = corpora.add(
            DEMO_CORPUS,
            "claim",
            "Fact-checked claims shipped with pairank as a demo.",
            default_ranking=DEFAULT_RANKING_BY_KIND["claim"],
        )
        inputs = [
            DocumentInput(d["id"], d["text"], text_sha256(d["text"]), d.get("metadata"))
            for d in demo_documents()
        ]
        DocumentRepository(session, corpus).upsert(inputs, {})
    log.info("created demo corpus %r with %d claims", DEMO_CORPUS, len(inputs))
    return True
