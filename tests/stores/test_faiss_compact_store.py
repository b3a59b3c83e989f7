"""The Faiss store with a refined compact index (IVF-sq8 re-scored from float16 rows), through the use
cases: created by its spec, built at a checkpoint; a worker that starts later maps it and replays the log
after it, and answers as the writer does; after a restart the checkpointed changes answer alike."""

from __future__ import annotations

import random

import pytest

from app.search.ranking_setting import RankingRequest
from app.serving.runtime import Runtime
from app.usecases.corpora import CorpusService
from app.usecases.ranking import RankingService
from indexes.durable import STAGING
from indexes.snapshot import snapshot_dir
from tests.helpers.hits import assert_same_hits
from tests.helpers.runtime import RuntimeFactory, serve
from tests.helpers.tiny_model import TINY_CORPUS

SPEC = {"type": "ivf", "nlist": 2, "nprobe": 2, "compression": "sq8", "refine": 40}
# Texts of words the tiny model knows (words it does not know all encode alike), 5 to a document.
WORDS = sorted({word.strip(".?,").lower() for text in TINY_CORPUS for word in text.split()})
DOCUMENTS = {f"d{i}": " ".join(random.Random(i).sample(WORDS, 5)) for i in range(100)}
QUERIES = [DOCUMENTS["d3"], DOCUMENTS["d42"], "vaccines cure the flat earth"]


def ranked(runtime: Runtime, query: str) -> list[tuple[str, float]]:
    """(id, cosine) of a dense search of `compact`, best first."""
    dense = RankingRequest(mode="dense")
    results = RankingService(runtime).rank_corpus("compact", query, 10, None, requested=dense).results
    return [(str(item.id), item.score) for item in results]


@pytest.mark.usefixtures("faiss_only")
def test_a_refined_compact_corpus_survives_a_restart_with_its_log(make_runtime: RuntimeFactory) -> None:
    writer = make_runtime()
    serve(writer)
    service = CorpusService(writer)
    service.create_corpus("compact", "claim", None, index=SPEC)
    service.upsert_documents("compact", [(d, t, None, False) for d, t in DOCUMENTS.items()])
    store = writer.serving.state().store
    folder = snapshot_dir(store.root, store.get("compact").corpus_id, store.identity)
    died = folder / f"{STAGING}died"  # a generation half-written by a checkpoint killed mid-write
    died.mkdir(parents=True)
    (died / "vectors.f32").write_bytes(b"\0" * 4096)
    assert store.checkpoint(store.get("compact"))
    assert not died.exists()  # swept by the next checkpoint, which may need its space
    status = service.index_status("compact")
    assert status["structure"] == "ivf" and status["spec"]["refine"] == 40
    assert status["recall_at_10"] >= 0.9
    # Changes after the snapshot live in the change log only: the restart replays them.
    service.upsert_documents("compact", [("d3", "drinking carrots cures the router", None, False)])
    service.delete_document("compact", "d42")
    before = [ranked(writer, query) for query in QUERIES]
    assert "d42" not in {d for hits in before for d, _ in hits}
    started_later = make_runtime()  # maps the snapshot, replays the two changes logged after it
    serve(started_later)
    assert_same_hits([ranked(started_later, query) for query in QUERIES], before)
    later = CorpusService(started_later).index_status("compact")
    assert later["structure"] == "ivf" and later["high_water_mark"] == later["corpus_change_seq"]
    started_later.close()
    writer.close()  # a clean shutdown checkpoints the changes: now re-scored from float16 rows too
    restarted = make_runtime()
    serve(restarted)
    assert_same_hits([ranked(restarted, query) for query in QUERIES], before, atol=1e-3)
