"""Fast shuffling: Algorithm 2 of the BSC paper (paper 001, section 3.2), shared by its three variants.

Examples are "close if they share the same words, the same cluster number or the same nearest
neighbors". Each example gets a shingle (a random subset of t "words" of its "sentence"), equal
shingles are made adjacent, cut into groups of at most k, and the groups are put in random order.
The algorithm, numbered as the step comments below refer to it:

    Input: sequence D, group size k, shingle size t
    1   for e in D do
    2       e.shingle <- random subset of t words of e (ignoring stop-words)
    3   sort D by e.shingle
    4   initialize gID <- random uint64     (group ID)
    5   initialize s <- 0                   (current group size)
    6   initialize prev <- first element of D
    7   for e in D do
    8       if e.shingle != prev.shingle then
    9           gID <- random uint64
    10      if s >= k then
    11          gID <- random uint64
    12          s <- 0
    13      e.gID <- gID
    14      s <- s + 1
    15      prev <- e
    16  sort D by e.gID
    17  return D

Steps 1-2 live in each variant's `shingles` (they differ only in what the "sentence" of an example
is; `random_shingles` draws the subsets); steps 3-17 in `fast_shuffle`.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Hashable, Sequence

import numpy as np

from training.shuffling.base import BatchOrder, Encoder, resolve_group_size

__all__ = ["NO_SHINGLE", "FastOrder", "Shingle", "fast_shuffle", "fast_shuffle_groups", "random_shingles"]

#: shingle of an example that has no words at all: it shares nothing, so it forms its own group
NO_SHINGLE = None
Shingle = tuple[Hashable, ...] | None


class FastOrder(BatchOrder):
    """Algorithm 2 for some kind of shingle; subclasses say what an example's shingle is."""

    group_size: int | None
    by: str

    @abstractmethod
    def shingles(
        self, texts: Sequence[str], rng: np.random.Generator, encode: Encoder | None = None
    ) -> list[Shingle]:
        """Steps 1-2: the shingle of each text (the grouping side of each pair)."""

    def permutation(
        self,
        firsts: Sequence[str],
        seconds: Sequence[str],
        *,
        batch_size: int,
        rng: np.random.Generator,
        encode: Encoder | None,
    ) -> np.ndarray:
        """Return Algorithm 2's order for this epoch, groups of at most `group_size` (k)."""
        group_size = resolve_group_size(self.group_size, batch_size)
        texts = firsts if self.by == "first" else seconds
        return fast_shuffle(self.shingles(texts, rng, encode), group_size, rng)


def random_shingles(
    sentences: Sequence[Sequence[Hashable]], shingle_size: int, rng: np.random.Generator
) -> list[Shingle]:
    """Steps 1-2: for each sentence, a random subset of `shingle_size` of its distinct words.

    A subset is unordered, so it is returned sorted: two examples drawing the same words in another
    order share the shingle. A sentence with fewer distinct words than t uses all of them; one with
    none gets NO_SHINGLE.
    """
    if shingle_size < 1:
        raise ValueError(f"shingle_size must be >= 1, got {shingle_size}")
    distinct = [list(dict.fromkeys(words)) for words in sentences]
    # One draw for all words of all sentences keeps this O(total words) without a numpy call per example.
    keys = rng.random(sum(len(w) for w in distinct)).tolist()
    shingles: list[Shingle] = []
    offset = 0
    for words in distinct:
        if not words:
            shingles.append(NO_SHINGLE)
            continue
        own = keys[offset : offset + len(words)]
        offset += len(words)
        chosen = sorted(range(len(words)), key=own.__getitem__)[:shingle_size]
        # words are str or int in practice; Hashable alone does not promise an ordering
        shingles.append(tuple(sorted(words[i] for i in chosen)))  # type: ignore[type-var]
    return shingles


def fast_shuffle(
    shingles: Sequence[Hashable | None], group_size: int, rng: np.random.Generator
) -> np.ndarray:
    """Steps 3-17: the permutation of the examples that Algorithm 2 returns for these shingles."""
    return fast_shuffle_groups(shingles, group_size, rng)[0]


def fast_shuffle_groups(
    shingles: Sequence[Hashable | None], group_size: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Steps 3-17, also returning the group ID (uint64) of each position of the permutation."""
    if group_size < 1:
        raise ValueError(f"group_size must be >= 1, got {group_size}")
    n = len(shingles)
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.uint64)
    # Step 3: "sort D by e.shingle". Only equality of shingles matters (groups get random IDs in
    # step 16), so we sort by an integer code per distinct shingle. Examples without a shingle get
    # a code of their own. Ties are broken randomly rather than by file order: the algorithm leaves
    # them unspecified, and a random tie order makes the cuts of large groups (steps 10-12) differ
    # from epoch to epoch instead of always grouping the same file neighbours.
    codes_of: dict[Hashable, int] = {}
    codes = np.empty(n, dtype=np.int64)
    for i, shingle in enumerate(shingles):
        codes[i] = n + i if shingle is NO_SHINGLE else codes_of.setdefault(shingle, len(codes_of))
    sorted_d = np.lexsort((rng.random(n), codes))
    code_of = codes.tolist()  # plain ints: the loop below is pure Python
    # Random uint64 IDs, at most one per example; drawn up front and consumed in order.
    id_pool = iter(rng.integers(0, 2**64, size=n, dtype=np.uint64).tolist())
    group_ids = np.empty(n, dtype=np.uint64)
    gid = next(id_pool)  # step 4
    size = 0  # step 5
    prev = code_of[sorted_d[0]]  # step 6
    for pos, e in enumerate(sorted_d.tolist()):  # step 7
        if code_of[e] != prev:  # step 8
            gid = next(id_pool)  # step 9
            # Judgement call: the pseudo-code does not reset s here, but s is "current group size"
            # and the text says "we split a group if it is too large". Without the reset a new
            # shingle's group would be cut after k - s examples, splitting small groups for no reason.
            size = 0
        if size >= group_size:  # step 10
            gid = next(id_pool)  # step 11
            size = 0  # step 12
        group_ids[pos] = gid  # step 13
        size += 1  # step 14
        prev = code_of[e]  # step 15
    # Step 16: "sort D by e.gID". A stable sort keeps each group contiguous; two groups would only
    # merge if their random 64-bit IDs collided.
    by_group = np.argsort(group_ids, kind="stable")
    return sorted_d[by_group].astype(np.int64), group_ids[by_group]
