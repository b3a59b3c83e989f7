"""A first build's segments merge into the very generation one save of all their documents writes (array
for array), whatever the segments' sizes, order and dead rows; the spilling build, segmented while its
batches' ids ascend and merging into one generation when they stop, indexes what a held build does."""

from __future__ import annotations

import random
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from indexes import lexical_write
from indexes.analysis import Analyser
from indexes.durable import STAGING
from indexes.lexical import LexicalIndex
from indexes.lexical_base import ARRAYS, LexicalBase
from indexes.lexical_build import build_index
from indexes.lexical_segments import merge_segments

WORDS = ["shark", "highway", "flood", "vaccine", "moon", "bleach", "router", "carrot", "plastic", "émeute",
         "earth", "python", "tower", "dängerous", "z"]  # fmt: skip


def text(rng: random.Random) -> str:
    """A short random text (sometimes with a word only it has, so vocabularies differ)."""
    words = rng.choices(WORDS, k=rng.randint(1, 7))
    if rng.random() < 0.3:
        words.append(f"rare{rng.randint(0, 10**6)}")
    return " ".join(words)


def arrays(generation: Path) -> dict[str, np.ndarray]:
    """A generation's arrays, read whole."""
    return {name: np.load(generation / f"{name}.npy") for name in ARRAYS}


def assert_same(left: dict[str, np.ndarray], right: dict[str, np.ndarray]) -> None:
    """The same arrays: values and dtypes."""
    for name in ARRAYS:
        assert left[name].dtype == right[name].dtype, name
        np.testing.assert_array_equal(left[name], right[name], err_msg=name)


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    documents=st.integers(1, 60),
    segments=st.integers(1, 5),
    dead_share=st.sampled_from([0.0, 0.2, 1.0]),
    chunk=st.integers(1, 40),
)
def test_merged_segments_are_the_generation_one_save_writes(
    seed: int, documents: int, segments: int, dead_share: float, chunk: int
) -> None:
    rng = random.Random(seed)
    ids = rng.sample(range(10_000), documents)
    texts = {doc_id: text(rng) for doc_id in ids}
    groups = [ids[i::segments] for i in range(segments)]  # disjoint, ids in any order
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        bases, live = [], []
        for number, group in enumerate(groups):
            part = LexicalIndex(Analyser("en"))
            part.apply([(doc_id, texts[doc_id]) for doc_id in group])
            if not group:
                continue
            generation = part.save(folder / f"segment-{number}")
            base = LexicalBase.open(generation)
            for doc_id in group:  # removed after its segment was written: a dead row to skip
                if rng.random() < dead_share:
                    base.remove(doc_id)
                else:
                    live.append(doc_id)
            bases.append(base)
        whole = LexicalIndex(Analyser("en"))
        whole.apply([(doc_id, texts[doc_id]) for doc_id in sorted(live)])
        expected = arrays(whole.save(folder / "whole"))
        with pytest.MonkeyPatch.context() as patch:  # many chunks of postings, not one
            patch.setattr(lexical_write, "_CHUNK_POSTINGS", chunk)
            staged = merge_segments(folder / "merged", bases)
        assert_same(arrays(staged), expected)


def test_segments_sharing_a_document_do_not_merge_and_leave_nothing(tmp_path: Path) -> None:
    bases = []
    for number, ids in enumerate(([1, 2, 3], [3, 4])):
        part = LexicalIndex(Analyser("en"))
        part.apply([(doc_id, f"moon tower {doc_id}") for doc_id in ids])
        bases.append(LexicalBase.open(part.save(tmp_path / f"segment-{number}")))
    with pytest.raises(ValueError, match="share documents"):
        merge_segments(tmp_path / "merged", bases)
    assert not [p for p in (tmp_path / "merged").iterdir() if p.name.startswith(STAGING)]


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    documents=st.integers(1, 80),
    batch=st.integers(1, 12),
    spill_every=st.integers(1, 30),
    shuffled=st.booleans(),
)
def test_a_spilling_build_indexes_what_a_held_build_does(
    seed: int, documents: int, batch: int, spill_every: int, shuffled: bool
) -> None:
    rng = random.Random(seed)
    rows = [(doc_id, text(rng), None) for doc_id in range(documents)]
    if shuffled:  # ids that stop ascending: the segments merge and spills go on into one generation
        rng.shuffle(rows)
    rows += [(rng.randrange(documents), text(rng), None) for _ in range(documents // 4)]  # re-writes
    batches = [rows[i : i + batch] for i in range(0, len(rows), batch)]
    held = build_index(batches, Analyser("en"))
    with tempfile.TemporaryDirectory() as tmp:
        spilled = build_index(batches, Analyser("en"), scratch=Path(tmp), spill_every=spill_every)
        assert len(spilled) == len(held)
        assert_same(arrays(spilled.save(Path(tmp) / "a")), arrays(held.save(Path(tmp) / "b")))
        assert sorted(p.name for p in Path(tmp).iterdir()) == ["a", "b"]  # the build's folder is gone


def test_a_full_disk_during_the_merge_leaves_nothing_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bases = []
    for number, ids in enumerate(([1, 2], [3, 4])):
        part = LexicalIndex(Analyser("en"))
        part.apply([(doc_id, f"moon tower {doc_id}") for doc_id in ids])
        bases.append(LexicalBase.open(part.save(tmp_path / f"segment-{number}")))

    def full(*_: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("indexes.lexical_segments.NpyAppender.append", full)
    with pytest.raises(OSError, match="No space"):
        merge_segments(tmp_path / "merged", bases)
    assert list((tmp_path / "merged").iterdir()) == []


def test_batches_read_once_and_documents_without_terms_are_indexed(tmp_path: Path) -> None:
    rows = [(doc_id, "" if doc_id % 3 == 0 else f"moon tower {doc_id}", None) for doc_id in range(40)]
    held = build_index([rows[i : i + 5] for i in range(0, 40, 5)], Analyser("en"))
    batches = (iter(rows[i : i + 5]) for i in range(0, 40, 5))  # one-pass iterators, as a stream gives
    spilled = build_index(batches, Analyser("en"), scratch=tmp_path / "scratch", spill_every=3)
    assert len(spilled) == len(held) == 40
    assert_same(arrays(spilled.save(tmp_path / "a")), arrays(held.save(tmp_path / "b")))


def _spilled_and_saved(tmp_path: Path, rows: list[tuple[int, str, None]]) -> tuple[dict[str, int], Path]:
    """A spilled build saved by its `finish` hook: the merged generation's inodes then, and the save."""
    merged: dict[str, int] = {}
    saved: list[Path] = []

    def save(index: LexicalIndex) -> None:
        source = index._base.source if index._base is not None else None
        assert source is not None  # the merged generation, still in the build's folder
        merged.update({name: (source / f"{name}.npy").stat().st_ino for name in ARRAYS})
        saved.append(index.save(tmp_path / "corpus"))

    batches = [rows[i : i + 5] for i in range(0, len(rows), 5)]
    build_index(batches, Analyser("en"), scratch=tmp_path / "scratch", spill_every=7, finish=save)
    return merged, saved[0]


def test_a_first_builds_save_links_the_merged_generation_instead_of_writing_it_again(tmp_path: Path) -> None:
    rows = [(doc_id, f"moon tower {doc_id} flood", None) for doc_id in range(60)]
    merged, generation = _spilled_and_saved(tmp_path, rows)
    assert {name: (generation / f"{name}.npy").stat().st_ino for name in ARRAYS} == merged
    held = build_index([rows], Analyser("en"))
    assert_same(arrays(generation), arrays(held.save(tmp_path / "held")))  # and the build folder is gone:
    assert not any((tmp_path / "scratch").iterdir())
    loaded = LexicalIndex.load(generation.parent, Analyser("en"))
    assert loaded is not None and loaded.search("flood tower", 5) == held.search("flood tower", 5)


def test_a_save_writes_the_generation_where_links_cannot_be_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def other_device(*_: object) -> None:
        raise OSError(18, "Invalid cross-device link")

    monkeypatch.setattr(lexical_write.os, "link", other_device)
    rows = [(doc_id, f"moon tower {doc_id}", None) for doc_id in range(30)]
    merged, generation = _spilled_and_saved(tmp_path, rows)
    assert not set(merged.values()) & {(generation / f"{n}.npy").stat().st_ino for n in ARRAYS}
    assert_same(arrays(generation), arrays(build_index([rows], Analyser("en")).save(tmp_path / "held")))


def test_a_changed_base_is_written_not_linked(tmp_path: Path) -> None:
    index = LexicalIndex(Analyser("en"))
    index.apply([(doc_id, f"moon {doc_id}") for doc_id in range(10)])
    first = index.save(tmp_path / "a")
    index.apply([], deletes=[3])  # the saved base now has a dead row
    second = index.save(tmp_path / "b")
    assert (first / "ids.npy").stat().st_ino != (second / "ids.npy").stat().st_ino
    assert 3 not in np.load(second / "ids.npy").tolist() and len(np.load(second / "ids.npy")) == 9
