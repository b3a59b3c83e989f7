"""The BM25 index served from a mapped generation plus a delta scores exactly as a fresh in-memory build."""

from __future__ import annotations

import tempfile
import threading
from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import indexes.lexical as lexical_module
import indexes.lexical_write as lexical_write
from indexes.analysis import Analyser
from indexes.lexical import LexicalIndex
from indexes.lexical_base import ARRAYS

# Non-ASCII words too: the mapped vocabulary is searched by UTF-8 bytes, which must sort as the terms do.
WORDS = ["shark", "highway", "flood", "virus", "moon", "zeta", "émile", "ärger", "цвет", "北京", "the"]
QUERIES = ["shark highway the flood", "virus moon moon", "émile ärger zeta", "цвет 北京 shark", "absent"]
TEXTS = st.lists(st.sampled_from(WORDS), min_size=0, max_size=6).map(" ".join)
OPS = st.lists(
    st.one_of(
        st.tuples(st.just("upsert"), st.integers(0, 8), TEXTS),
        st.tuples(st.just("delete"), st.integers(0, 8), st.just("")),
        st.tuples(st.just("save"), st.just(0), st.just("")),
        st.tuples(st.just("restart"), st.just(0), st.just("")),
    ),
    max_size=30,
)
ANALYSER = Analyser(stem=False)


def fresh(truth: dict[int, str]) -> LexicalIndex:
    """An index built in memory from scratch over the live documents."""
    index = LexicalIndex(ANALYSER)
    index.apply(sorted(truth.items()))
    return index


def assert_same(index: LexicalIndex, truth: dict[int, str]) -> None:
    """Every query's scores are exactly a fresh build's, and so are size and membership."""
    reference = fresh(truth)
    assert len(index) == len(truth)
    assert [d for d in range(45) if d in index] == sorted(truth)
    for query in QUERIES:
        assert index.scores(query) == reference.scores(query)
        assert index.search(query, 3) == reference.search(query, 3)


@settings(max_examples=80, deadline=None)
@given(OPS)
@example([("upsert", 1, "shark shark"), ("upsert", 2, "shark"), ("save", 0, ""), ("upsert", 1, "moon"),
          ("delete", 2, ""), ("save", 0, ""), ("restart", 0, "")])  # fmt: skip
def test_saves_loads_and_writes_in_any_order_score_like_a_fresh_build(
    ops: list[tuple[str, int, str]],
) -> None:
    log: list[tuple[int, str, int, str]] = []  # (seq, op, doc, text): the change log a restart replays
    with tempfile.TemporaryDirectory() as folder:
        index, truth = LexicalIndex(ANALYSER), {}
        for op, doc_id, text in ops:
            if op in ("upsert", "delete"):
                log.append((len(log) + 1, op, doc_id, text))
                if op == "upsert":
                    index.apply([(doc_id, text)], hwm=len(log))
                    truth[doc_id] = text
                else:
                    index.apply([], [doc_id], hwm=len(log))
                    truth.pop(doc_id, None)
            elif op == "save":
                index.save(Path(folder))  # keeps serving, now from the mapped generation
            else:
                loaded = LexicalIndex.load(Path(folder), ANALYSER)
                index = loaded if loaded is not None else LexicalIndex(ANALYSER)
                for seq, kind, doc, words in log:
                    if seq > index.hwm:
                        index.apply(
                            [(doc, words)] if kind == "upsert" else [], [] if kind == "upsert" else [doc]
                        )
                index.hwm = len(log)
            assert_same(index, truth)


def test_load_maps_every_array(tmp_path: Path) -> None:
    index = LexicalIndex(ANALYSER)
    index.apply([(1, "shark flood"), (2, "moon цвет")], hwm=2)
    index.save(tmp_path)
    loaded = LexicalIndex.load(tmp_path, ANALYSER)
    assert loaded is not None and loaded._base is not None
    assert all(isinstance(getattr(loaded._base, name), np.memmap) for name in ARRAYS)
    assert not loaded._terms and not loaded._postings  # nothing rebuilt as Python objects
    assert index._base is not None and isinstance(index._base.rows, np.memmap)  # the saver serves it too


@pytest.mark.parametrize("chunk", [1 << 22, 1, 7])  # a save merges a few postings at a time: any split
def test_a_save_after_base_deletes_and_replacements_loads_the_same_scores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    monkeypatch.setattr(lexical_write, "_CHUNK_POSTINGS", chunk)
    truth = {d: " ".join(WORDS[d % 7 : d % 7 + 3]) for d in range(40)}
    index = LexicalIndex(ANALYSER)
    index.apply(sorted(truth.items()), hwm=1)
    index.save(tmp_path)
    replaced = {d: f"émile {WORDS[d % 5]}" for d in range(0, 40, 3)}
    index.apply(sorted(replaced.items()), deletes=list(range(1, 40, 4)), hwm=2)
    for d in range(1, 40, 4):  # deletes first, then upserts, as `apply` does
        truth.pop(d, None)
    truth.update(replaced)
    assert_same(index, truth)
    index.save(tmp_path)
    loaded = LexicalIndex.load(tmp_path, ANALYSER)
    assert loaded is not None and loaded.hwm == 2
    assert_same(loaded, truth)
    assert len([p for p in tmp_path.iterdir() if p.is_dir()]) == 1


def apply_within(index: LexicalIndex, seconds: float, *args: object, **kwargs: object) -> None:
    """`index.apply(...)` in another thread, failing the test if it has not finished in `seconds`."""
    writer = threading.Thread(target=index.apply, args=args, kwargs=kwargs)
    writer.start()
    writer.join(seconds)
    assert not writer.is_alive(), "the write waited for the save"


@pytest.mark.parametrize("step", ["stage_generation", "publish_generation"])
def test_writes_during_a_save_stay_in_the_delta(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, step: str
) -> None:
    index = LexicalIndex(ANALYSER)
    index.apply([(1, "shark flood"), (3, "virus moon"), (4, "zeta")], hwm=1)
    index.save(tmp_path)  # a base, so that a write during the save changes what the save reads from
    index.apply([(2, "moon")], deletes=[4], hwm=3)
    real = getattr(lexical_module, step)

    def write_while_saving(*args: object, **kwargs: object) -> Path:
        apply_within(index, 10, [(2, "shark shark")], deletes=[3], hwm=5)  # while merging or publishing
        return real(*args, **kwargs)  # type: ignore[no-any-return]

    monkeypatch.setattr(lexical_module, step, write_while_saving)
    index.save(tmp_path)
    truth = {1: "shark flood", 2: "shark shark"}
    assert_same(index, truth)
    loaded = LexicalIndex.load(tmp_path, ANALYSER)
    assert loaded is not None and loaded.hwm == 3  # the generation holds the state the save began with
    assert_same(loaded, {1: "shark flood", 2: "moon", 3: "virus moon"})
    loaded.apply([(2, "shark shark")], deletes=[3], hwm=5)
    assert_same(loaded, truth)


def test_a_write_does_not_wait_for_the_merge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The save copies the delta under the lock and merges it with the base without: a write (and so a
    search queued behind it) is not held for a merge proportional to the corpus."""
    truth = {d: f"{WORDS[d % 7]} {WORDS[d % 5]}" for d in range(30)}
    index = LexicalIndex(ANALYSER)
    index.apply(sorted(truth.items()), hwm=1)
    index.save(tmp_path)
    index.apply([(40, "shark moon")], hwm=2)
    merging, release, failures = threading.Event(), threading.Event(), []
    real = lexical_module.stage_generation

    def slow_merge(*args: object, **kwargs: object) -> Path:
        merging.set()
        release.wait(30)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    def save() -> None:
        try:
            index.save(tmp_path)
        except BaseException as error:  # noqa: BLE001 - re-raised in the test's thread below
            failures.append(error)

    monkeypatch.setattr(lexical_module, "stage_generation", slow_merge)
    saver = threading.Thread(target=save)
    saver.start()
    assert merging.wait(30)
    apply_within(index, 5, [(41, "walrus flood")], deletes=[3], hwm=3)  # while the merge is held up
    assert [doc for doc, _ in index.search("walrus", 5)] == [41]  # and served during it
    release.set()
    saver.join(30)
    assert not saver.is_alive() and not failures, failures
    truth.pop(3)
    assert_same(index, {**truth, 40: "shark moon", 41: "walrus flood"})  # the writes on the new generation
    loaded = LexicalIndex.load(tmp_path, ANALYSER)
    assert loaded is not None and loaded.hwm == 2 and 40 in loaded and 41 not in loaded and 3 in loaded


def test_a_rebase_that_fails_keeps_the_index_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Re-applying the writes made during a save onto the new generation may fail (out of memory): the
    index then serves the old base and its whole delta, writes included, and the next save succeeds."""
    index = LexicalIndex(ANALYSER)
    index.apply([(1, "shark flood"), (2, "moon")], hwm=1)
    index.save(tmp_path)
    index.apply([(3, "virus moon")], hwm=2)
    real_stage, real_add = lexical_module.stage_generation, LexicalIndex._add

    def write_then_fail_rebase(*args: object, **kwargs: object) -> Path:
        index.apply([(4, "zeta shark")], deletes=[1], hwm=3)

        def no_memory(self: LexicalIndex, *_: object) -> None:
            raise MemoryError

        monkeypatch.setattr(LexicalIndex, "_add", no_memory)  # the rebase's re-apply of document 4
        return real_stage(*args, **kwargs)  # type: ignore[no-any-return]

    monkeypatch.setattr(lexical_module, "stage_generation", write_then_fail_rebase)
    with pytest.raises(MemoryError):
        index.save(tmp_path)
    monkeypatch.setattr(LexicalIndex, "_add", real_add)
    monkeypatch.setattr(lexical_module, "stage_generation", real_stage)
    truth = {2: "moon", 3: "virus moon", 4: "zeta shark"}
    assert_same(index, truth)
    index.save(tmp_path)
    loaded = LexicalIndex.load(tmp_path, ANALYSER)
    assert loaded is not None and loaded.hwm == 3
    assert_same(loaded, truth)


def test_a_multi_language_index_scores_the_same_after_a_save(tmp_path: Path) -> None:
    multi = Analyser("multi")
    texts = [(1, "The sharks swam on the flooded highway"), (2, "Die Haie schwammen auf der Autobahn"),
             (3, "Les requins nageaient sur l'autoroute inondée")]  # fmt: skip
    languages = {1: "en", 2: "de", 3: "fr"}
    index = LexicalIndex(multi)
    index.apply(texts, languages=languages, hwm=3)
    before = {q: index.scores(q, language=lang) for q, lang in (("sharks", "en"), ("Haie", "de"))}
    index.save(tmp_path)
    loaded = LexicalIndex.load(tmp_path, multi)
    assert loaded is not None
    assert {q: loaded.scores(q, language=lang) for q, lang in (("sharks", "en"), ("Haie", "de"))} == before
    assert LexicalIndex.load(tmp_path, Analyser("en")) is None  # analysed otherwise: rebuilt


def test_an_index_emptied_saves_loads_and_fills_again(tmp_path: Path) -> None:
    index = LexicalIndex(ANALYSER)
    index.save(tmp_path)
    index.apply([(1, "shark")], hwm=1)
    index.save(tmp_path)
    index.apply([], [1], hwm=2)
    index.save(tmp_path)
    loaded = LexicalIndex.load(tmp_path, ANALYSER)
    assert loaded is not None and len(loaded) == 0 and loaded.scores("shark") == {}
    loaded.apply([(2, "émile shark")], hwm=3)
    assert_same(loaded, {2: "émile shark"})


def test_an_old_format_generation_is_not_loaded(tmp_path: Path) -> None:
    index = LexicalIndex(ANALYSER)
    index.apply([(1, "shark")], hwm=1)
    generation = index.save(tmp_path)
    manifest = generation / "manifest.json"
    manifest.write_text(manifest.read_text().replace('"format_version": 2', '"format_version": 1'))
    assert LexicalIndex.load(tmp_path, ANALYSER) is None
