"""A corpus's first BM25 build hands what it has read to a mapped generation every so many documents, so
a large corpus is never held whole in Python, and scores exactly as a build that kept everything; the
build is saved at once (its merged files linked, not written again), and the folders of builds (and
saves) that died are swept."""

from __future__ import annotations

import fcntl
import os
import random
from pathlib import Path

import pytest

from app.db.repositories.corpora import CorpusRepository
from app.serving.runtime import Runtime
from app.stores.lexical_store import build_lexical, lexical_folder, open_lexical
from app.usecases.corpora import CorpusService
from indexes import lexical_write
from indexes.analysis import Analyser
from indexes.durable import STAGING
from indexes.lexical import LexicalIndex
from indexes.lexical_base import ARRAYS
from indexes.lexical_build import BUILD_PREFIX
from indexes.snapshot import corpus_dir
from tests.helpers.runtime import RuntimeFactory, serve

WORDS = ["shark", "highway", "flood", "vaccine", "moon", "bleach", "router", "carrot", "plastic", "flight",
         "earth", "python", "tower"]  # fmt: skip
QUERIES = ["shark on the flooded highway", "moon moon bleach", "router tower flight plastic", "unknown"]


def served_corpus(make_runtime: RuntimeFactory, documents: int) -> tuple[Runtime, int, int]:
    """A serving runtime with a corpus `big` of random texts (one deleted): the runtime, the corpus's
    database id and change mark."""
    runtime = make_runtime()
    serve(runtime)
    service = CorpusService(runtime)
    service.create_corpus("big", "claim", None)
    texts = [(f"d{i}", " ".join(random.Random(i).choices(WORDS, k=6)), None, False) for i in range(documents)]
    service.upsert_documents("big", texts)
    service.delete_document("big", "d7")
    with runtime.sessions() as session:
        corpus = CorpusRepository(session).get("big")
        assert corpus is not None
        return runtime, corpus.id, int(corpus.change_seq)


def test_a_spilling_build_scores_like_one_held_in_memory_and_leaves_no_folder(
    make_runtime: RuntimeFactory, tmp_path: Path
) -> None:
    runtime, corpus_id, mark = served_corpus(make_runtime, 320)
    held = build_lexical(runtime.sessions, corpus_id, Analyser("en"), mark, batch_size=50)
    spilled = build_lexical(
        runtime.sessions, corpus_id, Analyser("en"), mark, root=tmp_path, spill_every=100, batch_size=50
    )
    assert len(spilled) == len(held) == 319 and spilled.hwm == held.hwm == mark
    assert held.delta_documents() == 319
    assert spilled.delta_documents() < 100  # the rest is in the mapped generation
    for query in QUERIES:
        assert spilled.scores(query) == held.scores(query)  # the same sums, in the same order
        assert spilled.search(query, 10) == held.search(query, 10)
    assert list(corpus_dir(tmp_path, corpus_id).iterdir()) == []  # its private folder is gone


def test_a_build_is_saved_at_once_and_dead_builds_are_swept(
    make_runtime: RuntimeFactory, tmp_path: Path
) -> None:
    runtime, corpus_id, mark = served_corpus(make_runtime, 60)
    scratch = corpus_dir(tmp_path, corpus_id)
    dead, live, new = (scratch / f"{BUILD_PREFIX}{name}" for name in ("dead", "live", "new"))
    for folder in (dead, live, new):
        folder.mkdir(parents=True)
    (dead / ".lock").touch()  # its process died: nobody holds the lock
    died_saving = lexical_folder(tmp_path, corpus_id) / f"{STAGING}died"  # a save killed mid-write
    died_saving.mkdir(parents=True)
    (died_saving / "rows.npy").write_bytes(b"\0" * 4096)
    (live / ".lock").touch()
    with open(live / ".lock") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # a build running in another process
        built = open_lexical(tmp_path, runtime.sessions, corpus_id, "big", mark)
        assert sorted(p.name for p in scratch.iterdir() if p.name.startswith(BUILD_PREFIX)) == [
            live.name,
            new.name,
        ]
    assert not died_saving.exists()  # the next save there sweeps it
    loaded = LexicalIndex.load(lexical_folder(tmp_path, corpus_id), Analyser("en"))
    assert loaded is not None and loaded.hwm == mark and len(loaded) == len(built) == 59
    for query in QUERIES:
        assert loaded.search(query, 10) == built.search(query, 10)
    generation = built.save(lexical_folder(tmp_path, corpus_id))
    assert built.save(lexical_folder(tmp_path, corpus_id)) == generation  # unchanged: nothing written
    built.apply([(10**6, "shark shark")])
    assert built.save(lexical_folder(tmp_path, corpus_id)) != generation


def test_a_spilled_first_build_is_saved_by_linking_its_merged_files(
    make_runtime: RuntimeFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime, corpus_id, mark = served_corpus(make_runtime, 320)
    linked: list[str] = []
    link = os.link

    def recorded(source: Path, target: Path) -> None:  # the real link, its target's name noted
        link(source, target)
        linked.append(Path(target).name)

    monkeypatch.setattr(lexical_write.os, "link", recorded)
    built = open_lexical(tmp_path, runtime.sessions, corpus_id, "big", mark, spill_every=100)
    assert sorted(linked) == sorted(f"{name}.npy" for name in ARRAYS)  # no posting written a third time
    loaded = LexicalIndex.load(lexical_folder(tmp_path, corpus_id), Analyser("en"))
    held = build_lexical(runtime.sessions, corpus_id, Analyser("en"), mark, batch_size=50)
    assert loaded is not None and loaded.hwm == mark and len(loaded) == len(built) == 319
    for query in QUERIES:
        assert loaded.search(query, 10) == built.search(query, 10) == held.search(query, 10)
    assert not [p for p in corpus_dir(tmp_path, corpus_id).iterdir() if p.name.startswith(BUILD_PREFIX)]
