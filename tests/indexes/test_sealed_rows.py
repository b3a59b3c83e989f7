"""A checkpoint's rows: copied out of the index's lock, written once into the new generation's file, and
when only appended, the old generation's files linked and the new rows written after theirs (issue 41: 14
GiB at 10M rows were written twice, under the lock; then 21 GiB of rows once per checkpoint)."""

from __future__ import annotations

import errno
import threading
from pathlib import Path

import numpy as np
import pytest

from indexes import sealed as sealed_module
from indexes import snapshot as snapshot_module
from indexes.checkpoint import checkpoint, rebase
from indexes.durable import STAGING
from indexes.row_file import RowAppender
from indexes.sealed import write_vectors
from indexes.snapshot import ModelIdentity, SnapshotContent, load_snapshot, save_snapshot
from indexes.spec import IndexSpec
from indexes.vector_index import VectorIndex
from tests.helpers.index_rows import rows_of

MODEL = ModelIdentity("m", "m@1", "00" * 32, 16)
IVF = IndexSpec(type="ivf", nlist=4, nprobe=4)


def sealed_index(tmp_path: Path, spec: IndexSpec | None = None, n: int = 30) -> VectorIndex:
    """An index of `n` rows, all in a snapshot."""
    index = VectorIndex(16, spec)
    index.apply([(i, row, i + 1) for i, row in enumerate(rows_of(n))], hwm=n)
    return rebase(index, checkpoint(index, tmp_path, "c", MODEL).snapshot)


def test_sealed_rows_hand_on_the_mapped_base_and_are_written_a_chunk_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sealed_module, "_CHUNK_ROWS", 7)  # chunk boundaries inside a small base
    rows = rows_of(30)
    index = sealed_index(tmp_path / "snap")
    for compact in (True, False):  # nothing written since the snapshot: its mapped rows, not a copy
        sealed = index.sealed_rows(compact=compact)
        assert np.shares_memory(sealed.base_vectors, index.base.vectors)
        assert sealed.keep is None and not sealed.appended  # the old base's rows exactly
    extra = rows_of(3, seed=4)
    index.apply([(30 + i, extra[i], 40 + i) for i in range(3)], deletes=[(i, 50 + i) for i in (0, 7, 8, 29)])
    sealed = index.sealed_rows(compact=True)
    assert np.shares_memory(sealed.base_vectors, index.base.vectors)
    assert sealed.keep is not None and sealed.appended == 3  # four rows left out, three appended
    written = write_vectors(tmp_path / "compact.f32", sealed)
    live = [i for i in range(30) if i not in (0, 7, 8, 29)]
    assert isinstance(written, np.memmap)  # mapped from the file: the page cache, not the process, holds it
    assert sealed.ids().tolist() == [*live, 30, 31, 32] and sealed.appended == 3 and sealed.alive.all()
    np.testing.assert_allclose(written, np.concatenate([rows[live], extra]), atol=1e-6)
    kept = index.sealed_rows(compact=False)
    assert kept.ids().tolist() == [*range(30), 30, 31, 32] and (~kept.alive).sum() == 4
    np.testing.assert_allclose(write_vectors(tmp_path / "kept.f32", kept)[:30], rows, atol=1e-6)


def test_writes_go_on_while_a_checkpoint_writes_its_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = sealed_index(tmp_path, n=40)
    index.apply(deletes=[(0, 100)], hwm=100)
    writing, release = threading.Event(), threading.Event()
    real_append = RowAppender.append

    def slow_append(self: RowAppender, piece: np.ndarray) -> None:
        writing.set()
        assert release.wait(30)
        real_append(self, piece)

    monkeypatch.setattr(RowAppender, "append", slow_append)
    outcome: list[object] = []
    worker = threading.Thread(target=lambda: outcome.append(checkpoint(index, tmp_path, "c", MODEL)))
    worker.start()
    try:
        assert writing.wait(30)
        applied = threading.Thread(
            target=index.apply, args=([(77, rows_of(1, seed=3)[0], 101)],), kwargs={"hwm": 101}
        )
        applied.start()
        applied.join(5)  # the lock was held for the whole copy before: this write waited for it
        assert not applied.is_alive(), "a write waited for the checkpoint's rows to be written"
    finally:
        release.set()
        worker.join(30)
    result = outcome[0]
    assert result.snapshot.hwm == 100 and result.rows == 39  # type: ignore[attr-defined]
    resumed = rebase(index, result.snapshot)  # type: ignore[attr-defined]
    assert resumed.hwm == 101 and resumed.search(rows_of(1, seed=3), 1)[0][0][0] == 77


def test_a_full_disk_while_the_rows_are_written_leaves_nothing_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = sealed_index(tmp_path)
    index.apply([(99, rows_of(1, seed=5)[0], 50)], hwm=50)

    def full(self: RowAppender, piece: np.ndarray) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(RowAppender, "append", full)
    with pytest.raises(OSError):
        checkpoint(index, tmp_path, "c", MODEL)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(STAGING)]
    previous = load_snapshot(tmp_path, MODEL)
    assert previous is not None and previous.hwm == 30


def test_rows_held_in_memory_are_saved_as_a_whole_generation(tmp_path: Path) -> None:
    rows = rows_of(12)
    ids = np.arange(100, 112, dtype=np.int64)[::-1].copy()
    content = SnapshotContent(rows, ids, np.ones(12, bool), 7, "flat", IndexSpec(type="flat").to_dict())
    generation = save_snapshot(tmp_path, content, "c", MODEL)
    loaded = load_snapshot(tmp_path, MODEL)
    assert loaded is not None and loaded.base.source == generation and loaded.hwm == 7
    np.testing.assert_array_equal(loaded.base.vectors, rows)
    assert loaded.base.ids.tolist() == ids.tolist()
    assert loaded.base.sorted_ids.tolist() == sorted(ids.tolist())
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(STAGING)]


REFINED = IndexSpec(type="ivf", nlist=4, nprobe=4, compression="sq8", refine=20)


def test_float16_rows_are_copied_from_the_old_generation_bit_for_bit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = sealed_index(tmp_path, REFINED, n=400)  # the first generation converts its float32 rows
    assert index.base.refine is not None

    def converted(_: np.ndarray) -> None:
        raise AssertionError("float16 rows converted from the float32 rows again")

    monkeypatch.setattr(snapshot_module, "row_chunks", converted)
    index.apply([(1000 + i, row, 500 + i) for i, row in enumerate(rows_of(20, seed=2))], hwm=519)
    extended = checkpoint(index, tmp_path, "c", MODEL)  # incremental: every old row, then the new ones
    index.apply(deletes=[(doc, 600) for doc in range(0, 400, 3)], hwm=600)
    index.apply([(2000, rows_of(1, seed=3)[0], 601)], hwm=601)
    index = rebase(index, extended.snapshot)
    compacted = checkpoint(index, tmp_path, "c", MODEL)  # a third dead: compacted, rebuilt
    assert not extended.rebuilt_ann and compacted.rebuilt_ann
    for result in (extended, compacted):
        base = result.snapshot.base
        assert base.refine is not None and len(base.refine) == len(base.vectors)
        np.testing.assert_array_equal(np.asarray(base.refine), np.asarray(base.vectors).astype(np.float16))
    assert 2000 in compacted.snapshot.base.ids and 0 not in compacted.snapshot.base.ids
