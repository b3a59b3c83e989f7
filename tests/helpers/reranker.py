"""A tiny cross-encoder re-ranker, trained offline in seconds, the same in every test session.

Its base is the bundled MiniLM cut to its first two layers: pre-trained token embeddings make learning
to match a question with its claim a matter of a few epochs. A randomly initialised small BERT learned
it or not depending on the machine's float rounding (it passed on AMD cores and failed on Intel ones).
"""

from __future__ import annotations

from pathlib import Path

from tests.helpers.tiny_model import TINY_CORPUS

TEMPLATES = ("is it true that {}?", "did {} really happen", "{} fact check")


def tiny_reranker_pairs() -> list[tuple[str, str]]:
    """(query, its claim): each tiny-corpus text asked about in three ways."""
    return [(t.format(text.lower().rstrip(".?")), text) for text in TINY_CORPUS for t in TEMPLATES]


def build_reranker_base(output: Path, layers: int = 2) -> Path:
    """The bundled MiniLM bi-encoder cut to its first `layers` layers, saved as a sentence-transformers
    folder (the weights a cross-encoder starts from, as `pairank train --reranker` starts from its base)."""
    from sentence_transformers import SentenceTransformer

    from pairank.models import bundled_model_path

    model = SentenceTransformer(str(bundled_model_path()), device="cpu")
    bert = model[0].auto_model
    bert.encoder.layer = bert.encoder.layer[:layers]
    bert.config.num_hidden_layers = layers
    model.save(str(output))
    return output


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
        # Every other claim is a negative (9): a softmax over the whole corpus learns fastest.
        config = RerankerConfig(epochs=15, lr=3e-4, batch_size=8, negatives=9, window=9, max_length=64)
        train_reranker(pair_set, base, encode, output, config, progress=False)
    finally:
        torch.set_num_threads(threads)
    return output
