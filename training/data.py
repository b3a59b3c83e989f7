"""Training data: pair files, label scaling, held-out dev splits, sampled negatives and batch tensors.

Pairs stay plain Python lists: the batch order (a permutation from `training.shuffling`) is applied
by index, and batches are consecutive slices of it, so no DataLoader reshuffles them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from evaluation.datasets import LabeledPair, load_pairs, read_texts
from training.config import DataConfig, NegativesConfig

Encoder = Callable[[Sequence[str]], np.ndarray]


@dataclass
class PairSet:
    """Parallel lists of first texts, second texts and float labels (already rescaled)."""

    firsts: list[str]
    seconds: list[str]
    labels: np.ndarray
    raw_labels: np.ndarray = field(default_factory=lambda: np.zeros(0))
    negatives: list[list[str]] | None = None  # mined hard negatives per pair (training/hard_negatives.py)

    def __len__(self) -> int:
        return len(self.firsts)

    @classmethod
    def from_pairs(cls, pairs: Sequence[LabeledPair], label_range: Sequence[float] | None = None) -> PairSet:
        """Build from LabeledPairs, rescaling labels from [min, max] to [0, 1] when a range is given."""
        raw = np.asarray([p.label for p in pairs], dtype=np.float64)
        return cls(
            firsts=[p.query for p in pairs],
            seconds=[p.document for p in pairs],
            labels=scale_labels(raw, label_range),
            raw_labels=raw,
        )

    def subset(self, indices: Sequence[int] | np.ndarray) -> PairSet:
        """The pairs at `indices`, in that order."""
        idx = np.asarray(indices, dtype=np.int64)
        return PairSet(
            [self.firsts[i] for i in idx],
            [self.seconds[i] for i in idx],
            self.labels[idx],
            self.raw_labels[idx] if len(self.raw_labels) else self.raw_labels,
            [self.negatives[i] for i in idx] if self.negatives is not None else None,
        )

    def as_labeled_pairs(self, raw: bool = True) -> list[LabeledPair]:
        """Back to LabeledPairs (raw labels by default, as the evaluation module expects)."""
        labels = self.raw_labels if raw and len(self.raw_labels) else self.labels
        rows = zip(self.firsts, self.seconds, labels, strict=True)
        return [LabeledPair(q, d, float(y)) for q, d, y in rows]


def scale_labels(labels: np.ndarray, label_range: Sequence[float] | None) -> np.ndarray:
    """Map labels from [min, max] to [0, 1] (the paper's normalisation for STS-b and ANTIQUE)."""
    if not label_range:
        return labels.astype(np.float32)
    low, high = float(label_range[0]), float(label_range[1])
    if high <= low:
        raise ValueError(f"label_range must be [min, max] with max > min, got {list(label_range)}")
    return ((labels - low) / (high - low)).astype(np.float32)


def load_train_pairs(config: DataConfig) -> PairSet:
    """Read the training pairs a config names (first `limit` lines when set)."""
    if not config.train_pairs:
        raise ValueError("data.train_pairs is not set (a JSONL file of {query, document, label})")
    pairs = load_pairs(config.train_pairs)
    if config.limit:
        pairs = pairs[: config.limit]
    if not pairs:
        raise ValueError(f"no pairs in {config.train_pairs}")
    result = PairSet.from_pairs(pairs, config.label_range)
    if config.document_titles:
        result.seconds = add_titles(result.seconds, config.document_titles)
    return result


def view_pairs(corpus: str, limit: int | None, seed: int) -> list[tuple[str, str]]:
    """(title, text) of each titled document of a BEIR corpus: two views of one document, a seeded sample
    of `limit` of them when set."""
    path = _corpus_file(corpus)
    bare, titled = read_texts(path), read_texts(path, with_title=True)
    views = [
        (titled[doc_id][: len(titled[doc_id]) - len(text)].strip(), text)
        for doc_id, text in bare.items()
        if titled[doc_id] != text
    ]
    if limit is not None and limit < len(views):
        chosen = np.random.default_rng(seed).choice(len(views), size=limit, replace=False)
        views = [views[i] for i in sorted(chosen.tolist())]
    return views


def with_view_pairs(pairs: PairSet, config: DataConfig, seed: int) -> PairSet:
    """The pairs plus the corpus's self-supervised (title, text) pairs (label 1) when configured."""
    if not config.view_pairs:
        return pairs
    views = view_pairs(config.view_pairs, config.view_pairs_limit, seed)
    top = float(config.label_range[1]) if config.label_range else 1.0
    return PairSet(
        firsts=pairs.firsts + [title for title, _ in views],
        seconds=pairs.seconds + [text for _, text in views],
        labels=np.concatenate([pairs.labels, np.ones(len(views), dtype=pairs.labels.dtype)]),
        raw_labels=np.concatenate([pairs.raw_labels, np.full(len(views), top)]),
        negatives=None if pairs.negatives is None else pairs.negatives + [[] for _ in views],
    )


def add_titles(texts: list[str], corpus: str) -> list[str]:
    """Prefix the corpus title to each text that is a document of the corpus (`title text`, as BEIR)."""
    path = _corpus_file(corpus)
    bare, titled = read_texts(path), read_texts(path, with_title=True)
    by_text = {text: titled[doc_id] for doc_id, text in bare.items()}
    return [by_text.get(text, text) for text in texts]


def split_by_query(pairs: PairSet, fraction: float, seed: int) -> tuple[PairSet, PairSet]:
    """Hold out `fraction` of the distinct first texts with all their pairs: (train, dev), no leakage."""
    queries = sorted(set(pairs.firsts))
    rng = np.random.default_rng(seed)
    n_dev = max(1, round(len(queries) * fraction)) if len(queries) > 1 else 0
    dev_queries = set(rng.permutation(np.asarray(queries, dtype=object))[:n_dev].tolist())
    dev_idx = [i for i, q in enumerate(pairs.firsts) if q in dev_queries]
    train_idx = [i for i, q in enumerate(pairs.firsts) if q not in dev_queries]
    return pairs.subset(train_idx), pairs.subset(dev_idx)


def log_rank_positions(start: int, pool_size: int, limit: int | None) -> list[int]:
    """0-based ranks start + 2**k (k = 0, 1, ...) below pool_size; `limit` keeps an even spread of them."""
    positions, k = [], 0
    while start + 2**k < pool_size:
        positions.append(start + 2**k - 1)
        k += 1
    if limit is not None and 0 < limit < len(positions):
        keep = np.unique(np.linspace(0, len(positions) - 1, limit).round().astype(int))
        positions = [positions[i] for i in keep]
    return positions


def sample_negatives(
    pairs: PairSet, config: NegativesConfig, encode: Encoder, with_titles: bool = False
) -> PairSet:
    """Add label-0 pairs for pointwise losses on positive-only data (BSC paper, section 4, PFCC-S).

    Every anchor ranks the pool by the base model's cosine similarity; its positives are skipped and
    the documents at ranks start + 2**k become negatives (many hard ones, a few easy ones). Positives
    are repeated to balance the classes when `oversample_positives` is set. `with_titles` renders
    corpus documents as `title text`, like training documents with `data.document_titles`.
    """
    if config.strategy != "log_rank":
        raise ValueError(f"unknown negatives strategy {config.strategy!r} (known: log_rank)")
    if config.pool == "corpus":
        if not config.corpus:
            raise ValueError("negatives.pool=corpus needs negatives.corpus (a BEIR corpus.jsonl)")
        corpus = read_texts(_corpus_file(config.corpus), with_title=with_titles)
        pool = list(dict.fromkeys(corpus.values()))
    elif config.pool == "train":
        pool = list(dict.fromkeys(pairs.seconds))
    else:
        raise ValueError(f"negatives.pool must be train|corpus, got {config.pool!r}")
    positive_idx = [i for i in range(len(pairs)) if pairs.labels[i] > 0]
    anchors = list(dict.fromkeys(pairs.firsts[i] for i in positive_idx))
    positives: dict[str, set[str]] = {}
    for i in positive_idx:
        positives.setdefault(pairs.firsts[i], set()).add(pairs.seconds[i])
    anchor_emb, pool_emb = np.asarray(encode(anchors)), np.asarray(encode(pool))
    ranks = log_rank_positions(config.start, len(pool), config.max_per_query)
    firsts, seconds = list(pairs.firsts), list(pairs.seconds)
    labels, raw = list(pairs.labels), list(pairs.raw_labels if len(pairs.raw_labels) else pairs.labels)
    n_neg = 0
    for a, anchor in enumerate(anchors):
        order = np.argsort(-(pool_emb @ anchor_emb[a]), kind="stable")
        ranked = [pool[j] for j in order if pool[j] not in positives[anchor]]
        for r in ranks:
            if r < len(ranked):
                firsts.append(anchor)
                seconds.append(ranked[r])
                labels.append(0.0)
                raw.append(0.0)
                n_neg += 1
    if config.oversample_positives and positive_idx:
        repeats = max(0, round(n_neg / len(positive_idx)) - 1)
        for _ in range(repeats):
            for i in positive_idx:
                firsts.append(pairs.firsts[i])
                seconds.append(pairs.seconds[i])
                labels.append(float(pairs.labels[i]))
                raw.append(float(raw[i]))
    return PairSet(firsts, seconds, np.asarray(labels, np.float32), np.asarray(raw, np.float64))


def _corpus_file(path: str) -> Path:
    """Accept a BEIR folder or its corpus.jsonl."""
    p = Path(path)
    return p / "corpus.jsonl" if p.is_dir() else p


def batch_slices(order: np.ndarray, batch_size: int) -> list[np.ndarray]:
    """Consecutive slices of the epoch's permutation: the batches, in order, never reshuffled."""
    return [order[i : i + batch_size] for i in range(0, len(order), batch_size)]


def move_features(features: dict[str, Any], device: torch.device) -> dict[str, Any]:
    """Move the tensors of a tokenised batch to `device` (non-tensor entries such as `modality` stay)."""
    return {k: v.to(device, non_blocking=True) if torch.is_tensor(v) else v for k, v in features.items()}
