"""A tiny cross-encoder re-ranker, trained offline in seconds on the tiny bi-encoder's weights."""

from __future__ import annotations

from pathlib import Path

from tests.tiny_model import TINY_CORPUS

TEMPLATES = ("is it true that {}?", "did {} really happen", "{} fact check")


def tiny_reranker_pairs() -> list[tuple[str, str]]:
    """(query, its claim): each tiny-corpus text asked about in three ways."""
    return [(t.format(text.lower().rstrip(".?")), text) for text in TINY_CORPUS for t in TEMPLATES]


def build_tiny_reranker(output: Path, base_model: Path) -> Path:
    """Train a cross-encoder from the tiny bi-encoder (a run folder, as `pairank train --reranker`
    writes it); returns the run folder."""
    import numpy as np
    import torch

    from pairank.models import load_sentence_transformer, resolve_model
    from training.data import PairSet
    from training.evaluators import model_encoder
    from training.reranker import RerankerConfig, train_reranker

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        pairs = tiny_reranker_pairs()
        labels = np.ones(len(pairs), dtype=np.float32)
        pair_set = PairSet([q for q, _ in pairs], [d for _, d in pairs], labels)
        base = resolve_model(str(base_model))
        encode = model_encoder(load_sentence_transformer(base, device="cpu"))
        config = RerankerConfig(epochs=40, lr=5e-3, batch_size=8, negatives=3, window=6, max_length=64)
        train_reranker(pair_set, base, encode, output, config, progress=False)
    finally:
        torch.set_num_threads(threads)
    return output
