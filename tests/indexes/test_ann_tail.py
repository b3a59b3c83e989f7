"""IVF tails (issue 41): an appending checkpoint links the old generation's IVF lists and writes only the
rows appended since they were built; the two parts search as one IVF holding every row would, deleted
rows and the refine step included; a tail past a tenth of the lists is folded back into one file."""

from __future__ import annotations

import errno
import json
import shutil
from pathlib import Path

import faiss
import numpy as np
import pytest

from indexes.ann import ann_search, build_ann
from indexes.ann_lists import LISTS_FILE
from indexes.ann_tail import ANN_FILE, TAIL_FILE, extend_structure
from indexes.checkpoint import checkpoint, rebase
from indexes.ivf_parts import StackedIVF
from indexes.snapshot import load_snapshot
from indexes.spec import Compression, IndexSpec
from indexes.vector_index import VectorIndex
from tests.helpers.index_rows import MODEL, append, rows_of


def assert_same_but_ties_at_the_last_place(
    found: tuple[np.ndarray, ...], expected: tuple[np.ndarray, ...], ties_ordered: bool = True
) -> None:
    """The same scores, and the same rows in the same order above the last place's score: among rows
    scoring exactly that (a document and its duplicate), which made the cut is the order lists were
    scanned in, as one IVF's threads also decide it. Without `ties_ordered`, rows of equal score may
    come in any order (Faiss's fast scan collects candidates in a reservoir, not an id-ordered heap)."""
    np.testing.assert_allclose(found[0], expected[0], rtol=1e-6)
    for got, want, scores in zip(found[1], expected[1], expected[0], strict=True):
        decided = scores > scores[-1]
        if ties_ordered:
            assert got[decided].tolist() == want[decided].tolist()
        else:
            level = (-scores[decided]).tolist()
            assert sorted(zip(level, got[decided].tolist(), strict=True)) == sorted(
                zip(level, want[decided].tolist(), strict=True)
            )


KINDS = ("none", "sq8", "pq", "pq4")
SPECS = [IndexSpec(type="ivf", nlist=8, nprobe=3, compression=c, refine=30) for c in KINDS]


@pytest.mark.parametrize("spec", SPECS, ids=["flat lists", "sq8", "pq", "pq4 (fast scan)"])
def test_lists_and_their_tail_find_what_one_ivf_of_every_row_finds(spec: IndexSpec, tmp_path: Path) -> None:
    rows = rows_of(3000)
    rows[2800:2850] = rows[:50]  # ties between the parts: ordered as one IVF orders them
    whole = build_ann(spec, "ivf", rows)
    assert whole is not None
    # The same trained lists over the first 2,800 rows, then the last 200 through a checkpoint's path.
    faiss.write_index(whole, str(tmp_path / "whole.faiss"))
    first = faiss.read_index(str(tmp_path / "whole.faiss"))
    first.reset()
    first.add(rows[:2800])
    faiss.write_index(first, str(tmp_path / ANN_FILE))
    stacked = extend_structure(tmp_path, "ivf", rows, 2800)
    assert isinstance(stacked, StackedIVF) and (stacked.base.ntotal, stacked.tail.ntotal) == (2800, 200)
    queries = np.concatenate([rows_of(40, seed=9), rows[:5]])
    alive = np.ones(3000, bool)
    alive[::5] = False  # deleted rows, in both parts
    for kept in (None, alive):
        for refine_from in (None, rows):
            expected = ann_search(whole, spec, queries, 10, kept, refine_from)
            found = ann_search(stacked, spec, queries, 10, kept, refine_from)
            assert_same_but_ties_at_the_last_place(found, expected, spec.compression != "pq4")
    assert (found[1] >= 2800).any() and not (found[1] % 5 == 0).any()
    assert {2801, 1} <= set(found[1][-4])  # a row and its copy in the tail, both found


def test_folded_fast_scan_lists_hold_every_row(tmp_path: Path) -> None:
    """A fold re-encodes the tail's rows instead of merging the tail in: Faiss 1.15's `merge_from` on
    fast-scan (pq4) lists corrupted the heap (a crash, or rows missing, within a few dozen folds)."""
    spec = IndexSpec(type="ivf", nlist=4, nprobe=4, compression="pq4")
    for trial in range(30):
        folder = tmp_path / str(trial)
        folder.mkdir()
        rows = rows_of(1110, seed=trial)
        lists = build_ann(spec, "ivf", rows[:1000])
        assert lists is not None
        faiss.write_index(lists, str(folder / ANN_FILE))
        stacked = extend_structure(folder, "ivf", rows[:1090], 1000)  # a tail of 90 rows
        assert isinstance(stacked, StackedIVF)
        faiss.write_index(stacked.tail, str(folder / TAIL_FILE))
        folded = extend_structure(folder, "ivf", rows, 1090)  # 110 past the lists: folded
        assert not isinstance(folded, StackedIVF) and folded.ntotal == 1110
        _, found = ann_search(folded, spec, rows[1000:], 1110, None)
        assert all(1000 + i in found[i] for i in range(110))


def top_ids(index: VectorIndex, queries: np.ndarray) -> list[int]:
    """Each query's best hit's id."""
    return [hits[0][0] for hits in index.search(queries, 1)]


def compact_index(
    folder: Path, n: int = 1000, compression: Compression = "sq8", nprobe: int = 4
) -> VectorIndex:
    """A refined compressed (sq8 unless said) IVF of `n` rows over 4 lists, all in a snapshot."""
    spec = IndexSpec(type="ivf", nlist=4, nprobe=nprobe, compression=compression, refine=20)
    index = VectorIndex(16, spec)
    index.apply([(i, row, i + 1) for i, row in enumerate(rows_of(n))], hwm=n)
    return rebase(index, checkpoint(index, folder, "c", MODEL).snapshot)


@pytest.mark.parametrize("compression", ["sq8", "pq4"])  # pq4: fast-scan lists, blocks of 32 codes
def test_appending_checkpoints_link_the_lists_grow_a_tail_and_fold_it_past_a_tenth(
    tmp_path: Path, compression: Compression
) -> None:
    index = compact_index(tmp_path, compression=compression)
    first = index.base.source
    assert first is not None and not (first / TAIL_FILE).exists()
    lists = (first / ANN_FILE).stat()
    measured = json.loads((first / "manifest.json").read_text())["recall_at_10"]
    assert measured is not None
    generations = []
    for step, count in enumerate((40, 50)):  # 40, then 90 rows past the lists: within a tenth of 1,000
        append(index, range(10_000 + 100 * step, 10_000 + 100 * step + count), seed=step + 1)
        result = checkpoint(index, tmp_path, "c", MODEL)
        index = rebase(index, result.snapshot)
        generation = result.snapshot.base.source
        assert generation is not None and not result.rebuilt_ann
        assert (generation / ANN_FILE).stat().st_ino == lists.st_ino  # linked, never rewritten
        assert (generation / ANN_FILE).stat().st_size == lists.st_size
        if compression == "pq4":  # and the file of its blocks
            assert (generation / LISTS_FILE).stat().st_ino == (first / LISTS_FILE).stat().st_ino
        ann = result.snapshot.base.ann
        assert isinstance(ann, StackedIVF) and ann.tail is not None
        assert (ann.base.ntotal, ann.tail.ntotal) == (1000, 40 + 50 * step)
        # The lists' recall is kept, not measured again over every row: it says which rows it was of.
        manifest = result.snapshot.manifest
        assert (manifest["recall_at_10"], manifest["recall_at_10_rows"]) == (measured, 1000)
        generations.append(generation)
    # What the service maps after a restart: the same two parts, finding the newest rows.
    loaded = load_snapshot(tmp_path, MODEL)
    assert loaded is not None and isinstance(loaded.base.ann, StackedIVF)
    newest = rows_of(50, seed=2)
    assert top_ids(index, newest[:5]) == list(range(10_100, 10_105))
    append(index, range(20_000, 20_020), seed=7)  # 110 rows past the lists: folded into one structure
    result = checkpoint(index, tmp_path, "c", MODEL)
    generation = result.snapshot.base.source
    assert generation is not None and not (generation / TAIL_FILE).exists()
    assert (generation / ANN_FILE).stat().st_ino != lists.st_ino
    folded = result.snapshot.base.ann
    assert not isinstance(folded, StackedIVF) and folded is not None and folded.ntotal == 1110
    assert result.snapshot.manifest["recall_at_10_rows"] == 1110  # measured again over the folded lists
    index = rebase(index, result.snapshot)
    assert top_ids(index, rows_of(20, seed=7)[:3]) == [20_000, 20_001, 20_002]
    assert top_ids(index, newest[:2]) == [10_100, 10_101]


@pytest.mark.parametrize("compression", ["sq8", "pq4"])
def test_served_lists_are_mapped_unless_faiss_copies_them(tmp_path: Path, compression: Compression) -> None:
    compact_index(tmp_path, compression=compression)
    loaded = load_snapshot(tmp_path, MODEL)  # what a starting worker serves
    assert loaded is not None and loaded.base.ann is not None
    maps = Path("/proc/self/maps").read_text().splitlines()
    mapped = {line.rsplit("/", 1)[-1] for line in maps if str(tmp_path) in line}
    # Both kinds' lists are shared through the page cache: sq8's in the structure file, fast-scan (pq4)
    # blocks in a file of their own, which Faiss would otherwise copy into each worker's memory.
    assert (ANN_FILE in mapped, LISTS_FILE in mapped) == (compression == "sq8", compression == "pq4")
    assert isinstance(
        faiss.downcast_InvertedLists(faiss.extract_index_ivf(loaded.base.ann).invlists),
        faiss.OnDiskInvertedLists if compression == "pq4" else faiss.ArrayInvertedLists,
    )


@pytest.mark.parametrize("compression", ["sq8", "pq4"])
def test_lists_with_a_tail_search_a_corpus_probing_more_lists_than_it_has(
    tmp_path: Path, compression: Compression
) -> None:
    """nprobe 8 over 4 lists: fast scan (pq4) read 8 lists' numbers from 4-wide arrays and crashed."""
    index = compact_index(tmp_path, compression=compression, nprobe=8)
    append(index, range(5000, 5030), seed=3)
    index = rebase(index, checkpoint(index, tmp_path, "c", MODEL).snapshot)
    assert isinstance(index.base.ann, StackedIVF)
    assert top_ids(index, rows_of(30, seed=3)[:3]) == [5000, 5001, 5002]


def test_a_generation_whose_tail_does_not_cover_its_rows_is_not_served(tmp_path: Path) -> None:
    index = compact_index(tmp_path)
    append(index, range(5000, 5030), seed=3)
    generation = checkpoint(index, tmp_path, "c", MODEL).snapshot.base.source
    assert generation is not None
    tail = faiss.read_index(str(generation / TAIL_FILE))
    tail.reset()  # a tail holding none of the 30 rows it should
    faiss.write_index(tail, str(generation / TAIL_FILE))
    assert load_snapshot(tmp_path, MODEL) is None  # rebuilt from the database instead


@pytest.mark.parametrize("compression", ["sq8", "pq4"])
def test_without_hard_links_the_lists_are_copied(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, compression: Compression
) -> None:
    index = compact_index(tmp_path, compression=compression)
    lists = index.base.source
    assert lists is not None

    def no_links(source: object, target: object) -> None:
        raise OSError(errno.EXDEV, "links are not supported here")

    monkeypatch.setattr("indexes.row_file.os.link", no_links)
    append(index, range(5000, 5030), seed=3)
    result = checkpoint(index, tmp_path, "c", MODEL)
    generation = result.snapshot.base.source
    assert generation is not None and (generation / TAIL_FILE).exists()
    names = [ANN_FILE] + ([LISTS_FILE] if compression == "pq4" else [])
    for name in names:
        assert (generation / name).stat().st_ino != (lists / name).stat().st_ino
        assert (generation / name).read_bytes() == (lists / name).read_bytes()
    assert top_ids(rebase(index, result.snapshot), rows_of(30, seed=3)[:2]) == [5000, 5001]


def test_a_full_disk_at_the_tail_leaves_the_previous_generation_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = compact_index(tmp_path)
    first = index.base.source
    assert first is not None
    files = {path.name: path.read_bytes() for path in first.iterdir()}
    append(index, range(5000, 5030), seed=3)
    real_write = faiss.write_index

    def full_at_the_tail(ann: faiss.Index, path: str) -> None:
        if path.endswith(TAIL_FILE):
            raise OSError(errno.ENOSPC, "No space left on device", path)
        real_write(ann, path)

    monkeypatch.setattr(faiss, "write_index", full_at_the_tail)
    with pytest.raises(OSError):
        checkpoint(index, tmp_path, "c", MODEL)
    monkeypatch.undo()
    assert [path.name for path in tmp_path.glob("gen-*")] == [first.name]
    assert {path.name: path.read_bytes() for path in first.iterdir()} == files  # appended rows cut back
    previous = load_snapshot(tmp_path, MODEL)
    assert previous is not None and previous.base.source == first
    assert top_ids(index, rows_of(30, seed=3)[:2]) == [5000, 5001]  # served from memory meanwhile
    retried = checkpoint(index, tmp_path, "c", MODEL)
    assert isinstance(retried.snapshot.base.ann, StackedIVF) and retried.snapshot.base.ann.tail.ntotal == 30


def test_a_checkpoint_of_deletions_only_links_the_lists_and_writes_no_tail(tmp_path: Path) -> None:
    index = compact_index(tmp_path)
    first = index.base.source
    assert first is not None
    index.apply(deletes=[(7, index.hwm + 1)], hwm=index.hwm + 1)
    result = checkpoint(index, tmp_path, "c", MODEL)
    generation = result.snapshot.base.source
    assert generation is not None and not (generation / TAIL_FILE).exists()
    assert (generation / ANN_FILE).stat().st_ino == (first / ANN_FILE).stat().st_ino
    assert result.snapshot.manifest["format_version"] == 3  # readable by code that predates tails
    assert 7 not in {
        doc for hits in rebase(index, result.snapshot).search(rows_of(1000)[7:8], 3) for doc, _ in hits
    }


def test_a_generation_with_a_tail_is_format_4_which_code_before_tails_refuses(tmp_path: Path) -> None:
    index = compact_index(tmp_path)
    append(index, range(5000, 5010), seed=3)
    result = checkpoint(index, tmp_path, "c", MODEL)
    assert result.snapshot.manifest["format_version"] == 4
    assert load_snapshot(tmp_path, MODEL) is not None


def test_a_generation_swept_under_a_worker_is_rebuilt_not_extended(tmp_path: Path) -> None:
    index = compact_index(tmp_path)
    source = index.base.source
    assert source is not None
    shutil.rmtree(source)  # another worker's later generation made this one stale, and it was removed
    append(index, range(5000, 5010), seed=3)
    result = checkpoint(index, tmp_path, "c", MODEL)
    assert result.rebuilt_ann and result.snapshot.base.ann is not None
    assert top_ids(rebase(index, result.snapshot), rows_of(10, seed=3)[:2]) == [5000, 5001]
