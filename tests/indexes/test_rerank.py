"""Re-ranking the top k: only the top k moves, by the second scorer, ties keep the first stage's order."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from indexes.rerank import rerank_top_k


@given(st.lists(st.integers(), unique=True, max_size=60), st.integers(0, 70), st.data())
def test_only_the_top_k_changes_order(ranked: list[int], k: int, data: st.DataObject) -> None:
    head = min(k, len(ranked))
    scores = data.draw(st.lists(st.floats(-5, 5), min_size=head, max_size=head))
    result = rerank_top_k(ranked, scores, k)
    assert result[head:] == ranked[head:]  # below k nothing moves
    assert sorted(result[:head]) == sorted(ranked[:head])  # the top k keeps its members
    by_item = dict(zip(ranked[:head], scores, strict=True))
    ordered = [(-by_item[x], ranked.index(x)) for x in result[:head]]
    assert ordered == sorted(ordered)  # by score, ties in first-stage order


def test_a_score_count_that_does_not_match_is_refused() -> None:
    with pytest.raises(ValueError):
        rerank_top_k(["a", "b", "c"], [0.1], 2)
