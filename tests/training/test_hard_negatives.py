"""Hard-negative mining: never a positive or a near copy of one, and a BSC run that uses them."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from training.config import ConfigError, HardNegativesConfig
from training.data import PairSet
from training.hard_negatives import mine_hard_negatives


def hashed(texts: Sequence[str]) -> np.ndarray:
    """A deterministic encoder: a unit vector per text, equal texts equal vectors."""
    rows = []
    for text in texts:
        seed = int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)
        rows.append(np.random.default_rng(seed).normal(size=8))
    matrix = np.asarray(rows, dtype=np.float32)
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


PAIRS = st.lists(
    st.tuples(
        st.sampled_from([f"q{i}" for i in range(6)]),
        st.sampled_from([f"d{i}" for i in range(12)]),
        st.sampled_from([0.0, 1.0]),
    ),
    min_size=1,
    max_size=30,
)


@settings(max_examples=80, deadline=None)
@given(PAIRS, st.integers(1, 3), st.integers(0, 3), st.integers(0, 10))
def test_mining_never_returns_a_positive_of_the_query(rows: list, count: int, start: int, seed: int) -> None:
    pairs = PairSet(
        [q for q, _, _ in rows], [d for _, d, _ in rows], np.array([label for _, _, label in rows])
    )
    config = HardNegativesConfig(count=count, start=start, window=count + 2)
    mined = mine_hard_negatives(pairs, hashed, config, seed, extra_pool=["x1", "x2"])
    positives = {(q, d) for q, d, label in rows if label > 0}
    assert len(mined) == len(rows)
    for (query, _, _), negatives in zip(rows, mined, strict=True):
        assert len(negatives) == count
        assert not any((query, negative) in positives for negative in negatives)


def test_near_copies_of_a_positive_are_skipped() -> None:
    def encode(texts: Sequence[str]) -> np.ndarray:
        base = hashed([t.removesuffix(" (copy)") for t in texts])  # a copy encodes like its original
        return base

    pairs = PairSet(["q", "r"], ["answer", "other"], np.array([1.0, 1.0]))
    mined = mine_hard_negatives(pairs, encode, HardNegativesConfig(window=5), 0, ["answer (copy)", "noise"])
    assert mined[0] != ["answer (copy)"] and "answer" not in mined[0]


def test_only_bsc_takes_hard_negatives(tmp_path: Path) -> None:
    from training.config import config_from_dict

    stage = {"loss": "mse", "hard_negatives": {"count": 1}}
    with pytest.raises(ConfigError, match="only the bsc loss"):
        config_from_dict({"data": {"train_pairs": "x"}, "stages": [stage]})
    with pytest.raises(ConfigError, match="window >= count"):
        config_from_dict(
            {"data": {"train_pairs": "x"}, "stages": [{"hard_negatives": {"count": 3, "window": 2}}]}
        )
