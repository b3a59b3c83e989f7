"""A corpus's first BM25 build hands what it has read to a mapped generation every so many documents, so
a large corpus is never held whole in Python, and scores exactly as a build that kept everything."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from app.db.repositories.corpora import CorpusRepository
from app.stores.lexical_store import build_lexical
from app.usecases.corpora import CorpusService
from indexes.analysis import Analyser
from indexes.snapshot import corpus_dir
from tests.helpers.runtime import RuntimeFactory, serve

WORDS = ["shark", "highway", "flood", "vaccine", "moon", "bleach", "router", "carrot", "plastic", "flight",
         "earth", "python", "tower"]  # fmt: skip
QUERIES = ["shark on the flooded highway", "moon moon bleach", "router tower flight plastic", "unknown"]


@pytest.mark.usefixtures("faiss_only")  # the Faiss store's BM25 files; the pgvector store keeps none
def test_a_spilling_build_scores_like_one_held_in_memory_and_leaves_no_folder(
    make_runtime: RuntimeFactory, tmp_path: Path
) -> None:
    runtime = make_runtime()
    serve(runtime)
    service = CorpusService(runtime)
    service.create_corpus("big", "claim", None)
    texts = [(f"d{i}", " ".join(random.Random(i).choices(WORDS, k=6)), None, False) for i in range(320)]
    service.upsert_documents("big", texts)
    service.delete_document("big", "d7")
    with runtime.sessions() as session:
        corpus = CorpusRepository(session).get("big")
        assert corpus is not None
        corpus_id, mark = corpus.id, int(corpus.change_seq)
    scratch = corpus_dir(tmp_path / "indexes", corpus_id)
    stale = scratch / ".lexical-build-999999999-x"  # a build whose process died
    stale.mkdir(parents=True)
    live = scratch / f".lexical-build-{os.getpid()}-y"  # a build still running (this process)
    live.mkdir()

    held = build_lexical(runtime.sessions, corpus_id, Analyser("en"), mark, batch_size=50)
    spilled = build_lexical(
        runtime.sessions, corpus_id, Analyser("en"), mark, root=tmp_path / "indexes", spill_every=100,
        batch_size=50,
    )  # fmt: skip

    assert len(spilled) == len(held) == 319 and spilled.hwm == held.hwm == mark
    assert held.delta_documents() == 319
    assert spilled.delta_documents() < 100  # the rest is in the mapped generation
    for query in QUERIES:
        assert spilled.scores(query) == held.scores(query)  # the same sums, in the same order
        assert spilled.search(query, 10) == held.search(query, 10)
    assert sorted(p.name for p in scratch.iterdir()) == [live.name]  # its own folder and the stale one gone
