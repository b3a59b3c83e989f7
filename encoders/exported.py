"""Backends that run an exported model: ONNX Runtime and OpenVINO, fp32 or int8.

Each reads an export folder written by `encoders.export` (the graph, `tokenizer.json` and
`tokenizer_settings.json`); neither imports torch, so a worker serving a cached export starts fast.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from encoders.backend import FastTokenizer, normalize, pad_batch, read_tokenizer_settings

ONNX_FILE = "model.onnx"
OPENVINO_FILE = "model.xml"


def inference_threads(requested: int | None = None) -> int:
    """Threads per forward pass: the requested count, else every core this process may use."""
    if requested:
        return requested
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


class _ExportedBackend:
    """Shared part: tokenizer, padding and normalization around a runtime's `run(inputs)`."""

    name = "exported"

    def __init__(self, folder: Path, precision: str, threads: int | None = None) -> None:
        self.folder = folder
        self.precision = precision
        self.settings = read_tokenizer_settings(folder)
        self._tokenize = FastTokenizer(self.settings)
        self.dimension = int(self.forward(self.tokenize(["dimension probe"])).shape[1])

    def tokenize(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Token ids per text."""
        return self._tokenize(texts)

    def set_max_seq_length(self, max_seq_length: int) -> None:
        """Truncate to another length than the export recorded (PAIRANK_MAX_SEQ_LENGTH)."""
        self.settings = replace(self.settings, max_seq_length=max_seq_length)
        self._tokenize = FastTokenizer(self.settings)

    def forward(self, token_ids: Sequence[np.ndarray]) -> np.ndarray:
        """Normalized embeddings of one padded batch."""
        inputs = pad_batch(token_ids, self.settings.pad_token_id, self.settings.input_names)
        return normalize(self._run(inputs))

    def _run(self, inputs: dict[str, np.ndarray]) -> np.ndarray:
        raise NotImplementedError


class OnnxBackend(_ExportedBackend):
    """ONNX Runtime on the CPU (a dynamically quantized graph for int8)."""

    name = "onnx"

    def __init__(self, folder: Path, precision: str, threads: int | None = None) -> None:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = inference_threads(threads)
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self._session = ort.InferenceSession(
            str(folder / ONNX_FILE), options, providers=["CPUExecutionProvider"]
        )
        super().__init__(folder, precision, threads)

    def _run(self, inputs: dict[str, np.ndarray]) -> np.ndarray:
        return np.asarray(self._session.run(None, inputs)[0])


class OpenVinoBackend(_ExportedBackend):
    """OpenVINO on the CPU (a statically quantized graph for int8), tuned for latency."""

    name = "openvino"

    def __init__(self, folder: Path, precision: str, threads: int | None = None) -> None:
        import openvino as ov

        core = ov.Core()
        config: dict[str, Any] = {
            "PERFORMANCE_HINT": "LATENCY",
            "INFERENCE_NUM_THREADS": inference_threads(threads),
        }
        self._compiled = core.compile_model(core.read_model(str(folder / OPENVINO_FILE)), "CPU", config)
        # One infer request reused for every batch: the micro-batcher runs one forward pass at a time.
        self._request = self._compiled.create_infer_request()
        super().__init__(folder, precision, threads)

    def _run(self, inputs: dict[str, np.ndarray]) -> np.ndarray:
        result = self._request.infer(inputs)
        return np.array(result[self._compiled.output(0)], copy=True)


EXPORTED_BACKENDS: dict[str, type[_ExportedBackend]] = {"onnx": OnnxBackend, "openvino": OpenVinoBackend}
