"""Fast-scan (pq4) lists in a file of their own (issue 41): mapped read-only, they give the hits and scores
the block lists in memory give, whatever the lists' sizes (empty, under a block, whole blocks and not);
a private read takes rows again without touching the file; a generation written so is format 5, and a
pq4 generation of the layout before (blocks in the structure file) is still served and folds into it."""

from __future__ import annotations

import errno
import json
from pathlib import Path

import faiss
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from indexes.ann import ann_search, build_ann
from indexes.ann_lists import LISTS_FILE, read_mapped, read_private, write_shared
from indexes.ann_tail import ANN_FILE
from indexes.checkpoint import checkpoint, rebase
from indexes.snapshot import load_snapshot
from indexes.spec import IndexSpec
from indexes.vector_index import VectorIndex
from tests.helpers.index_rows import MODEL, append, rows_of

SPEC = IndexSpec(type="ivf", nlist=16, nprobe=16, compression="pq4", pq_m=4)
TRAINED = build_ann(SPEC, "ivf", rows_of(1200, seed=99))


def lists_of(rows: np.ndarray) -> faiss.Index:
    """A pq4 IVF trained once, holding `rows` (ids their row numbers)."""
    assert TRAINED is not None
    index = faiss.clone_index(TRAINED)
    index.reset()
    index.add(rows)
    return index


def sizes(index: faiss.Index) -> list[int]:
    """Each list's row count."""
    lists = faiss.extract_index_ivf(index).invlists
    return [lists.list_size(i) for i in range(lists.nlist)]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.integers(1, 700), seed=st.integers(0, 1000))
def test_mapped_lists_give_the_hits_and_scores_of_the_blocks(
    tmp_path_factory: pytest.TempPathFactory, n: int, seed: int
) -> None:
    folder = tmp_path_factory.mktemp("lists")
    blocks = lists_of(rows_of(n, seed=seed))
    write_shared(blocks, folder / ANN_FILE)
    mapped = read_mapped(folder / ANN_FILE)
    assert isinstance(faiss.downcast_InvertedLists(mapped.invlists), faiss.OnDiskInvertedLists)
    assert sizes(mapped) == sizes(blocks) and mapped.ntotal == n
    queries = rows_of(20, seed=seed + 1)
    for k in (1, 10, n + 5):  # past the rows there are: -1s where the blocks give -1s
        expected = blocks.search(queries, k)
        found = mapped.search(queries, k)
        np.testing.assert_array_equal(found[1], expected[1])
        np.testing.assert_array_equal(found[0], expected[0])


def test_lists_of_every_size_are_written_tight_and_aligned(tmp_path: Path) -> None:
    assert TRAINED is not None
    rows = rows_of(20_000, seed=4)
    _, assigned = TRAINED.quantizer.search(rows, 1)
    wanted = [0, 1, 31, 32, 33, 64, 65]  # rows in lists 0-6: empty, under, at and past whole blocks
    picked = np.concatenate([np.flatnonzero(assigned[:, 0] == i)[:count] for i, count in enumerate(wanted)])
    index = lists_of(rows[picked])
    assert sizes(index)[: len(wanted)] == wanted and not any(sizes(index)[len(wanted) :])
    write_shared(index, tmp_path / ANN_FILE)
    per_row = 4 + 8  # 4 code bytes a vector (8 4-bit codes), an 8-byte id
    expected = sum(-(-size // 32) * 32 * per_row for size in wanted)
    written = (tmp_path / LISTS_FILE).stat().st_size
    assert expected <= written < expected + 64 * faiss.extract_index_ivf(index).nlist
    mapped = read_mapped(tmp_path / ANN_FILE)  # kept: it owns the lists
    on_disk = faiss.downcast_InvertedLists(mapped.invlists)
    assert all(on_disk.lists.at(i).offset % 64 == 0 for i in range(on_disk.nlist))


def test_a_private_read_takes_rows_and_leaves_the_file_as_it_was(tmp_path: Path) -> None:
    rows = rows_of(900, seed=3)
    write_shared(lists_of(rows[:800]), tmp_path / ANN_FILE)
    before = (tmp_path / LISTS_FILE).read_bytes()
    private = read_private(tmp_path / ANN_FILE)
    assert isinstance(faiss.downcast_InvertedLists(private.invlists), faiss.BlockInvertedLists)
    private.add(rows[800:])
    np.testing.assert_array_equal(private.search(rows, 1)[1], lists_of(rows).search(rows, 1)[1])
    assert (tmp_path / LISTS_FILE).read_bytes() == before
    assert read_mapped(tmp_path / ANN_FILE).ntotal == 800


def pq4_index(n: int = 1000) -> VectorIndex:
    """A refined pq4 IVF of `n` rows over 4 lists."""
    index = VectorIndex(16, IndexSpec(type="ivf", nlist=4, nprobe=4, compression="pq4", refine=20))
    index.apply([(i, row, i + 1) for i, row in enumerate(rows_of(n))], hwm=n)
    return index


def test_a_pq4_generation_is_format_5(tmp_path: Path) -> None:
    result = checkpoint(pq4_index(), tmp_path, "c", MODEL)
    generation = result.snapshot.base.source
    assert generation is not None and (generation / LISTS_FILE).is_file()
    assert result.snapshot.manifest["format_version"] == 5  # code before it would map a wrong path
    loaded = load_snapshot(tmp_path, MODEL)
    assert loaded is not None and loaded.base.ann is not None and loaded.base.ann.ntotal == 1000


def test_a_pq4_generation_of_the_layout_before_is_served_and_folds_into_the_new_one(tmp_path: Path) -> None:
    index = pq4_index()
    generation = checkpoint(index, tmp_path, "c", MODEL).snapshot.base.source
    assert generation is not None
    # As the code before wrote it: the blocks inside the structure file, format 3.
    whole = read_private(generation / ANN_FILE)
    (generation / LISTS_FILE).unlink()
    faiss.write_index(whole, str(generation / ANN_FILE))
    manifest = json.loads((generation / "manifest.json").read_text())
    (generation / "manifest.json").write_text(json.dumps({**manifest, "format_version": 3}))
    loaded = load_snapshot(tmp_path, MODEL)
    assert loaded is not None and loaded.base.ann is not None
    _, found = ann_search(loaded.base.ann, index.spec, rows_of(1000)[:5], 5, None)
    assert found[:, 0].tolist() == [0, 1, 2, 3, 4]
    index = rebase(index, loaded)
    append(index, range(5000, 5200), seed=5)  # a fifth past the lists: folded, written the new way
    result = checkpoint(index, tmp_path, "c", MODEL)
    folded = result.snapshot.base.source
    assert folded is not None and (folded / LISTS_FILE).is_file()
    assert result.snapshot.manifest["format_version"] == 5
    index = rebase(index, result.snapshot)
    assert [hits[0][0] for hits in index.search(rows_of(200, seed=5)[:3], 1)] == [5000, 5001, 5002]


def test_a_full_disk_while_writing_folded_lists_leaves_the_previous_generation_serving(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = pq4_index()
    first = checkpoint(index, tmp_path, "c", MODEL).snapshot.base.source
    assert first is not None
    index = rebase(index, load_snapshot(tmp_path, MODEL))
    files = {path.name: path.read_bytes() for path in first.iterdir()}
    append(index, range(5000, 5200), seed=5)  # past a tenth: the fold writes ann.lists, then ann.faiss
    real_write = faiss.write_index

    def full_after_the_lists(ann: faiss.Index, path: str) -> None:
        assert (Path(path).parent / LISTS_FILE).is_file()  # written first, then given up with the rest
        raise OSError(errno.ENOSPC, "No space left on device", path)

    monkeypatch.setattr(faiss, "write_index", full_after_the_lists)
    with pytest.raises(OSError):
        checkpoint(index, tmp_path, "c", MODEL)
    monkeypatch.setattr(faiss, "write_index", real_write)
    assert [path.name for path in tmp_path.glob("gen-*")] == [first.name]  # the staged one removed
    assert {path.name: path.read_bytes() for path in first.iterdir()} == files
    previous = load_snapshot(tmp_path, MODEL)
    assert previous is not None and previous.base.source == first
    assert [hits[0][0] for hits in index.search(rows_of(200, seed=5)[:2], 1)] == [5000, 5001]
    retried = checkpoint(index, tmp_path, "c", MODEL)
    assert retried.snapshot.base.ann is not None and retried.snapshot.base.ann.ntotal == 1200
