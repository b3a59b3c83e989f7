"""Fusing dense and lexical rankings on a tiny case where the two disagree."""

from __future__ import annotations

import numpy as np
import pytest

from indexes.fusion import fuse_linear, fuse_rrf, minmax

DENSE = {1: 0.9, 2: 0.8, 3: 0.1}  # dense prefers 1, then 2
LEXICAL = {3: 5.0, 2: 4.0}  # lexical prefers 3, then 2; 1 shares no term


def ids(hits: list) -> list[int]:
    return [hit.doc_id for hit in hits]


def test_alpha_moves_the_order_from_dense_to_lexical() -> None:
    assert ids(fuse_linear(DENSE, LEXICAL, 0.0, 3)) == [1, 2, 3]
    assert ids(fuse_linear(DENSE, LEXICAL, 1.0, 3)) == [3, 2, 1]
    middle = fuse_linear(DENSE, LEXICAL, 0.5, 3)
    # 2 is good on both sides; 1 and 3 tie at 0.5 and the dense score breaks the tie.
    assert ids(middle) == [2, 1, 3]
    assert middle[0].score == pytest.approx(0.5 * 0.875 + 0.5 * 0.8)
    assert (middle[0].dense, middle[0].lexical) == (0.8, 4.0)


def test_reciprocal_rank_fusion_counts_only_lists_a_candidate_is_in() -> None:
    hits = fuse_rrf(DENSE, LEXICAL, 3)
    assert ids(hits) == [3, 2, 1]
    assert hits[0].score == pytest.approx(1 / 63 + 1 / 61)
    assert hits[2].score == pytest.approx(1 / 61)  # 1 is absent from the lexical list


def test_minmax_of_equal_values_is_zero_and_k_cuts() -> None:
    assert minmax(np.array([2.0, 2.0])).tolist() == [0.0, 0.0]
    assert len(fuse_linear(DENSE, {}, 0.3, 2)) == 2
