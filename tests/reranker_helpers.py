"""A tiny cross-encoder re-ranker, trained offline in seconds, the same in every test session.

Its base is a small BERT with the bundled MiniLM's tokenizer, a fixed subword vocabulary, so the
model trained on top of it, and with it whether its int8 export passes the quality gate, is the same
from one session to the next.
"""

from __future__ import annotations

from pathlib import Path

from tests.tiny_model import TINY_CORPUS, save_bert_bi_encoder

TEMPLATES = ("is it true that {}?", "did {} really happen", "{} fact check")


def tiny_reranker_pairs() -> list[tuple[str, str]]:
    """(query, its claim): each tiny-corpus text asked about in three ways."""
    return [(t.format(text.lower().rstrip(".?")), text) for text in TINY_CORPUS for t in TEMPLATES]


def build_reranker_base(output: Path, hidden_size: int = 64, num_layers: int = 2, seed: int = 0) -> Path:
    """A small random BERT bi-encoder (mean pooling) with the bundled model's tokenizer."""
    from transformers import AutoTokenizer

    from pairank.models import bundled_model_path

    tokenizer = AutoTokenizer.from_pretrained(str(bundled_model_path()), local_files_only=True)
    tokenizer.model_max_length = 128
    return save_bert_bi_encoder(output, tokenizer, hidden_size, num_layers, seed)


def build_tiny_reranker(output: Path) -> Path:
    """Train a cross-encoder from a small base on the tiny corpus's pairs (a run folder, as
    `pairank train --reranker` writes it); returns the run folder."""
    import numpy as np
    import torch

    from pairank.models import load_sentence_transformer, resolve_model
    from training.data import PairSet
    from training.evaluators import model_encoder
    from training.reranker import RerankerConfig, train_reranker

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # one thread: the same sums in the same order, the same model every time
    try:
        base = resolve_model(str(build_reranker_base(output.parent / f"{output.name}-base")))
        pairs = tiny_reranker_pairs()
        labels = np.ones(len(pairs), dtype=np.float32)
        pair_set = PairSet([q for q, _ in pairs], [d for _, d in pairs], labels)
        encode = model_encoder(load_sentence_transformer(base, device="cpu"))
        config = RerankerConfig(epochs=40, lr=5e-3, batch_size=8, negatives=3, window=6, max_length=64)
        train_reranker(pair_set, base, encode, output, config, progress=False)
    finally:
        torch.set_num_threads(threads)
    return output
