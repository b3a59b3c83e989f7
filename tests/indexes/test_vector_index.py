"""VectorIndex: incremental adds, updates and removals give the same results as a full rebuild."""

from __future__ import annotations

import numpy as np
import pytest

from indexes.vector_index import VectorIndex, normalize_rows


def _vectors(n: int, dimension: int = 16, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(n, dimension)).astype(np.float32)


@pytest.mark.parametrize("factory", ["Flat", "HNSW16"])
def test_incremental_updates_equal_full_rebuild(factory: str) -> None:
    base = _vectors(60)
    replacements = _vectors(10, seed=1)
    incremental = VectorIndex(16, factory)
    incremental.upsert([f"d{i}" for i in range(40)], ["h"] * 40, base[:40])
    incremental.upsert([f"d{i}" for i in range(40, 60)], ["h"] * 20, base[40:])
    incremental.remove([f"d{i}" for i in range(0, 60, 5)])
    incremental.upsert([f"d{i}" for i in range(1, 11)], ["h2"] * 10, replacements)
    expected_vectors = {f"d{i}": base[i] for i in range(60) if i % 5}
    expected_vectors.update({f"d{i}": replacements[i - 1] for i in range(1, 11)})
    rebuilt = VectorIndex(16, "Flat")
    ids = sorted(expected_vectors)
    rebuilt.upsert(ids, ["h"] * len(ids), np.vstack([expected_vectors[i] for i in ids]))
    queries = _vectors(8, seed=2)
    assert len(incremental) == len(rebuilt) == len(expected_vectors) == 50
    got, want = incremental.search(queries, 10), rebuilt.search(queries, 10)
    if factory == "Flat":
        assert [[d for d, _ in row] for row in got] == [[d for d, _ in row] for row in want]
    else:  # HNSW is approximate: require a high overlap with the exact answer and no removed ids
        overlap = np.mean(
            [len({d for d, _ in g} & {d for d, _ in w}) / 10 for g, w in zip(got, want, strict=True)]
        )
        assert overlap >= 0.9
    removed = {f"d{i}" for i in range(0, 60, 5)} - {f"d{i}" for i in range(1, 11)}
    assert not removed & {d for row in got for d, _ in row}
    np.testing.assert_allclose(incremental.vectors(["d3"]), normalize_rows(replacements[2:3]), atol=1e-6)


def test_search_scores_are_cosines_best_first() -> None:
    index = VectorIndex(3)
    index.upsert(
        ["a", "b", "c"], ["1", "2", "3"], np.array([[1, 0, 0], [1, 1, 0], [0, 0, 5]], dtype=np.float32)
    )
    hits = index.search(np.array([[2, 0, 0]], dtype=np.float32), 3)[0]
    assert [d for d, _ in hits] == ["a", "b", "c"]
    np.testing.assert_allclose([s for _, s in hits], [1.0, 2**-0.5, 0.0], atol=1e-6)


def test_empty_and_small_indexes() -> None:
    index = VectorIndex(4)
    assert index.search(_vectors(2, 4), 5) == [[], []]
    index.upsert(["only"], ["h"], _vectors(1, 4))
    assert [len(row) for row in index.search(_vectors(2, 4), 5)] == [1, 1]
    assert index.remove(["only", "missing"]) == 1 and len(index) == 0


def test_bad_input_is_rejected() -> None:
    index = VectorIndex(4)
    with pytest.raises(ValueError, match="dimension"):
        index.upsert(["a"], ["h"], _vectors(1, 5))
    with pytest.raises(ValueError, match="same length"):
        index.upsert(["a", "b"], ["h"], _vectors(2, 4))
    with pytest.raises(KeyError):
        index.vectors(["nope"])
