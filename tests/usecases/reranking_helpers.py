"""The tiny corpus served with the tiny re-ranker registered, for the use-case tests of re-ranking."""

from __future__ import annotations

from pathlib import Path

from app.search.ranked import Ranking
from app.serving.runtime import Runtime
from app.usecases.corpora import CorpusService
from app.usecases.model_admin import ModelAdminService
from tests.helpers.runtime import RuntimeFactory, serve
from tests.helpers.tiny_model import TINY_CORPUS

QUERY = "is it true that a shark swam on a flooded highway?"
DENSE = {"mode": "dense", "alpha": 0.2, "fusion": "linear"}


def ranked_ids(ranking: Ranking) -> list[str | int]:
    """The ids of a ranking, in order."""
    return [item.id for item in ranking.results]


def serving(make_runtime: RuntimeFactory, reranker_dir: Path, **settings: object) -> Runtime:
    """A serving runtime with the tiny corpus (dense) and the tiny re-ranker registered."""
    runtime = make_runtime(**settings)
    serve(runtime)
    corpora = CorpusService(runtime)
    corpora.create_corpus("claims", "claim", None, ranking=DENSE)
    corpora.upsert_documents("claims", [(f"t{i}", text, None, False) for i, text in enumerate(TINY_CORPUS)])
    registered = ModelAdminService(runtime).register(str(reranker_dir))
    assert registered.kind == "cross-encoder" and registered.created
    runtime.reranker_version = registered.version  # type: ignore[attr-defined]
    return runtime
