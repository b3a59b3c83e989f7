"""A snapshot or lexical save that hits ENOSPC (injected where a real full disk would surface it: at
fsync, which delayed allocation makes the first call to notice): the previous generation stays current
and loadable, nothing half-written is left, and the next save after space is freed succeeds; a compact
(refined) IVF rebuild that fails so leaves the previous index serving.
(tests/processes/test_full_disk.py fills a real tmpfs under a running server where the test may mount one.)"""

from __future__ import annotations

import errno
from pathlib import Path

import numpy as np
import pytest

import indexes.durable as durable
import indexes.lexical_write as lexical_write
import indexes.sealed as sealed_module
import indexes.snapshot as snapshot_module
from indexes.checkpoint import checkpoint, rebase
from indexes.lexical import LexicalIndex
from indexes.npy_append import NpyAppender
from indexes.snapshot import ModelIdentity, load_snapshot
from indexes.spec import IndexSpec
from indexes.vector_index import VectorIndex
from tests.helpers.hits import assert_same_hits

MODEL = ModelIdentity("m", "m@1", "22" * 32, 8)


def no_space(*_: object) -> None:
    """What a full disk answers."""
    raise OSError(errno.ENOSPC, "No space left on device")


def fsync_with(monkeypatch: pytest.MonkeyPatch, replacement: object) -> None:
    """Every writer's fsync replaced (each module holds its own name for it)."""
    for module in (durable, lexical_write, sealed_module, snapshot_module):
        monkeypatch.setattr(module, "fsync_file", replacement)


def leftovers(folder: Path) -> list[Path]:
    """Half-written generations or pointers."""
    return [p for p in folder.iterdir() if p.name.startswith(".tmp-") or p.name.startswith(".CURRENT")]


@pytest.mark.parametrize("failing_call", [1, 3, 6])
def test_a_failed_snapshot_leaves_the_previous_generation_current(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing_call: int
) -> None:
    rows = np.random.default_rng(0).normal(size=(30, 8)).astype(np.float32)
    index = VectorIndex(8)
    index.apply([(i, rows[i], i + 1) for i in range(20)], hwm=20)
    index = rebase(index, checkpoint(index, tmp_path, "c", MODEL).snapshot)
    index.apply([(i, rows[i], i + 1) for i in range(20, 30)], hwm=30)
    real_fsync, calls = durable.fsync_file, []

    def fsync_until_full(path: Path) -> None:
        calls.append(path)
        if len(calls) >= failing_call:
            no_space()
        real_fsync(path)

    fsync_with(monkeypatch, fsync_until_full)
    with pytest.raises(OSError) as raised:
        checkpoint(index, tmp_path, "c", MODEL)
    assert raised.value.errno == errno.ENOSPC
    assert not leftovers(tmp_path)
    previous = load_snapshot(tmp_path, MODEL)
    assert previous is not None and previous.hwm == 20 and len(previous.base.ids) == 20

    fsync_with(monkeypatch, real_fsync)  # space freed
    sealed = rebase(index, checkpoint(index, tmp_path, "c", MODEL).snapshot)
    assert sealed.hwm == 30 and len(sealed) == 30
    assert load_snapshot(tmp_path, MODEL).hwm == 30  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "failing", ["postings streamed", "postings closed", "arrays saved", "fsync", "manifest"]
)
def test_a_failed_lexical_save_keeps_the_previous_generation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    index = LexicalIndex()
    index.apply([(1, "towers spread the virus"), (2, "the moon landing was staged")], hwm=2)
    index.save(tmp_path)
    index.apply([(3, "onions in socks cure the flu")], hwm=3)
    real_fsync = durable.fsync_file

    def fsync_until_full(path: Path) -> None:  # where delayed allocation first reports a full disk
        if failing == "fsync" or path.name == "manifest.json":
            no_space()
        real_fsync(path)

    if failing == "postings streamed":
        monkeypatch.setattr(NpyAppender, "append", no_space)
    elif failing == "postings closed":  # after every byte was written: at the header's rewrite
        monkeypatch.setattr(NpyAppender, "close", lambda self: (self._handle.close(), no_space()))
    elif failing == "arrays saved":
        monkeypatch.setattr(np, "save", no_space)
    else:  # the staged arrays' flush, or the manifest's while publishing
        fsync_with(monkeypatch, fsync_until_full)
    with pytest.raises(OSError):
        index.save(tmp_path)
    monkeypatch.undo()
    assert not leftovers(tmp_path)
    assert [doc for doc, _ in index.search("onions socks", 3)] == [3]  # still served, as before the save
    previous = LexicalIndex.load(tmp_path)
    assert previous is not None and previous.hwm == 2 and len(previous) == 2
    index.save(tmp_path)
    assert LexicalIndex.load(tmp_path).hwm == 3  # type: ignore[union-attr]


@pytest.mark.parametrize("failing_file", ["ann.faiss", "vectors.f16", "manifest.json"])
def test_a_full_disk_during_a_compact_rebuild_leaves_the_previous_index_serving(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing_file: str
) -> None:
    spec = IndexSpec(type="ivf", nlist=8, nprobe=4, compression="sq8", refine=32)
    rows = np.random.default_rng(1).normal(size=(900, 8)).astype(np.float32)
    index = VectorIndex(8, spec)
    index.apply([(i, rows[i], 1) for i in range(600)], hwm=1)
    index = rebase(index, checkpoint(index, tmp_path, "c", MODEL).snapshot)
    index.apply([(i, rows[i], 2) for i in range(600, 900)], hwm=2)
    index.apply(deletes=[(i, 3) for i in range(0, 600, 2)], hwm=3)  # half dead: the rebuild is a full one
    queries = rows[::50]
    serving = index.search(queries, 10)
    real_fsync = durable.fsync_file

    def fsync_until_full(path: Path) -> None:
        if path.name == failing_file:
            no_space()
        real_fsync(path)

    fsync_with(monkeypatch, fsync_until_full)
    with pytest.raises(OSError):
        checkpoint(index, tmp_path, "c", MODEL)
    assert not leftovers(tmp_path)
    assert index.search(queries, 10) == serving  # the index in memory never stopped serving
    previous = load_snapshot(tmp_path, MODEL)
    assert previous is not None and previous.hwm == 1 and previous.base.refine is not None
    assert_same_hits(rebase(index, previous).search(queries, 10), serving)  # as a restart would now answer

    fsync_with(monkeypatch, real_fsync)  # space freed
    rebuilt = checkpoint(index, tmp_path, "c", MODEL)
    assert rebuilt.rebuilt_ann and rebuilt.rows == 600 and rebuilt.snapshot.base.refine is not None
