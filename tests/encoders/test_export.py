"""Exports: every backend and precision, the quality gate, the cache (reuse, keying, locking), fallback."""

from __future__ import annotations

import copy
import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from encoders import export
from encoders.loader import (
    MANIFEST,
    EncoderLoader,
    EncoderOptions,
    Variant,
    candidate_variants,
    load_encoder_backend,
    variant_folder,
)
from encoders.probe import probe_sentences
from encoders.torch_backend import TorchBackend
from pairank.models import ModelSpec, resolve_model


@pytest.fixture(scope="module")
def tiny_spec(tiny_model_dir: Path) -> ModelSpec:
    """The tiny model's version (with its weights hash)."""
    return resolve_model(str(tiny_model_dir))


@pytest.mark.parametrize("backend", ["onnx", "openvino"])
@pytest.mark.parametrize("precision", ["fp32", "int8"])
def test_each_variant_exports_passes_the_gate_and_matches_torch(
    tiny_spec: ModelSpec, tiny_torch_backend: TorchBackend, tmp_path: Path, backend: str, precision: str
) -> None:
    loaded = load_encoder_backend(
        tiny_spec, EncoderOptions(backend=backend, precision=precision, cache_root=tmp_path)
    )
    assert loaded.variant == Variant(backend, precision)
    assert loaded.attempts == []
    manifest = json.loads((variant_folder(tmp_path, tiny_spec, loaded.variant) / MANIFEST).read_text())
    assert manifest["passed"] is True
    assert manifest["weights_sha256"] == tiny_spec.weights_sha256
    assert manifest["quality"]["probe_sentences"] == len(probe_sentences())
    texts = list(probe_sentences()[:40])
    ours = np.vstack([loaded.backend.forward(loaded.backend.tokenize([t])) for t in texts])
    reference = np.vstack([tiny_torch_backend.forward(tiny_torch_backend.tokenize([t])) for t in texts])
    cosines = np.sum(ours * reference, axis=1)
    assert cosines.min() >= 0.97
    if precision == "fp32":
        np.testing.assert_allclose(ours, reference, atol=1e-4)
    # A pass on one core fewer runs the same graph: the same vectors.
    batch = loaded.backend.tokenize(texts[:8])
    np.testing.assert_allclose(
        loaded.backend.forward(batch, spare_core=True), loaded.backend.forward(batch), atol=1e-5
    )


def test_second_start_reuses_the_export_without_loading_torch(tiny_spec: ModelSpec, tmp_path: Path) -> None:
    first = EncoderLoader(tiny_spec, EncoderOptions("openvino", "int8", tmp_path, "cpu")).load()
    folder = variant_folder(tmp_path, tiny_spec, first.variant)
    stamp = (folder / MANIFEST).stat().st_mtime_ns
    again = EncoderLoader(tiny_spec, EncoderOptions(cache_root=tmp_path, device="cpu"))
    loaded = again.load()
    assert loaded.variant == Variant("openvino", "int8")
    assert again._reference is None  # the torch weights were never loaded: nothing was exported
    assert (folder / MANIFEST).stat().st_mtime_ns == stamp


def test_an_export_of_other_weights_is_not_reused(tiny_spec: ModelSpec, tmp_path: Path) -> None:
    load_encoder_backend(tiny_spec, EncoderOptions(backend="onnx", precision="fp32", cache_root=tmp_path))
    manifest_path = variant_folder(tmp_path, tiny_spec, Variant("onnx", "fp32")) / MANIFEST
    manifest = json.loads(manifest_path.read_text())
    manifest["weights_sha256"] = "0" * 64
    manifest_path.write_text(json.dumps(manifest))
    loader = EncoderLoader(tiny_spec, EncoderOptions("onnx", "fp32", tmp_path, "cpu"))
    loader.load()
    assert loader._reference is not None  # exported again
    assert json.loads(manifest_path.read_text())["weights_sha256"] == tiny_spec.weights_sha256


def corrupting(exporter: export.Exporter, calls: list[str]) -> export.Exporter:
    """An exporter that exports a copy of the model with noise added to every weight."""

    def export_noisy(model: Any, settings: Any, folder: Path, precision: str, calib: Sequence[Any]) -> None:
        import torch

        calls.append(precision)
        noisy = copy.deepcopy(model)
        generator = torch.Generator().manual_seed(0)
        with torch.no_grad():
            for parameter in noisy.parameters():
                noise = torch.randn(parameter.shape, generator=generator) * parameter.std().nan_to_num(0.1)
                parameter.add_(noise)
        exporter(noisy, settings, folder, precision, calib)

    return export_noisy


def test_a_variant_failing_the_gate_falls_back_and_is_not_exported_again(
    tiny_spec: ModelSpec, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []
    monkeypatch.setitem(export.EXPORTERS, "openvino", corrupting(export.export_openvino, calls))
    loaded = load_encoder_backend(tiny_spec, EncoderOptions(cache_root=tmp_path))
    assert loaded.variant == Variant("onnx", "int8")
    assert loaded.attempts[0]["variant"] == "openvino-int8"
    assert "quality gate" in loaded.attempts[0]["error"] and "failed" in loaded.attempts[0]["error"]
    manifest = json.loads(
        (variant_folder(tmp_path, tiny_spec, Variant("openvino", "int8")) / MANIFEST).read_text()
    )
    assert manifest["passed"] is False
    again = load_encoder_backend(tiny_spec, EncoderOptions(cache_root=tmp_path))
    assert again.variant == Variant("onnx", "int8")
    assert calls == ["int8"]  # the failed verdict was remembered


def test_explicit_variant_failing_the_gate_ends_at_torch_fp32(
    tiny_spec: ModelSpec, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(export.EXPORTERS, "onnx", corrupting(export.export_onnx, []))
    loaded = load_encoder_backend(
        tiny_spec, EncoderOptions(backend="onnx", precision="int8", cache_root=tmp_path)
    )
    assert loaded.variant == Variant("torch", "fp32")
    assert [a["variant"] for a in loaded.attempts] == ["onnx-int8"]


def test_workers_starting_together_export_once(
    tiny_spec: ModelSpec, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []
    real = export.export_onnx

    def counting(*args: Any) -> None:
        calls.append("export")
        real(*args)

    monkeypatch.setitem(export.EXPORTERS, "onnx", counting)
    results: list[Variant] = []
    threads = [
        threading.Thread(
            target=lambda: results.append(
                load_encoder_backend(
                    tiny_spec, EncoderOptions(backend="onnx", precision="fp32", cache_root=tmp_path)
                ).variant
            )
        )
        for _ in range(3)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert results == [Variant("onnx", "fp32")] * 3
    assert calls == ["export"]


@pytest.mark.parametrize(
    ("backend", "precision", "device", "expected"),
    [
        ("auto", "auto", "cpu", ["openvino-int8", "onnx-int8", "torch-fp32"]),
        ("auto", "fp32", "cpu", ["torch-fp32"]),
        ("auto", "int8", "cpu", ["openvino-int8", "onnx-int8", "torch-fp32"]),
        ("auto", "auto", "cuda", ["torch-fp16", "torch-fp32"]),
        ("onnx", "auto", "cpu", ["onnx-int8", "torch-fp32"]),
        ("openvino", "fp32", "cpu", ["openvino-fp32", "torch-fp32"]),
        ("torch", "auto", "cuda:0", ["torch-fp16", "torch-fp32"]),
        ("torch", "auto", "cpu", ["torch-fp32"]),
    ],
)
def test_candidate_order(backend: str, precision: str, device: str, expected: list[str]) -> None:
    assert [v.key for v in candidate_variants(backend, precision, device)] == expected


@pytest.mark.parametrize(
    ("backend", "precision", "device", "message"),
    [
        ("torch", "int8", "cpu", "int8 needs the onnx or openvino backend"),
        ("torch", "fp16", "cpu", "fp16 runs only with the torch backend on a CUDA device"),
        ("onnx", "fp16", "cuda", "fp16 runs only with the torch backend"),
        ("tensorrt", "auto", "cpu", "encoder backend must be one of"),
        ("auto", "bf16", "cpu", "encoder precision must be one of"),
    ],
)
def test_impossible_combinations_are_refused(backend: str, precision: str, device: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        candidate_variants(backend, precision, device)


def test_hub_models_without_a_weights_hash_run_on_torch(tiny_model_dir: Path, tmp_path: Path) -> None:
    spec = ModelSpec("some/hub-model", str(tiny_model_dir), None)
    loaded = load_encoder_backend(spec, EncoderOptions(cache_root=tmp_path))
    assert loaded.variant == Variant("torch", "fp32")
    assert "weights hash" in loaded.attempts[0]["error"]


def test_vnni_is_read_from_the_cpu_flags() -> None:
    from encoders.export import has_vnni

    assert has_vnni("processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512f avx512_vnni\n")
    assert has_vnni("flags\t\t: fpu avx2 avx_vnni\n") and has_vnni("flags : amx_int8 avx2\n")
    # AVX2 alone (this project's AMD EPYC machines): int8 is exported with the overflow fix.
    assert not has_vnni("flags\t\t: fpu sse2 avx avx2 fma\n") and not has_vnni("")


def test_an_export_hitting_a_full_disk_falls_back_leaves_nothing_and_is_tried_again(
    tiny_spec: ModelSpec, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    real = export.EXPORTERS["openvino"]

    def full_disk(model: Any, settings: Any, folder: Path, precision: str, calib: Sequence[str]) -> None:
        real(model, settings, folder, precision, calib)  # half the work reaches the disk, then:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setitem(export.EXPORTERS, "openvino", full_disk)
    loaded = load_encoder_backend(tiny_spec, EncoderOptions(cache_root=tmp_path))
    assert loaded.variant == Variant("onnx", "int8")  # the next variant serves meanwhile
    assert "No space left" in loaded.attempts[0]["error"]
    assert not list(tmp_path.rglob(".tmp-*"))  # the half-written export does not hold the space
    assert not (variant_folder(tmp_path, tiny_spec, Variant("openvino", "int8")) / MANIFEST).exists()
    monkeypatch.setitem(export.EXPORTERS, "openvino", real)  # space freed: the next load exports it
    assert load_encoder_backend(tiny_spec, EncoderOptions(cache_root=tmp_path)).variant == Variant(
        "openvino", "int8"
    )
