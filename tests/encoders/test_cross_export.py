"""Cross-encoders through the encoder's path: pair tokens as sentence-transformers makes them, the int8
export passing its score-order gate (or falling back to torch fp32 with the reason), micro-batched pairs."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

from encoders.batcher import BatchingConfig, MicroBatcher
from encoders.cross_backend import CrossTorchBackend, PairTokenizer, activate, pair_inputs
from encoders.cross_export import CrossEncoderLoader, ndcg, probe_groups, score_groups, spearman
from encoders.loader import EncoderOptions
from encoders.torch_backend import tokenizer_settings
from pairank.models import (
    CROSS_ENCODER,
    load_sentence_transformer,
    model_kind,
    resolve_model,
)
from tests.helpers.reranker import tiny_reranker_pairs

PAIRS = [
    ("is it true that vaccines cause autism?", "Vaccines cause autism in young children."),
    ("did a shark swim on the highway", "The earth is flat and NASA hides it."),
    ("moon " * 40, "A shark was photographed swimming on a flooded highway. " * 10),  # cut longest-first
]


@pytest.fixture(scope="module")
def reference(tiny_reranker_dir: Path) -> CrossTorchBackend:
    """The tiny re-ranker on torch fp32."""
    return CrossTorchBackend(resolve_model(str(tiny_reranker_dir)).path)


def test_a_run_folder_of_a_reranker_is_a_cross_encoder(tiny_reranker_dir: Path, tiny_model_dir: Path) -> None:
    assert model_kind(tiny_reranker_dir) == CROSS_ENCODER
    assert model_kind(tiny_reranker_dir / "model") == CROSS_ENCODER
    assert model_kind(tiny_model_dir) == "bi-encoder" and model_kind("no/such/folder") == "bi-encoder"
    assert resolve_model(str(tiny_reranker_dir)).path == str((tiny_reranker_dir / "model").resolve())


def test_pairs_pack_ids_and_segments_as_the_model_tokenizer_does() -> None:
    # The bundled MiniLM's tokenizer gives the document its own segment (token type 1).
    model = load_sentence_transformer(resolve_model("default"), device="cpu")
    settings = tokenizer_settings(model, 32)
    hf_tokenizer = model[0].tokenizer  # type: ignore[index]
    packed = PairTokenizer(settings, hf_tokenizer.backend_tokenizer)(PAIRS)
    inputs = pair_inputs(packed, settings.pad_token_id, settings.input_names)
    expected = hf_tokenizer(
        [q for q, _ in PAIRS], [d for _, d in PAIRS], padding=True, truncation="longest_first", max_length=32,
        return_tensors="np",
    )  # fmt: skip
    for name in settings.input_names:
        assert np.array_equal(inputs[name], expected[name]), name
    assert inputs["token_type_ids"].max() == 1 and max(len(p) for p in packed) == 32


def test_torch_scores_are_the_cross_encoders_own(
    reference: CrossTorchBackend, tiny_reranker_dir: Path
) -> None:
    from sentence_transformers import CrossEncoder

    predicted = CrossEncoder(str(tiny_reranker_dir / "model"), device="cpu").predict(PAIRS)
    scores = activate(reference.forward(reference.tokenize(PAIRS)), reference.activation)
    assert reference.activation == "sigmoid"
    assert np.allclose(scores, predicted, atol=1e-5)


def test_the_int8_export_passes_the_gate_on_the_tiny_reranker(
    tiny_reranker_dir: Path, tmp_path: Path, reference: CrossTorchBackend
) -> None:
    spec = resolve_model(str(tiny_reranker_dir))
    options = EncoderOptions(backend="onnx", precision="int8", cache_root=tmp_path, device="cpu")
    loaded = CrossEncoderLoader(spec, options).load()
    if loaded.variant.key != "onnx-int8":
        # How close int8 comes is the installed onnxruntime quantizer's doing (onnxruntime 1.32.0 with
        # transformers 5.24: min nDCG@10 0.926 on one probe group): where the gate fails it, the loader must
        # serve torch fp32 and say why; the int8 checks below need a quantizer that passes.
        assert loaded.variant.key == "torch-fp32" and loaded.attempts, loaded.attempts
        pytest.skip(f"the int8 export failed the quality gate with this onnxruntime: {loaded.attempts}")
    assert not loaded.attempts
    assert loaded.quality is not None and loaded.quality["summary"].endswith("passed")
    assert loaded.quality["mean_ndcg@10"] >= 0.99
    # The served int8 scores order the trained pairs as fp32 does, near enough to pick the same claims.
    groups = [[(q, d) for _, d in tiny_reranker_pairs()[::3]] for q, _ in tiny_reranker_pairs()]
    fp32, int8 = score_groups(reference, groups), score_groups(loaded.backend, groups)
    assert np.mean([ndcg(a, b) for a, b in zip(fp32, int8, strict=True)]) >= 0.98
    # A second load reuses the cached export and its verdict (no export, no torch reference).
    again = CrossEncoderLoader(spec, options).load()
    assert again.variant.key == "onnx-int8" and again.quality == loaded.quality


def test_an_export_that_fails_the_gate_falls_back_to_torch_fp32_with_the_reason(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    from sentence_transformers import CrossEncoder

    # An untrained head scores every pair within a hair of every other: int8 rounding reorders them.
    folder = tmp_path / "untrained"
    CrossEncoder(str(tiny_model_dir), num_labels=1, max_length=64, device="cpu").save(str(folder))
    options = EncoderOptions(backend="onnx", precision="int8", cache_root=tmp_path / "cache", device="cpu")
    loaded = CrossEncoderLoader(resolve_model(str(folder)), options).load()
    assert loaded.variant.key == "torch-fp32"
    (attempt,) = loaded.attempts
    assert (
        attempt["variant"] == "onnx-int8"
        and "quality gate" in attempt["error"]
        and "failed" in attempt["error"]
    )


def test_the_gate_forgives_swapping_near_ties_but_not_a_poor_pair_on_top() -> None:
    reference = np.array([3.0, 2.0, 1.0, 1.0001, 0.0, -1.0])
    near_ties_swapped = np.array([3.0, 2.0, 1.0001, 1.0, 0.0, -1.0])
    worst_on_top = np.array([3.0, 2.0, 1.0, 1.0001, 0.0, 10.0])
    assert ndcg(reference, reference) == 1.0 and ndcg(reference, near_ties_swapped) > 0.9999
    assert ndcg(reference, worst_on_top) < 0.8 and ndcg(reference, -reference) < 0.7
    assert spearman(reference, reference) == pytest.approx(1.0) and spearman(reference, -reference) < -0.9
    assert len(probe_groups()) == 24 and all(len(group) == 20 for group in probe_groups())


def test_concurrent_rerankings_share_forward_passes(reference: CrossTorchBackend) -> None:
    batcher = MicroBatcher(reference, BatchingConfig(max_batch_texts=64, wait_ms=50))
    groups = [[(q, d) for _, d in tiny_reranker_pairs()[::3]] for q, _ in tiny_reranker_pairs()[:8]]
    results: dict[int, np.ndarray] = {}

    def rerank(index: int) -> None:
        results[index] = batcher.encode_tokens(reference.tokenize(groups[index]))

    threads = [threading.Thread(target=rerank, args=(i,)) for i in range(len(groups))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    batcher.close()
    assert batcher.stats.texts == 80 and batcher.stats.batches < len(groups)  # 8 calls, fewer passes
    for index, group in enumerate(groups):
        alone = reference.forward(reference.tokenize(group))
        assert np.allclose(results[index], alone, atol=1e-5)  # each caller gets its own rows
