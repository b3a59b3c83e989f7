"""Backends that run an exported model: ONNX Runtime and OpenVINO, fp32 or int8.

Each reads an export folder written by `encoders.export` (the graph, `tokenizer.json` and
`tokenizer_settings.json`); neither imports torch, so a worker serving a cached export starts fast.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from encoders.backend import FastTokenizer, normalize, pad_batch, read_tokenizer_settings

ONNX_FILE = "model.onnx"
OPENVINO_FILE = "model.xml"
Runner = Callable[[dict[str, np.ndarray]], np.ndarray]  # a graph opened on some threads: inputs -> output


def inference_threads(requested: int | None = None) -> int:
    """Threads per forward pass: the requested count, else every core this process may use."""
    if requested:
        return requested
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


class _ExportedBackend:
    """Shared part: tokenizer, padding and normalization around a runtime's `run(inputs)`.

    A runtime is opened with every core for lone texts (latency), and a second time with one core fewer
    for passes that serve several waiting callers: their request threads search and answer while the
    pass runs, and a pass that spins on every core starves them (measured at 32 clients on 2 cores:
    about 20% more requests/s with one encoder thread fewer, benchmarks/serving.md).
    """

    name = "exported"
    pad_multiple = 1  # sequence lengths are rounded up to this (masked padding: same embeddings)

    def __init__(self, folder: Path, precision: str, threads: int | None = None) -> None:
        self.folder = folder
        self.precision = precision
        self.threads = inference_threads(threads)
        self.settings = read_tokenizer_settings(folder)
        self._tokenize = FastTokenizer(self.settings)
        self._runners: dict[int, Runner] = {}
        self.dimension = int(self.forward(self.tokenize(["dimension probe"])).shape[1])

    def tokenize(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Token ids per text."""
        return self._tokenize(texts)

    def set_max_seq_length(self, max_seq_length: int) -> None:
        """Truncate to another length than the export recorded (PAIRANK_MAX_SEQ_LENGTH)."""
        self.settings = replace(self.settings, max_seq_length=max_seq_length)
        self._tokenize = FastTokenizer(self.settings)

    def forward(self, token_ids: Sequence[np.ndarray], spare_core: bool = False) -> np.ndarray:
        """Normalized embeddings of one padded batch; `spare_core`: run on one core fewer."""
        threads = max(1, self.threads - 1) if spare_core else self.threads
        runner = self._runners.get(threads)
        if runner is None:  # opened on first use: a process that never shares cores opens one
            runner = self._runners[threads] = self._open(threads)
        inputs = pad_batch(
            token_ids, self.settings.pad_token_id, self.settings.input_names, self.pad_multiple
        )
        return normalize(runner(inputs))

    def _open(self, threads: int) -> Runner:
        """A function that runs the graph on `threads` threads."""
        raise NotImplementedError


class OnnxBackend(_ExportedBackend):
    """ONNX Runtime on the CPU (a dynamically quantized graph for int8)."""

    name = "onnx"

    def _open(self, threads: int) -> Runner:
        return open_onnx(self.folder, threads)


class OpenVinoBackend(_ExportedBackend):
    """OpenVINO on the CPU (a statically quantized graph for int8), tuned for latency.

    OpenVINO compiles kernels for each input shape it meets and keeps them (5,000 shapes by default):
    with the micro-batcher's many (texts, longest) shapes a server grew to 4-6 GiB. Lengths rounded up
    to 16 make shapes repeat, so a cache of 512 serves them: bounded memory, and faster than the
    default cache in the same run (benchmarks/openvino_shapes.md).
    """

    name = "openvino"
    pad_multiple = 16
    shape_cache = 512

    def _open(self, threads: int) -> Runner:
        return open_openvino(self.folder, threads, self.shape_cache)


def open_onnx(folder: Path, threads: int) -> Runner:
    """A function running `folder`'s ONNX graph on `threads` threads (its first output)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    session = ort.InferenceSession(str(folder / ONNX_FILE), options, providers=["CPUExecutionProvider"])
    return lambda inputs: np.asarray(session.run(None, inputs)[0])


def open_openvino(folder: Path, threads: int, shape_cache: int = OpenVinoBackend.shape_cache) -> Runner:
    """A function running `folder`'s OpenVINO model on `threads` threads, tuned for latency, keeping the
    kernels of at most `shape_cache` input shapes (see OpenVinoBackend)."""
    import openvino as ov

    config: dict[str, Any] = {
        "PERFORMANCE_HINT": "LATENCY",
        "INFERENCE_NUM_THREADS": threads,
        "CPU_RUNTIME_CACHE_CAPACITY": shape_cache,
    }
    compiled = ov.Core().compile_model(ov.Core().read_model(str(folder / OPENVINO_FILE)), "CPU", config)
    # One infer request reused for every batch: the micro-batcher runs one forward pass at a time.
    request, output = compiled.create_infer_request(), compiled.output(0)
    return lambda inputs: np.array(request.infer(inputs)[output], copy=True)


EXPORTED_BACKENDS: dict[str, type[_ExportedBackend]] = {"onnx": OnnxBackend, "openvino": OpenVinoBackend}
