"""Hard negatives: for each training pair, documents the current model ranks close to the query but that
are not its answers, fed to BSC as extra document columns (the loss's `negatives`).

For each query, the pool (the documents of all training pairs, plus a corpus file when configured) is
ranked by cosine with the current model; the query's own positives are skipped, and so is any document
whose cosine to one of those positives reaches `near_duplicate_cutoff` (a re-worded copy of the answer
is not a negative). From what is left, `count` negatives are drawn from ranks [start, start + window),
seeded, so the hardest few are not always the same (some of them are unlabelled positives).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from indexes.knn import knn_search
from training.config import HardNegativesConfig
from training.data import PairSet

Encoder = Callable[[Sequence[str]], np.ndarray]


def mine_hard_negatives(
    pairs: PairSet, encode: Encoder, config: HardNegativesConfig, seed: int, extra_pool: Sequence[str] = ()
) -> list[list[str]]:
    """`config.count` negative texts per pair (never one of its query's positives or a near copy)."""
    pool = list(dict.fromkeys([*pairs.seconds, *extra_pool]))
    positives: dict[str, set[str]] = {}
    for query, document, label in zip(pairs.firsts, pairs.seconds, pairs.labels, strict=True):
        if label > 0:
            positives.setdefault(query, set()).add(document)
    queries = list(dict.fromkeys(pairs.firsts))
    pool_vectors = encode(pool)
    query_vectors = encode(queries)
    row_of = {text: row for row, text in enumerate(pool)}
    # Enough neighbours to fill the window after skipping positives and their near copies.
    depth = min(
        len(pool), config.start + config.window + 4 * max(1, max(map(len, positives.values()), default=1)) + 8
    )
    _, ranked = knn_search(pool_vectors, query_vectors, depth)
    rng = np.random.default_rng(seed)
    chosen: dict[str, list[str]] = {}
    for query, candidates in zip(queries, ranked, strict=True):
        own = positives.get(query, set())
        own_rows = [row_of[d] for d in own if d in row_of]
        kept = []
        for row in candidates.tolist():
            if pool[row] in own:
                continue
            if (
                own_rows
                and float((pool_vectors[own_rows] @ pool_vectors[row]).max()) >= config.near_duplicate_cutoff
            ):
                continue
            kept.append(pool[row])
        window = kept[config.start : config.start + config.window]
        if len(window) < config.count:  # a tiny pool: repeat what there is (an empty text if nothing is left)
            window = (window or [""]) * config.count
        picks = rng.choice(len(window), size=config.count, replace=False)
        chosen[query] = [window[i] for i in sorted(picks)]
    return [chosen[query] for query in pairs.firsts]
