"""Example-based shuffling: Algorithm 1 of the BSC paper (paper 001, section 3.2).

Groups of mutually near examples are laid out consecutively so that each batch holds hard
negatives (from its own group) and easier ones (from the other groups in the batch). The
algorithm, numbered here as the step comments below refer to it:

    Input: sequence D, group size s
    1  initialize R <- []            (sequence to store the result)
    2  initialize U <- {}            (set of used examples)
    3  randomly shuffle D
    4  for e in D do
    5      if e not in U then
    6          find the n nearest neighbors of e from D
    7          choose the top s - 1 that are not in U
    8          add them and e to R and also to U
    9  return reversed R
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from indexes.knn import InnerProductIndex
from training.shuffling.base import (
    BatchOrder,
    Encoder,
    check_group_size,
    check_side,
    encode_unique,
    resolve_group_size,
)

__all__ = ["ExampleOrder", "example_based_order"]

# Neighbour searches run for this many pending examples at a time: memory stays at
# _CHUNK * n ids instead of len(D) * n, and examples used up by earlier groups are never searched.
_CHUNK = 256


class ExampleOrder(BatchOrder):
    """Algorithm 1: groups of `group_size` nearest neighbours under the current model, reversed."""

    name = "example"
    needs_encoder = True

    def __init__(
        self,
        n_neighbors: int = 500,
        group_size: int | None = 8,
        by: str = "first",
        skip_identical: bool = False,
    ) -> None:
        # Defaults from the paper: n = 500 candidates ("for some large n, e.g., 500") and groups of
        # eight ("a group size of eight in all other tasks", section 5.2, with batches of 30).
        # group_size=None makes each group a whole batch. skip_identical is off by default because
        # the loss treats repeated anchors as positives (eq. 3-4), so duplicates in a batch are fine.
        if isinstance(n_neighbors, bool) or n_neighbors < 1:
            raise ValueError(f"n_neighbors must be >= 1, got {n_neighbors!r}")
        self.n_neighbors = n_neighbors
        self.group_size = check_group_size(group_size)
        self.by = check_side(by)
        self.skip_identical = bool(skip_identical)

    def permutation(
        self,
        firsts: Sequence[str],
        seconds: Sequence[str],
        *,
        batch_size: int,
        rng: np.random.Generator,
        encode: Encoder | None,
    ) -> np.ndarray:
        """Encode the grouping side with the current model and return Algorithm 1's order."""
        group_size = resolve_group_size(self.group_size, batch_size)
        texts = firsts if self.by == "first" else seconds
        unique_emb, text_ids = encode_unique(texts, encode, self.name)
        return example_based_order(
            unique_emb[text_ids],
            text_ids,
            group_size=group_size,
            n_neighbors=self.n_neighbors,
            skip_identical=self.skip_identical,
            rng=rng,
        )


def example_based_order(
    embeddings: np.ndarray,
    text_ids: np.ndarray,
    *,
    group_size: int,
    n_neighbors: int,
    skip_identical: bool,
    rng: np.random.Generator,
) -> np.ndarray:
    """Run Algorithm 1 on per-example normalized embeddings; `text_ids` equal iff texts are identical."""
    n = embeddings.shape[0]
    # Steps 1-2: R, and U as a boolean mask (the paper's O(1) membership check).
    result: list[int] = []
    used = np.zeros(n, dtype=bool)
    # Step 3: "randomly shuffle D" -- the iteration order, i.e. which examples seed the groups.
    shuffled = rng.permutation(n)
    if group_size == 1:
        # s - 1 = 0 neighbours to choose: every group is its example alone (steps 4-8 add e only).
        return shuffled[::-1].astype(np.int64)
    index = InnerProductIndex(embeddings, expected_queries=n)
    # e is (one of) its own nearest hit; search one extra so that n real neighbours remain.
    k_search = min(n_neighbors + 1, n)
    for start in range(0, n, _CHUNK):
        chunk = shuffled[start : start + _CHUNK]
        pending = chunk[~used[chunk]]
        if pending.size == 0:
            continue
        _, neighbours = index.search(embeddings[pending], k_search)
        # Step 4: "for e in D" in the shuffled order.
        for e, row in zip(pending.tolist(), neighbours, strict=True):
            # Step 5: "if e not in U" -- U may have grown since this chunk was searched.
            if used[e]:
                continue
            # Step 6: "find the n nearest neighbors of e from D" (best first, e itself excluded).
            candidates = row[row != e][:n_neighbors]
            # Step 7: "choose the top s - 1 that are not in U". When fewer than s - 1 of the n
            # candidates are unused we take those that are, possibly none: the paper says "if all
            # such neighbors are already used, then only the considered example will be added",
            # and we do not search beyond the top n.
            candidates = candidates[~used[candidates]]
            if skip_identical:
                candidates = _drop_identical(candidates, text_ids, text_ids[e])
            group = candidates[: group_size - 1]
            # Step 8: "add them and e to R and also to U", in that order: neighbours best first, then e.
            result.extend(group.tolist())
            result.append(e)
            used[group] = True
            used[e] = True
    # Step 9: "return reversed R" -- the late, mostly 1-element groups come first, "as in
    # curriculum learning".
    return np.asarray(result[::-1], dtype=np.int64)


def _drop_identical(candidates: np.ndarray, text_ids: np.ndarray, anchor_id: int) -> np.ndarray:
    """Keep candidates whose text differs from the anchor's and from every better-ranked candidate's.

    "Identical neighbors could be optionally filtered" so that each text occurs once per group;
    the filtered ones stay unused and get their own groups later.
    """
    ids = text_ids[candidates]
    keep = ids != anchor_id
    candidates, ids = candidates[keep], ids[keep]
    _, first_seen = np.unique(ids, return_index=True)
    return candidates[np.sort(first_seen)]
