"""VectorIndex: updates over a sealed base and a delta give exactly what a fresh build gives."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from indexes.checkpoint import checkpoint, rebase
from indexes.snapshot import ModelIdentity
from indexes.spec import IndexSpec
from indexes.vector_index import VectorIndex, normalize_rows

MODEL = ModelIdentity("m", "m@1", "00" * 32, 16)


def vectors(n: int, dimension: int = 16, seed: int = 0) -> np.ndarray:
    """Random float32 rows."""
    return np.random.default_rng(seed).normal(size=(n, dimension)).astype(np.float32)


def fresh(content: dict[int, np.ndarray], dimension: int = 16) -> VectorIndex:
    """An index built in one go from id -> vector (the reference)."""
    index = VectorIndex(dimension)
    index.apply([(doc_id, vector, 1) for doc_id, vector in sorted(content.items())])
    return index


def ids_of(rows: list[list[tuple[int, float]]]) -> list[list[int]]:
    """Only the ids of search results."""
    return [[doc_id for doc_id, _ in row] for row in rows]


def test_updates_deletes_and_checkpoints_equal_a_fresh_build(tmp_path: Path) -> None:
    base, replacements = vectors(60), vectors(10, seed=1)
    index = VectorIndex(16)
    index.apply([(i, base[i], i + 1) for i in range(40)], hwm=40)
    index = rebase(index, checkpoint(index, tmp_path, "c", MODEL).snapshot)
    index.apply([(i, base[i], 41 + i) for i in range(40, 60)], hwm=100)
    index.apply(deletes=[(i, 101 + i) for i in range(0, 60, 5)], hwm=200)
    index.apply([(i, replacements[i - 1], 300 + i) for i in range(1, 11)], hwm=311)
    expected = {i: base[i] for i in range(60) if i % 5}
    expected.update({i: replacements[i - 1] for i in range(1, 11)})
    queries = vectors(8, seed=2)
    reference = fresh(expected)
    assert len(index) == len(reference) == 50
    assert ids_of(index.search(queries, 10)) == ids_of(reference.search(queries, 10))
    np.testing.assert_allclose(index.vectors([3]), normalize_rows(replacements[2:3]), atol=1e-6)
    sealed = rebase(index, checkpoint(index, tmp_path, "c", MODEL).snapshot)
    assert ids_of(sealed.search(queries, 10)) == ids_of(reference.search(queries, 10))
    assert sealed.hwm == 311 and len(sealed) == 50


def test_search_scores_are_cosines_best_first_with_ties_by_id() -> None:
    index = VectorIndex(3)
    rows = np.array([[1, 0, 0], [1, 1, 0], [0, 0, 5], [2, 0, 0]], dtype=np.float32)
    index.apply([(doc_id, row, 1) for doc_id, row in zip([7, 8, 9, 3], rows, strict=True)])
    hits = index.search(np.array([[2, 0, 0]], dtype=np.float32), 4)[0]
    assert [d for d, _ in hits] == [3, 7, 8, 9]
    np.testing.assert_allclose([s for _, s in hits], [1.0, 1.0, 2**-0.5, 0.0], atol=1e-6)


def test_empty_and_small_indexes_and_bad_input() -> None:
    index = VectorIndex(4)
    assert index.search(vectors(2, 4), 5) == [[], []]
    index.apply([(1, vectors(1, 4)[0], 1)])
    assert [len(row) for row in index.search(vectors(2, 4), 5)] == [1, 1]
    index.apply(deletes=[(1, 2), (99, 3)])
    assert len(index) == 0 and 1 not in index
    with pytest.raises(ValueError, match="dimension"):
        index.apply([(2, vectors(1, 5)[0], 4)])
    with pytest.raises(KeyError):
        index.vectors([42])


@pytest.mark.parametrize(
    "spec",
    [
        IndexSpec(type="hnsw", m=16),
        IndexSpec(type="ivf", nlist=8, nprobe=8),
        IndexSpec(type="ivf", nlist=8, nprobe=8, compression="sq8"),
        IndexSpec(type="ivf", nlist=8, nprobe=8, compression="sq8", refine=40),
    ],
    ids=["hnsw", "ivf", "ivf-sq8", "ivf-sq8-refine"],
)
def test_ann_structures_skip_dead_rows_and_find_the_neighbours(spec: IndexSpec, tmp_path: Path) -> None:
    content = {i: v for i, v in enumerate(vectors(600))}
    index = VectorIndex(16, spec)
    index.apply([(i, v, 1) for i, v in content.items()], hwm=1)
    result = checkpoint(index, tmp_path, "c", MODEL)
    assert result.snapshot.base.structure == spec.type and result.snapshot.manifest["recall_at_10"] >= 0.9
    index = rebase(index, result.snapshot)
    dead = list(range(0, 600, 3))
    index.apply(deletes=[(i, 2) for i in dead], hwm=2)
    for i in dead:
        content.pop(i)
    queries = vectors(20, seed=5)
    got = ids_of(index.search(queries, 10))
    want = ids_of(fresh(content).search(queries, 10))
    assert not set(dead) & {d for row in got for d in row}
    overlap = np.mean([len(set(g) & set(w)) / 10 for g, w in zip(got, want, strict=True)])
    assert overlap >= 0.8
    # A third of the rows died: the next checkpoint compacts and rebuilds the structure...
    compacted = checkpoint(index, tmp_path, "c", MODEL)
    assert compacted.rebuilt_ann and compacted.rows == 400
    index = rebase(index, compacted.snapshot)
    # ...while a few new rows only extend it.
    index.apply([(1000, vectors(1, seed=9)[0], 3)], hwm=3)
    extended = checkpoint(index, tmp_path, "c", MODEL)
    assert not extended.rebuilt_ann and extended.rows == 401
    assert ids_of(rebase(index, extended.snapshot).search(vectors(1, seed=9), 1)) == [[1000]]


def test_auto_spec_is_exact_below_the_threshold() -> None:
    assert IndexSpec().structure(199_999) == "flat"
    assert IndexSpec().structure(200_000) == "ivf"
    assert IndexSpec(type="ivf", nlist=100).structure(1000) == "flat"  # too few points to train 100 lists
    with pytest.raises(ValueError, match="compression applies to type ivf"):
        IndexSpec(type="hnsw", compression="pq").validate()
    # PQ codebooks need about 10k vectors to train (tests/indexes/test_compact_index.py uses it).
    assert IndexSpec(type="ivf", nlist=8, compression="pq").structure(9_000) == "flat"
    assert IndexSpec(type="ivf", nlist=8, compression="pq").structure(10_000) == "ivf"
    # Four-bit codebooks (16 codes each) train on 624 vectors.
    assert IndexSpec(type="ivf", nlist=8, compression="pq4").structure(623) == "flat"
    assert IndexSpec(type="ivf", nlist=8, compression="pq4").structure(624) == "ivf"
    with pytest.raises(ValueError, match="compression must be none, sq8, pq or pq4"):
        IndexSpec(type="ivf", compression="pq8").validate()  # type: ignore[arg-type]
    assert not IndexSpec(type="ivf", refine=100).refined("ivf")  # float32 lists score exactly already
    assert IndexSpec(type="ivf", compression="sq8", refine=100).refined("ivf")
    with pytest.raises(ValueError, match="refine must be within"):
        IndexSpec(type="ivf", compression="sq8", refine=5000).validate()


def test_an_index_replaced_by_a_checkpoint_is_freed_at_once(tmp_path: Path) -> None:
    """No reference cycle keeps a replaced index (and its generation's mapped files) alive until the
    cyclic collector runs: a server checkpointing every minute grew 4 descriptors a time."""
    import gc
    import os
    import weakref

    rows = vectors(400, dimension=16)
    index = VectorIndex(16)
    index.apply([(i, rows[i], i + 1) for i in range(100)], hwm=100)
    index = rebase(index, checkpoint(index, tmp_path, "c", MODEL).snapshot)
    index.search(rows[:2], 3), index.search_one(rows[0], 3)  # the combiner has been used
    descriptors = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else None
    gc.disable()
    try:
        replaced = []
        for step in range(1, 4):
            replaced.append(weakref.ref(index))
            index.apply(
                [(i, rows[i], i + 1) for i in range(step * 100, step * 100 + 100)], hwm=step * 100 + 100
            )
            index = rebase(index, checkpoint(index, tmp_path, "c", MODEL).snapshot)
            index.search_one(rows[0], 3)
        assert all(ref() is None for ref in replaced)
        if descriptors is not None:
            assert len(os.listdir("/proc/self/fd")) <= descriptors
    finally:
        gc.enable()
    assert len(index) == 400


def test_a_search_survives_its_index_being_replaced_meanwhile() -> None:
    """A checkpoint swaps a corpus's index while a single-query search waits on the old one's combiner:
    the search keeps the index it started on (the combiner holds it only weakly) and answers. Seen as a
    500 under an import: `'NoneType' object is not callable` when the old index was freed mid-search."""
    import gc
    import threading
    import time
    import types

    rows = vectors(20, dimension=16)

    def fresh() -> VectorIndex:
        index = VectorIndex(16)
        index.apply([(i, rows[i], i + 1) for i in range(20)], hwm=20)
        return index

    opened = types.SimpleNamespace(index=fresh())  # as a store's opened corpus holds its index
    answers: list[list[tuple[int, float]]] = []
    errors: list[Exception] = []
    combiner_lock = opened.index._combined._lock  # held: the search waits inside the combiner

    def search() -> None:
        try:
            answers.append(opened.index.search_one(rows[7], 3))
        except Exception as error:  # noqa: BLE001 (any failure fails the test)
            errors.append(error)

    with combiner_lock:
        waiting = threading.Thread(target=search)
        waiting.start()
        time.sleep(0.3)  # the search has taken the old index and waits for the lock
        opened.index = fresh()  # the checkpoint's swap: the old index's last other reference goes
        gc.collect()
    waiting.join(10)
    assert not errors, errors
    assert [doc for doc, _ in answers[0]][0] == 7
