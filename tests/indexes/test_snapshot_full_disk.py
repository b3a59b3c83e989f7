"""A snapshot or lexical save that hits ENOSPC (injected where a real full disk would surface it: at
fsync, which delayed allocation makes the first call to notice): the previous generation stays current
and loadable, nothing half-written is left, and the next save after space is freed succeeds.
(tests/processes/test_full_disk.py fills a real tmpfs under a running server where the test may mount one.)"""

from __future__ import annotations

import errno
from pathlib import Path

import numpy as np
import pytest

import indexes.snapshot as snapshot_module
from indexes.checkpoint import checkpoint, rebase
from indexes.lexical import LexicalIndex
from indexes.snapshot import ModelIdentity, load_snapshot
from indexes.vector_index import VectorIndex

MODEL = ModelIdentity("m", "m@1", "22" * 32, 8)


def no_space(*_: object) -> None:
    """What a full disk answers."""
    raise OSError(errno.ENOSPC, "No space left on device")


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
    real_fsync, calls = snapshot_module._fsync_file, []

    def fsync_until_full(path: Path) -> None:
        calls.append(path)
        if len(calls) >= failing_call:
            no_space()
        real_fsync(path)

    monkeypatch.setattr(snapshot_module, "_fsync_file", fsync_until_full)
    with pytest.raises(OSError) as raised:
        checkpoint(index, tmp_path, "c", MODEL)
    assert raised.value.errno == errno.ENOSPC
    assert not leftovers(tmp_path)
    previous = load_snapshot(tmp_path, MODEL)
    assert previous is not None and previous.hwm == 20 and len(previous.base.ids) == 20

    monkeypatch.setattr(snapshot_module, "_fsync_file", real_fsync)  # space freed
    sealed = rebase(index, checkpoint(index, tmp_path, "c", MODEL).snapshot)
    assert sealed.hwm == 30 and len(sealed) == 30
    assert load_snapshot(tmp_path, MODEL).hwm == 30  # type: ignore[union-attr]


def test_a_failed_lexical_save_keeps_the_previous_generation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = LexicalIndex()
    index.apply([(1, "towers spread the virus"), (2, "the moon landing was staged")], hwm=2)
    index.save(tmp_path)
    index.apply([(3, "onions in socks cure the flu")], hwm=3)
    monkeypatch.setattr(np, "save", no_space)
    with pytest.raises(OSError):
        index.save(tmp_path)
    monkeypatch.undo()
    assert not leftovers(tmp_path)
    previous = LexicalIndex.load(tmp_path)
    assert previous is not None and previous.hwm == 2 and len(previous) == 2
    index.save(tmp_path)
    assert LexicalIndex.load(tmp_path).hwm == 3  # type: ignore[union-attr]
