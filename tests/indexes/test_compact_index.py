"""Compact IVF kinds (sq8, pq, pq4) refined from float16 rows on disk: recall against exact float32 search,
restarts that map the snapshot and replay the log, and rebuilds while writes and searches go on."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

from indexes.checkpoint import checkpoint, rebase
from indexes.ivf_parts import PROBES_IN_PARALLEL
from indexes.snapshot import ModelIdentity, load_snapshot
from indexes.spec import IndexSpec
from indexes.vector_index import VectorIndex, normalize_rows
from tests.helpers.hits import assert_same_hits

DIMENSION = 32
MODEL = ModelIdentity("m", "m@1", "33" * 32, DIMENSION)
COMPACT = [
    IndexSpec(type="ivf", nlist=32, nprobe=8, compression="sq8", refine=64),
    # PQ ranks by 8 sub-quantizers of 4 dimensions here: coarser than sq8, so it re-scores deeper.
    IndexSpec(type="ivf", nlist=32, nprobe=8, compression="pq", pq_m=8, refine=200),
    # 4-bit fast-scan codes, the same 8 bytes a vector (16 sub-quantizers of 2 dimensions).
    IndexSpec(type="ivf", nlist=32, nprobe=8, compression="pq4", pq_m=8, refine=200),
]
IDS = ["ivf-sq8-refine", "ivf-pq-refine", "ivf-pq4-refine"]
ROWS = 10_000  # enough to train PQ codebooks (PQ_TRAINING_POINTS): fewer would be searched exactly


def clustered(n: int, seed: int = 0, clusters: int = 40) -> np.ndarray:
    """Unit vectors around `clusters` centres, like embeddings of related texts."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(clusters, DIMENSION))
    rows = centres[rng.integers(0, clusters, n)] + rng.normal(0, 0.35, (n, DIMENSION))
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def near(rows: np.ndarray, seed: int) -> np.ndarray:
    """Queries: stored rows, slightly moved."""
    rng = np.random.default_rng(seed)
    return (rows + rng.normal(0, 0.05, rows.shape)).astype(np.float32)


def built(spec: IndexSpec, rows: np.ndarray, folder: Path) -> VectorIndex:
    """An index of `rows` (ids 0..n-1, seq 1) serving from its first checkpoint."""
    index = VectorIndex(DIMENSION, spec)
    index.apply([(i, row, 1) for i, row in enumerate(rows)], hwm=1)
    return rebase(index, checkpoint(index, folder, "c", MODEL).snapshot)


def write(index: VectorIndex, seq: int, doc_id: int, vector: np.ndarray | None) -> None:
    """Apply one logged change: an upsert, or a delete when `vector` is None."""
    if vector is None:
        index.apply(deletes=[(doc_id, seq)], hwm=seq)
    else:
        index.apply([(doc_id, vector, seq)], hwm=seq)


def exact_ids(content: dict[int, np.ndarray], queries: np.ndarray, k: int = 10) -> list[set[int]]:
    """The true top k per query, by float32 inner products over every row."""
    reference = VectorIndex(DIMENSION, IndexSpec(type="flat"))
    reference.apply([(doc_id, row, 1) for doc_id, row in content.items()])
    return [{doc_id for doc_id, _ in hits} for hits in reference.search(queries, k)]


def recall(index: VectorIndex, content: dict[int, np.ndarray], queries: np.ndarray) -> float:
    """Recall@10 of `index` against exact search over `content`."""
    found = [{doc_id for doc_id, _ in hits} for hits in index.search(queries, 10)]
    return float(np.mean([len(f & t) / 10 for f, t in zip(found, exact_ids(content, queries), strict=True)]))


@pytest.mark.parametrize("spec", COMPACT, ids=IDS)
def test_refined_compact_kinds_find_the_exact_neighbours(spec: IndexSpec, tmp_path: Path) -> None:
    rows = clustered(ROWS)
    index = built(spec, rows, tmp_path)
    base = index.base
    assert base.structure == "ivf" and base.ann is not None
    assert isinstance(base.refine, np.memmap) and base.refine.dtype == np.float16
    assert base.refine.shape == rows.shape
    queries = near(rows[::100], seed=1)
    assert recall(index, dict(enumerate(rows)), queries) >= 0.95
    for hits, query in zip(index.search(queries[:5], 10), normalize_rows(queries[:5]), strict=True):
        # Re-scored from float16 rows: cosines within float16's precision of the float32 ones.
        np.testing.assert_allclose([s for _, s in hits], [rows[d] @ query for d, _ in hits], atol=2e-3)
    # The recall the checkpoint measured (and `GET .../index` shows) is that of the refined search.
    assert load_snapshot(tmp_path, MODEL).manifest["recall_at_10"] >= 0.95  # type: ignore[union-attr]
    unrefined = VectorIndex(DIMENSION, IndexSpec(**{**spec.to_dict(), "refine": 0}), base)
    assert recall(unrefined, dict(enumerate(rows)), queries) <= recall(index, dict(enumerate(rows)), queries)


@pytest.mark.parametrize("spec", COMPACT, ids=IDS)
def test_a_restart_maps_the_snapshot_replays_the_log_and_answers_as_before(
    spec: IndexSpec, tmp_path: Path
) -> None:
    rows, later = clustered(ROWS), clustered(300, seed=7)
    index = built(spec, rows, tmp_path)
    log: list[tuple[int, int, np.ndarray | None]] = []  # (seq, id, vector or None for a delete)
    log += [(2 + i, ROWS + i, later[i]) for i in range(200)]  # new documents
    log += [(300 + i, i, later[200 + i]) for i in range(100)]  # replaced ones
    log += [(500 + i, i, None) for i in range(100, 400, 3)]  # deleted ones
    for entry in log:
        write(index, *entry)
    queries = near(np.concatenate([rows[::200], later[::30]]), seed=3)
    before = index.search(queries, 10)

    def restarted() -> VectorIndex:
        loaded = load_snapshot(tmp_path, MODEL)
        assert loaded is not None and loaded.base.refine is not None
        fresh = VectorIndex(DIMENSION, spec, loaded.base)
        fresh.hwm = loaded.hwm
        for entry in log:
            if entry[0] > loaded.hwm:
                write(fresh, *entry)
        return fresh

    assert_same_hits(restarted().search(queries, 10), before)
    # A checkpoint with the changes (extending the lists, rewriting the float16 rows), then a restart.
    sealed = rebase(index, checkpoint(index, tmp_path, "c", MODEL).snapshot)
    # Extended, not rebuilt (few rows died): replaced and deleted rows stay in the lists, marked dead.
    assert sealed.base.refine is not None and len(sealed.base.refine) == len(sealed.base.ids) == ROWS + 300
    assert_same_hits(restarted().search(queries, 10), sealed.search(queries, 10))
    content = {i: rows[i] for i in range(ROWS) if not (100 <= i < 400 and (i - 100) % 3 == 0)}
    content.update({i: later[200 + i] for i in range(100)})
    content.update({ROWS + i: later[i] for i in range(200)})
    assert len(sealed) == len(content) and recall(sealed, content, queries) >= 0.95


def test_a_rebuild_runs_while_writes_and_searches_go_on(tmp_path: Path) -> None:
    # One kind: a rebuild is the same code for both, and training PQ codebooks takes ~10 s here.
    spec = COMPACT[0]
    rows, later = clustered(ROWS), clustered(2000, seed=9)
    index = built(spec, rows, tmp_path)
    dead = range(0, len(rows), 4)
    index.apply(deletes=[(i, 2) for i in dead], hwm=2)  # a quarter dead: a full rebuild is due
    done, result = threading.Event(), []
    written: list[int] = []
    searched: list[int] = []

    def rebuild() -> None:
        result.append(checkpoint(index, tmp_path, "c", MODEL))
        done.set()

    worker = threading.Thread(target=rebuild)
    worker.start()
    seq = 3
    while not done.is_set() and seq < 3 + len(later):  # writes and searches go on during the rebuild
        index.apply([(10_000 + seq, later[seq - 3], seq)], hwm=seq)
        written.append(10_000 + seq)
        searched.append(index.search(later[seq - 3 : seq - 2], 1)[0][0][0])
        seq += 1
    worker.join()
    assert written and searched == written  # each write was searchable at once
    rebuilt = result[0]
    assert rebuilt.rebuilt_ann and rebuilt.snapshot.hwm < seq
    index = rebase(index, rebuilt.snapshot)
    assert len(index) == len(rows) - len(dead) + len(written)  # nothing written meanwhile was lost
    np.testing.assert_allclose(index.vectors(written), later[: len(written)], atol=1e-6)
    content = {i: rows[i] for i in range(len(rows)) if i % 4}
    content.update({doc_id: later[doc_id - 10_003] for doc_id in written})
    assert recall(index, content, near(rows[1::130], seed=4)) >= 0.95


@pytest.mark.parametrize("spec", COMPACT, ids=IDS)
def test_a_served_ivf_spreads_one_query_over_the_cores_and_answers_the_same(
    spec: IndexSpec, tmp_path: Path
) -> None:
    rows = clustered(ROWS)
    index = built(spec, rows, tmp_path)
    ann = index.base.ann
    assert ann is not None and ann.parallel_mode == PROBES_IN_PARALLEL  # as mapped from the snapshot
    index.apply(deletes=[(i, 2) for i in range(0, 600, 3)], hwm=2)  # the deleted rows' selector too
    queries = near(rows[::40], seed=6)
    spread = [index.search(query[None], 10)[0] for query in queries]
    ann.parallel_mode = 0  # Faiss's default: one query's lists on one core
    assert_same_hits(spread, [index.search(query[None], 10)[0] for query in queries])
    assert not {doc_id for hits in spread for doc_id, _ in hits} & set(range(0, 600, 3))
