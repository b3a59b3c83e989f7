"""Build tiny, offline sentence-transformers models (small BertConfig, tokenizer trained on the fly).

Used by the test suite and by anyone who wants a fast stand-in model; nothing here touches the network.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

TINY_CORPUS = [
    "The moon landing was staged in a film studio.",
    "Drinking bleach cures the coronavirus infection.",
    "Vaccines cause autism in young children.",
    "The earth is flat and NASA hides it.",
    "How do I reset my router password?",
    "What is the best way to learn Python programming?",
    "Where can I buy cheap flights to Doha?",
    "The president signed a law banning plastic bags.",
    "A shark was photographed swimming on a flooded highway.",
    "Eating carrots improves your night vision dramatically.",
]


# Claims in Spanish, Portuguese, German, Arabic, French and Swahili: the vocabulary of a tiny
# multilingual model (`build_multilingual_tiny_model`), Latin, Arabic and accented characters alike.
MULTILINGUAL_CORPUS = [
    "Las vacunas causan infertilidad en las mujeres jóvenes.",
    "Los gobiernos ocultaron las muertes de la pandemia.",
    "As antenas espalharam o vírus pelas cidades.",
    "Beber água quente curava a gripe das crianças.",
    "Die Regierungen verheimlichten die Todesfälle der Pandemie.",
    "Heißes Wasser heilte die Grippe der Kinder.",
    "اللقاحات تسبب العقم عند النساء",
    "الصحفيون نشروا الأخبار الكاذبة",
    "Les antennes 5G propagent le coronavirus.",
    "Chanjo inabadilisha DNA yako.",
]


def build_multilingual_tiny_model(output_dir: Path, seed: int = 1) -> Path:
    """A tiny bi-encoder whose vocabulary covers the multilingual claims as well as the English ones."""
    return build_tiny_model(output_dir, MULTILINGUAL_CORPUS, vocab_size=700, seed=seed)


def build_tiny_model(
    output_dir: Path,
    texts: Iterable[str] = (),
    hidden_size: int = 32,
    num_layers: int = 2,
    vocab_size: int = 400,
    seed: int = 0,
) -> Path:
    """Create and save a small BERT bi-encoder with mean pooling; returns the saved folder."""
    from tokenizers import Tokenizer, decoders, normalizers, pre_tokenizers
    from tokenizers.models import WordPiece
    from transformers import PreTrainedTokenizerFast

    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    corpus = list(TINY_CORPUS) + [t for t in texts if t.strip()]
    special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    normalizer = normalizers.BertNormalizer(lowercase=True)
    pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    vocab = deterministic_vocab(corpus, vocab_size, special, normalizer, pre_tokenizer)
    tokenizer = Tokenizer(WordPiece(vocab, unk_token="[UNK]"))
    tokenizer.normalizer = normalizer
    tokenizer.pre_tokenizer = pre_tokenizer
    tokenizer.decoder = decoders.WordPiece()
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
        model_max_length=128,
    )
    from tokenizers.processors import TemplateProcessing

    fast.backend_tokenizer.post_processor = TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B [SEP]",
        special_tokens=[("[CLS]", fast.cls_token_id), ("[SEP]", fast.sep_token_id)],
    )
    return save_bert_bi_encoder(output_dir, fast, hidden_size, num_layers, seed)


def deterministic_vocab(
    corpus: list[str], vocab_size: int, special: list[str], normalizer: Any, pre_tokenizer: Any
) -> dict[str, int]:
    """A WordPiece vocabulary that is the same in every process: special tokens, every character
    (alone and as a continuation), then the corpus's words by frequency, ties alphabetical."""
    # tokenizers' WordPieceTrainer breaks ties in hash order, which Rust seeds afresh per process:
    # each test process then built a different "tiny model" and rank-order assertions flaked.
    counts: Counter[str] = Counter()
    for text in corpus:
        counts.update(word for word, _ in pre_tokenizer.pre_tokenize_str(normalizer.normalize_str(text)))
    chars = sorted({char for word in counts for char in word})
    pieces = list(special) + chars + [f"##{char}" for char in chars]
    known = set(pieces)
    words = [w for w in sorted(counts, key=lambda w: (-counts[w], w)) if w not in known]
    pieces += words[: max(0, vocab_size - len(pieces))]
    return {piece: index for index, piece in enumerate(pieces)}


def save_bert_bi_encoder(output: Path, tokenizer: Any, hidden_size: int, num_layers: int, seed: int) -> Path:
    """Save a randomly initialised small BERT (seeded) with this tokenizer, mean pooled, as a
    sentence-transformers folder; returns it."""
    import shutil

    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Pooling, Transformer
    from transformers import BertConfig, BertModel

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
