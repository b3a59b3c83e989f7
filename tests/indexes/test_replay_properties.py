"""Property: any sequence of upserts, deletes, checkpoints and restarts ends where a fresh build does."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from indexes.checkpoint import checkpoint, rebase
from indexes.snapshot import ModelIdentity, load_snapshot
from indexes.vector_index import VectorIndex

MODEL = ModelIdentity("m", "m@1", "11" * 32, 8)
operation = st.one_of(
    st.tuples(st.just("upsert"), st.integers(0, 30), st.integers(0, 10_000)),
    st.tuples(st.just("delete"), st.integers(0, 30), st.just(0)),
    st.tuples(st.just("checkpoint"), st.just(0), st.just(0)),
    st.tuples(st.just("restart"), st.just(0), st.just(0)),
)


def vector(seed: int) -> np.ndarray:
    """A deterministic vector per seed."""
    return np.random.default_rng(seed).normal(size=8).astype(np.float32)


@settings(max_examples=60, deadline=None)
@given(st.lists(operation, max_size=40))
# Equal vectors under different storage orders: ties must be broken by id, not by float noise.
@example([("upsert", 0, 0), ("upsert", 1, 0), ("upsert", 2, 0), ("upsert", 0, 0)])
@example([("upsert", d, 7) for d in range(30)] + [("checkpoint", 0, 0), ("upsert", 3, 7), ("restart", 0, 0)])
def test_replaying_the_log_equals_a_fresh_build(operations: list[tuple[str, int, int]]) -> None:
    log: list[tuple[int, str, int, int]] = []  # (seq, op, doc, vector seed): the database's change log
    truth: dict[int, int] = {}
    with tempfile.TemporaryDirectory() as folder:
        index = VectorIndex(8)
        for op, doc_id, seed in operations:
            if op in ("upsert", "delete"):
                seq = len(log) + 1
                log.append((seq, op, doc_id, seed))
                if op == "upsert":
                    truth[doc_id] = seed
                    index.apply([(doc_id, vector(seed), seq)], hwm=seq)
                else:
                    truth.pop(doc_id, None)
                    index.apply(deletes=[(doc_id, seq)], hwm=seq)
            elif op == "checkpoint":
                index = rebase(index, checkpoint(index, Path(folder), "c", MODEL).snapshot)
            else:  # a restart: map the newest snapshot, replay the log after its mark
                loaded = load_snapshot(Path(folder), MODEL)
                index = VectorIndex(8) if loaded is None else VectorIndex(8, base=loaded.base)
                index.hwm = 0 if loaded is None else loaded.hwm
                for seq, kind, doc, seed in log:
                    if seq > index.hwm:
                        if kind == "upsert":
                            index.apply([(doc, vector(seed), seq)], hwm=seq)
                        else:
                            index.apply(deletes=[(doc, seq)], hwm=seq)
        reference = VectorIndex(8)
        reference.apply([(doc, vector(seed), 1) for doc, seed in truth.items()])
        assert len(index) == len(truth)
        assert all(doc in index for doc in truth)
        assert index.present([])[0] == []
        if truth:
            docs = sorted(truth)
            np.testing.assert_allclose(index.vectors(docs), reference.vectors(docs), atol=1e-6)
            # One vectorized lookup of every id, present or not, agrees with the truth (order kept).
            asked = list(range(31))[::-1]
            present, found = index.present(asked)
            assert present == [d for d in asked if d in truth]
            np.testing.assert_allclose(found, reference.vectors(present), atol=1e-6)
            query = vector(12345)[None]
            assert [d for d, _ in index.search(query, 5)[0]] == [d for d, _ in reference.search(query, 5)[0]]
