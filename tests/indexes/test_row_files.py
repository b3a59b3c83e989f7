"""Row files shared by generations (issue 41): a checkpoint that only appends links the old generation's
float32 and float16 rows and writes its new rows after theirs; the bytes any generation maps are never
written into, whoever checkpoints next; a given-up checkpoint takes its rows back; format 2 still loads."""

from __future__ import annotations

import errno
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

import indexes.durable as durable
import indexes.sealed as sealed_module
import indexes.snapshot as snapshot_module
from indexes.checkpoint import checkpoint, rebase
from indexes.row_file import map_rows
from indexes.sealed import REFINE_FILE, ROWS_FILE
from indexes.snapshot import load_snapshot
from indexes.spec import IndexSpec
from indexes.vector_index import VectorIndex
from tests.helpers.index_rows import MODEL, append, rows_of

REFINED = IndexSpec(type="ivf", nlist=4, nprobe=4, compression="sq8", refine=20)


def sealed_index(folder: Path, n: int = 300) -> VectorIndex:
    """A refined IVF index of `n` rows, all in a snapshot."""
    index = VectorIndex(16, REFINED)
    index.apply([(i, row, i + 1) for i, row in enumerate(rows_of(n))], hwm=n)
    return rebase(index, checkpoint(index, folder, "c", MODEL).snapshot)


def inode(generation: Path | None, name: str) -> int:
    """The file's inode (shared by hard links)."""
    assert generation is not None
    return (generation / name).stat().st_ino


def own_rows(generation: Path, name: str, dtype: type) -> np.ndarray:
    """The rows a generation owns in one of its row files (its manifest's count), copied."""
    count = json.loads((generation / "manifest.json").read_text())["count"]
    return np.array(map_rows(generation / name, dtype, count, 16))


def test_an_appending_checkpoint_links_both_row_files_and_writes_only_the_new_rows(tmp_path: Path) -> None:
    index = sealed_index(tmp_path)
    first = index.base.source
    assert first is not None
    before = {
        name: own_rows(first, name, dtype)
        for name, dtype in ((ROWS_FILE, np.float32), (REFINE_FILE, np.float16))
    }
    append(index, range(1000, 1020), seed=1)
    index.apply(deletes=[(3, index.hwm + 1)], hwm=index.hwm + 1)  # one dead row: kept, marked
    extended = checkpoint(index, tmp_path, "c", MODEL)
    second = extended.snapshot.base.source
    assert not extended.rebuilt_ann and second is not None
    for name in (ROWS_FILE, REFINE_FILE):
        assert inode(second, name) == inode(first, name)  # linked, and 20 rows written after the 300
        np.testing.assert_array_equal(own_rows(first, name, np.float32 if name == ROWS_FILE else np.float16),
                                      before[name])  # fmt: skip
    base = extended.snapshot.base
    assert len(base.vectors) == 320 and (second / ROWS_FILE).stat().st_size == 320 * 16 * 4
    np.testing.assert_allclose(np.asarray(base.vectors[300:]), rows_of(20, seed=1), atol=1e-6)
    np.testing.assert_array_equal(np.asarray(base.refine), np.asarray(base.vectors).astype(np.float16))
    assert (
        not base.alive[3]
        and rebase(index, extended.snapshot).search(rows_of(20, seed=1)[:1], 1)[0][0][0] == 1000
    )

    index = rebase(index, extended.snapshot)
    index.apply(deletes=[(doc, index.hwm + 1 + doc) for doc in range(0, 300, 2)], hwm=index.hwm + 400)
    compacted = checkpoint(index, tmp_path, "c", MODEL)  # half dead: compacted into new files
    third = compacted.snapshot.base.source
    assert compacted.rebuilt_ann and inode(third, ROWS_FILE) != inode(second, ROWS_FILE)
    assert inode(third, REFINE_FILE) != inode(second, REFINE_FILE)
    assert len(compacted.snapshot.base.vectors) == 169  # 320 rows, 151 dead


def test_a_file_another_worker_appended_to_is_never_written_into(tmp_path: Path) -> None:
    worker_a = sealed_index(tmp_path)
    worker_b = rebase(worker_a, load_snapshot(tmp_path, MODEL))  # type: ignore[arg-type]  # same generation
    first = worker_a.base.source
    append(worker_a, range(1000, 1010), seed=2)
    ahead = checkpoint(worker_a, tmp_path, "c", MODEL).snapshot  # appends to the shared files
    assert inode(ahead.base.source, ROWS_FILE) == inode(first, ROWS_FILE)
    kept = np.array(ahead.base.vectors)
    append(worker_b, range(2000, 2005), seed=3)  # worker B, still on the first generation, checkpoints
    behind = checkpoint(worker_b, tmp_path, "c", MODEL).snapshot
    assert inode(behind.base.source, ROWS_FILE) != inode(first, ROWS_FILE)  # a new file, not the shared one
    assert inode(behind.base.source, REFINE_FILE) != inode(first, REFINE_FILE)
    np.testing.assert_array_equal(np.asarray(ahead.base.vectors), kept)  # A's mapped rows untouched
    assert behind.base.ids[-5:].tolist() == list(range(2000, 2005)) and len(behind.base.ids) == 305


@pytest.mark.parametrize("failing", ["manifest.json", ".CURRENT"])  # staged, or while publishing
def test_a_checkpoint_given_up_takes_its_appended_rows_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    index = sealed_index(tmp_path)
    first = index.base.source
    assert first is not None
    sizes = {name: (first / name).stat().st_size for name in (ROWS_FILE, REFINE_FILE)}
    append(index, range(1000, 1010), seed=4)
    real_fsync = durable.fsync_file

    def full_at_the_manifest(path: Path) -> None:
        if path.name.startswith(failing):
            raise OSError(errno.ENOSPC, "No space left on device")
        real_fsync(path)

    for module in (durable, sealed_module, snapshot_module):
        monkeypatch.setattr(module, "fsync_file", full_at_the_manifest)
    with pytest.raises(OSError):
        checkpoint(index, tmp_path, "c", MODEL)
    assert {name: (first / name).stat().st_size for name in sizes} == sizes  # the appended rows cut off
    assert load_snapshot(tmp_path, MODEL).base.source == first  # type: ignore[union-attr]
    monkeypatch.undo()
    again = checkpoint(index, tmp_path, "c", MODEL).snapshot  # space freed: the files linked once more
    assert inode(again.base.source, ROWS_FILE) == inode(first, ROWS_FILE) and len(again.base.ids) == 310


def test_rows_left_by_a_died_append_make_the_next_checkpoint_write_new_files(tmp_path: Path) -> None:
    index = sealed_index(tmp_path)
    first = index.base.source
    assert first is not None
    with (first / ROWS_FILE).open("ab") as tail:  # a checkpoint killed mid-append (kill -9: no undo)
        tail.write(b"\x7f" * 16 * 4 * 3)
    assert load_snapshot(tmp_path, MODEL) is not None  # the generation maps its own 300 rows still
    append(index, range(1000, 1004), seed=5)
    result = checkpoint(index, tmp_path, "c", MODEL).snapshot
    assert inode(result.base.source, ROWS_FILE) != inode(first, ROWS_FILE)
    assert inode(result.base.source, REFINE_FILE) == inode(first, REFINE_FILE)  # that one was whole
    np.testing.assert_allclose(np.asarray(result.base.vectors[:300]), rows_of(300), atol=1e-6)


def test_a_format_2_generation_loads_and_its_next_checkpoint_writes_raw_rows(tmp_path: Path) -> None:
    index = sealed_index(tmp_path)
    generation = index.base.source
    assert generation is not None
    # The generation as format 2 wrote it: .npy rows and float16 rows.
    np.save(generation / "vectors.npy", np.array(index.base.vectors))
    np.save(generation / "vectors.f16.npy", np.array(index.base.refine))
    (generation / ROWS_FILE).unlink()
    (generation / REFINE_FILE).unlink()
    manifest = json.loads((generation / "manifest.json").read_text())
    (generation / "manifest.json").write_text(json.dumps({**manifest, "format_version": 2}))
    loaded = load_snapshot(tmp_path, MODEL)
    assert loaded is not None and loaded.base.refine is not None
    np.testing.assert_allclose(np.asarray(loaded.base.vectors), rows_of(300), atol=1e-6)
    index = rebase(index, loaded)
    append(index, range(1000, 1003), seed=6)
    upgraded = checkpoint(index, tmp_path, "c", MODEL).snapshot
    # 4 where its IVF got a tail (tests/indexes/test_ann_tail.py), else 3: raw row files either way.
    assert upgraded.manifest["format_version"] in (3, 4) and upgraded.base.source is not None
    assert not (upgraded.base.source / "vectors.npy").exists() and len(upgraded.base.vectors) == 303
    np.testing.assert_array_equal(
        np.asarray(upgraded.base.refine), np.asarray(upgraded.base.vectors).astype(np.float16)
    )
    shutil.rmtree(generation)  # the old generation gone: the new one stands alone
    assert load_snapshot(tmp_path, MODEL) is not None
