"""Fast shuffling by words (Algorithm 2 with shingles of t non-stop-words)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from training.shuffling.base import Encoder, check_group_size, check_side
from training.shuffling.fast import FastOrder, Shingle, random_shingles
from training.shuffling.stopwords import ENGLISH_STOP_WORDS, content_words

__all__ = ["FastWordsOrder"]


class FastWordsOrder(FastOrder):
    """Group pairs whose first (or second) texts share a random shingle of t content words."""

    name = "fast_words"
    needs_encoder = False

    def __init__(
        self,
        group_size: int | None = 8,
        shingle_size: int = 1,
        by: str = "first",
        stop_words: Iterable[str] | None = None,
    ) -> None:
        # The paper gives no t for words ("we choose a random word or phrase (shingle)"); t = 1
        # groups texts sharing one topical word, larger t rarely matches on small data sets.
        # group_size (k) defaults to the paper's group size for example-based shuffling.
        if isinstance(shingle_size, bool) or shingle_size < 1:
            raise ValueError(f"shingle_size must be >= 1, got {shingle_size!r}")
        self.group_size = check_group_size(group_size)
        self.shingle_size = shingle_size
        self.by = check_side(by)
        self.stop_words = (
            ENGLISH_STOP_WORDS if stop_words is None else frozenset(w.lower() for w in stop_words)
        )

    def __repr__(self) -> str:
        return (
            f"FastWordsOrder(group_size={self.group_size!r}, shingle_size={self.shingle_size}, "
            f"by={self.by!r}, stop_words=<{len(self.stop_words)} words>)"
        )

    def shingles(
        self, texts: Sequence[str], rng: np.random.Generator, encode: Encoder | None = None
    ) -> list[Shingle]:
        """Steps 1-2 of Algorithm 2: a random subset of t distinct non-stop-words per text."""
        # "random subset of t words of e (ignoring stop-words)": a text made only of stop-words has
        # no shingle and forms its own group, since sharing "the" is no closeness.
        sentences = [content_words(t, self.stop_words) for t in texts]
        return random_shingles(sentences, self.shingle_size, rng)
