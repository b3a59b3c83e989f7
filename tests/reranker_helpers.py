"""A tiny cross-encoder re-ranker, trained offline in seconds, the same in every test session.

Its base is a small BERT with the bundled MiniLM's tokenizer (not a tokenizer trained on the fly, like
the tiny bi-encoder's: the WordPiece trainer breaks frequency ties differently in every process, so a
model trained on top of it would differ from one session to the next, and with it whether its int8
export passes the quality gate).
"""

from __future__ import annotations

from pathlib import Path

from tests.tiny_model import TINY_CORPUS

TEMPLATES = ("is it true that {}?", "did {} really happen", "{} fact check")


def tiny_reranker_pairs() -> list[tuple[str, str]]:
    """(query, its claim): each tiny-corpus text asked about in three ways."""
    return [(t.format(text.lower().rstrip(".?")), text) for text in TINY_CORPUS for t in TEMPLATES]


def build_reranker_base(output: Path, hidden_size: int = 64, num_layers: int = 2, seed: int = 0) -> Path:
    """A small random BERT bi-encoder (mean pooling) with the bundled model's tokenizer."""
    import shutil

    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Pooling, Transformer
    from transformers import AutoTokenizer, BertConfig, BertModel

    from pairank.models import bundled_model_path

    tokenizer = AutoTokenizer.from_pretrained(str(bundled_model_path()), local_files_only=True)
    tokenizer.model_max_length = 128
    torch.manual_seed(seed)
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        num_hidden_layers=num_layers,
        num_attention_heads=2,
        intermediate_size=hidden_size * 2,
        max_position_embeddings=130,
    )
    hf_dir = output / "_hf"
    BertModel(config).save_pretrained(hf_dir)
    tokenizer.save_pretrained(hf_dir)
    transformer = Transformer(str(hf_dir), max_seq_length=128)
    pooling = Pooling(transformer.get_embedding_dimension(), pooling_mode="mean")
    SentenceTransformer(modules=[transformer, pooling], device="cpu").save(str(output))
    shutil.rmtree(hf_dir)
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
        config = RerankerConfig(epochs=40, lr=5e-3, batch_size=8, negatives=3, window=6, max_length=64)
        train_reranker(pair_set, base, encode, output, config, progress=False)
    finally:
        torch.set_num_threads(threads)
    return output
