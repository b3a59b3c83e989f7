"""Export a sentence-transformers model to ONNX or OpenVINO, quantize it, and gate it on quality.

We export with the runtimes' own tools (`torch.onnx.export` + `onnxruntime.quantization`, and
`openvino.convert_model` + NNCF) rather than sentence-transformers' `backend=` helpers: those go through
`optimum`, which does not support the sentence-transformers/transformers releases training uses, and
serving must run the same library versions as training. The exported graph is the whole model
(transformer, pooling, any dense layers), so the pooling a model was trained with is the one served.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from encoders.backend import TokenizerSettings, pad_batch, write_tokenizer_settings
from encoders.exported import ONNX_FILE, OPENVINO_FILE
from encoders.torch_backend import TorchBackend

if TYPE_CHECKING:
    import torch
    from sentence_transformers import SentenceTransformer

log = logging.getLogger(__name__)

MIN_MEAN_COSINE = 0.99
MIN_COSINE = 0.97
_ONNX_OPSET = 17


@dataclass(frozen=True)
class QualityCheck:
    """How closely a variant reproduces torch fp32 on the probe sentences."""

    mean_cosine: float
    min_cosine: float
    probe_count: int

    @property
    def passed(self) -> bool:
        """True when the variant may serve: mean >= 0.99 and every sentence >= 0.97."""
        return self.mean_cosine >= MIN_MEAN_COSINE and self.min_cosine >= MIN_COSINE

    def describe(self) -> str:
        """One line for logs and manifests."""
        verdict = "passed" if self.passed else "failed"
        return (
            f"cosine to torch fp32 on {self.probe_count} probe sentences: mean {self.mean_cosine:.4f} "
            f"(>= {MIN_MEAN_COSINE}), min {self.min_cosine:.4f} (>= {MIN_COSINE}): {verdict}"
        )

    def as_dict(self) -> dict[str, Any]:
        """The export manifest's `quality` record."""
        return {
            "mean_cosine": round(self.mean_cosine, 6),
            "min_cosine": round(self.min_cosine, 6),
            "probe_sentences": self.probe_count,
            "summary": self.describe(),
        }


def compare(reference: np.ndarray, candidate: np.ndarray) -> QualityCheck:
    """Row-wise cosine between two sets of normalized embeddings."""
    cosines = np.sum(reference * candidate, axis=1)
    return QualityCheck(float(cosines.mean()), float(cosines.min()), len(cosines))


def encode_all(
    backend: Any, token_ids: Sequence[np.ndarray], batch_size: int = 32, progress: bool = False
) -> np.ndarray:
    """Encode pre-tokenized texts in length-sorted batches (little padding), rows in input order."""
    from tqdm.auto import tqdm

    order = sorted(range(len(token_ids)), key=lambda i: len(token_ids[i]))
    out = np.empty((len(token_ids), int(backend.dimension)), dtype=np.float32)
    with tqdm(total=len(order), desc="encoding", unit="text", disable=not progress) as bar:
        for start in range(0, len(order), batch_size):
            chunk = order[start : start + batch_size]
            out[chunk] = backend.forward([token_ids[i] for i in chunk])
            bar.update(len(chunk))
    return out


def sentence_embedding_module(model: SentenceTransformer, names: Sequence[str]) -> torch.nn.Module:
    """A torch module taking positional token tensors and returning the model's sentence embedding."""
    import torch

    class SentenceEmbedding(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, *tensors: torch.Tensor) -> torch.Tensor:
            return self.model(dict(zip(names, tensors, strict=True)))["sentence_embedding"]

    return SentenceEmbedding().eval()


def _traceable(
    model: SentenceTransformer, settings: TokenizerSettings, token_ids: Sequence[np.ndarray]
) -> tuple[torch.nn.Module, list[str], tuple[torch.Tensor, ...]]:
    """The module to export, its input names, and an example batch of two texts of different lengths
    (so the exporters see padding)."""
    import torch

    names = list(settings.input_names)
    shortest, longest = min(token_ids, key=len), max(token_ids, key=len)
    example = pad_batch([shortest, longest], settings.pad_token_id, names)
    return sentence_embedding_module(model, names), names, tuple(torch.from_numpy(example[n]) for n in names)


def export_onnx(
    model: SentenceTransformer,
    settings: TokenizerSettings,
    folder: Path,
    precision: str,
    calibration: Sequence[np.ndarray],
) -> None:
    """Write `model.onnx`: the fp32 graph, or its dynamically quantized int8 version."""
    module, names, example = _traceable(model, settings, calibration)
    export_onnx_graph(module, names, example, "sentence_embedding", folder, precision)


def export_onnx_graph(
    module: torch.nn.Module,
    names: Sequence[str],
    example: tuple[torch.Tensor, ...],
    output: str,
    folder: Path,
    precision: str,
) -> None:
    """Write any module taking (batch, sequence) token tensors as `model.onnx`, fp32 or int8 (dynamic)."""
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic

    axes = {name: {0: "batch", 1: "sequence"} for name in names} | {output: {0: "batch"}}
    target = folder / (ONNX_FILE if precision == "fp32" else "model-fp32.onnx")
    with torch.inference_mode():
        torch.onnx.export(
            module,
            example,
            str(target),
            input_names=list(names),
            output_names=[output],
            dynamic_axes=axes,
            opset_version=_ONNX_OPSET,
            dynamo=False,  # the TorchScript exporter handles dynamic axes without onnxscript rewrites
        )
    if precision == "int8":
        quantize_dynamic(str(target), str(folder / ONNX_FILE), weight_type=QuantType.QInt8, per_channel=True)
        target.unlink()


def export_openvino(
    model: SentenceTransformer,
    settings: TokenizerSettings,
    folder: Path,
    precision: str,
    calibration: Sequence[np.ndarray],
) -> None:
    """Write `model.xml`/`.bin`: converted from torch, statically quantized to int8 with NNCF if asked."""
    module, names, example = _traceable(model, settings, calibration)
    batches = [pad_batch([ids], settings.pad_token_id, settings.input_names) for ids in calibration]
    export_openvino_graph(module, names, example, folder, precision, batches)


def export_openvino_graph(
    module: torch.nn.Module,
    names: Sequence[str],
    example: tuple[torch.Tensor, ...],
    folder: Path,
    precision: str,
    calibration: Sequence[dict[str, np.ndarray]],
) -> None:
    """Convert any module taking token tensors to `model.xml`/`.bin`; int8: NNCF statically quantizes it
    on the calibration batches (named model inputs)."""
    import openvino as ov
    import torch

    with torch.inference_mode():
        converted = ov.convert_model(module, example_input=example)
    for port, name in zip(converted.inputs, names, strict=True):
        port.get_tensor().set_names({name})
    if precision == "int8":
        import nncf

        # Calibration on the local probe sentences only: never a hub dataset (no network at run time).
        dataset = nncf.Dataset(list(calibration))
        from nncf.quantization.advanced_parameters import AdvancedQuantizationParameters, OverflowFix

        # Without VNNI, int8 dot products can saturate: NNCF's overflow fix (7-bit weights) on every
        # layer keeps all-MiniLM-L6-v2 above the quality gate on AVX2-only CPUs (min cosine 0.972 vs
        # 0.965); with VNNI, NNCF's default (first layer only) keeps full 8-bit precision elsewhere.
        fix = OverflowFix.FIRST_LAYER if has_vnni() else OverflowFix.ENABLE
        converted = nncf.quantize(
            converted,
            dataset,
            model_type=nncf.ModelType.TRANSFORMER,
            subset_size=len(calibration),
            advanced_parameters=AdvancedQuantizationParameters(overflow_fix=fix),
        )
    ov.save_model(converted, str(folder / OPENVINO_FILE), compress_to_fp16=False)


VNNI_FLAGS = {"avx512_vnni", "avx_vnni", "amx_int8"}


def has_vnni(cpuinfo: str | None = None) -> bool:
    """Whether the CPU has int8 dot-product instructions (VNNI/AMX), from /proc/cpuinfo's flags."""
    if cpuinfo is None:
        path = Path("/proc/cpuinfo")
        cpuinfo = path.read_text() if path.is_file() else ""
    flags = {flag for line in cpuinfo.splitlines() if line.startswith("flags") for flag in line.split()}
    return bool(flags & VNNI_FLAGS)


Exporter = Callable[[Any, TokenizerSettings, Path, str, Sequence[np.ndarray]], None]
EXPORTERS: dict[str, Exporter] = {"onnx": export_onnx, "openvino": export_openvino}


def write_export(
    reference: TorchBackend, backend_name: str, precision: str, folder: Path, probe: Sequence[str]
) -> None:
    """Export the reference model into `folder` with its tokenizer files (no quality check here)."""
    folder.mkdir(parents=True, exist_ok=True)
    token_ids = reference.tokenize(probe)
    # Calibrate on every other probe sentence; the quality gate then scores all of them.
    calibration = token_ids[::2]
    EXPORTERS[backend_name](reference.model, reference.settings, folder, precision, calibration)
    first: Any = reference.model[0]
    tokenizer = first.tokenizer.backend_tokenizer
    tokenizer.save(str(folder / "tokenizer.json"))
    settings = TokenizerSettings(
        tokenizer_file=folder / "tokenizer.json",
        max_seq_length=reference.settings.max_seq_length,
        pad_token_id=reference.settings.pad_token_id,
        lowercase=reference.settings.lowercase,
        input_names=reference.settings.input_names,
    )
    write_tokenizer_settings(folder, settings)
