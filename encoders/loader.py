"""Pick and load an encoder variant: `auto` takes the fastest one that passes the quality gate.

Exports are cached under `<cache root>/<model version>/<backend>-<precision>/`, keyed by the weights'
sha256 in each folder's manifest, written to a temporary folder and renamed into place under a file
lock, so several workers starting together export once and every later start reuses the result (a
variant that failed the gate is remembered too, and not exported again).
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import shutil
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from encoders.backend import EncoderBackend
from encoders.export import compare, encode_all, write_export
from encoders.exported import EXPORTED_BACKENDS
from encoders.probe import probe_sentences
from pairank.models import ModelSpec, load_sentence_transformer, pick_device

log = logging.getLogger(__name__)

BACKENDS = ("auto", "torch", "onnx", "openvino")
PRECISIONS = ("auto", "fp32", "int8", "fp16")
MANIFEST = "manifest.json"
FORMAT_VERSION = 1


class QualityGate(Protocol):
    """A variant's verdict against torch fp32 (embeddings: `export.QualityCheck`; cross-encoders' scores:
    `cross_export.ScoreCheck`)."""

    @property
    def passed(self) -> bool:
        """Whether the variant may serve."""

    def describe(self) -> str:
        """One line for logs and manifests."""

    def as_dict(self) -> dict[str, Any]:
        """The manifest's `quality` record (with `summary`)."""


@dataclass(frozen=True)
class Variant:
    """One way to run a model: a backend and a numeric precision."""

    backend: str
    precision: str

    @property
    def key(self) -> str:
        """Folder name and log label, e.g. `openvino-int8`."""
        return f"{self.backend}-{self.precision}"


TORCH_FP32 = Variant("torch", "fp32")
# Fastest first, as measured by benchmarks/encode/encode.py on this project's 2-core CPU.
AUTO_CPU = (Variant("openvino", "int8"), Variant("onnx", "int8"), TORCH_FP32)
AUTO_CUDA = (Variant("torch", "fp16"), TORCH_FP32)


def candidate_variants(backend: str, precision: str, device: str) -> list[Variant]:
    """The variants to try in order, ending with torch fp32 (ValueError for impossible combinations)."""
    if backend not in BACKENDS:
        raise ValueError(f"encoder backend must be one of {', '.join(BACKENDS)}, not {backend!r}")
    if precision not in PRECISIONS:
        raise ValueError(f"encoder precision must be one of {', '.join(PRECISIONS)}, not {precision!r}")
    cuda = device.startswith("cuda")
    if backend == "auto":
        chosen = [v for v in (AUTO_CUDA if cuda else AUTO_CPU) if precision in ("auto", v.precision)]
        if not chosen:
            chosen = [Variant("onnx" if precision == "int8" else "torch", precision)]
    elif backend == "torch":
        chosen = [Variant("torch", ("fp16" if cuda else "fp32") if precision == "auto" else precision)]
    else:
        chosen = [Variant(backend, "int8")] if precision == "auto" else [Variant(backend, precision)]
    for variant in chosen:
        if variant.backend == "torch" and variant.precision == "int8":
            raise ValueError("int8 needs the onnx or openvino backend")
        if variant.precision == "fp16" and (variant.backend != "torch" or not cuda):
            raise ValueError("fp16 runs only with the torch backend on a CUDA device")
    return chosen + ([TORCH_FP32] if TORCH_FP32 not in chosen else [])


def version_folder(cache_root: Path, version: str) -> Path:
    """Where a model version's exports live (one subfolder per variant)."""
    return cache_root / version.replace("/", "__").replace(os.sep, "__")


def variant_folder(cache_root: Path, spec: ModelSpec, variant: Variant) -> Path:
    """Where a model version's export of one variant lives."""
    return version_folder(cache_root, spec.version) / variant.key


def read_manifest(folder: Path, spec: ModelSpec) -> dict[str, Any] | None:
    """The export's manifest when it belongs to exactly these weights; None otherwise."""
    try:
        data = json.loads((folder / MANIFEST).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format_version") != FORMAT_VERSION:
        return None
    return data if data.get("weights_sha256") == spec.weights_sha256 else None


@contextmanager
def _export_lock(folder: Path) -> Iterator[None]:
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / f".{folder.name}.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@dataclass
class LoadedEncoder:
    """The backend that will serve, and what happened to the variants tried before it."""

    backend: EncoderBackend
    variant: Variant
    quality: dict[str, Any] | None
    attempts: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class EncoderOptions:
    """How to run a model: runtime and precision (`auto`: the best that passes the gate), the export
    cache folder, the torch device, a token limit other than the model's, threads per forward pass of an
    exported runtime (torch's are process-wide: the entry point sets them)."""

    backend: str = "auto"
    precision: str = "auto"
    cache_root: Path | None = None
    device: str | None = None
    max_seq_length: int | None = None
    threads: int | None = None


class EncoderLoader:
    """Loads one model version, exporting and gating variants on first use."""

    def __init__(self, spec: ModelSpec, options: EncoderOptions | None = None) -> None:
        options = options or EncoderOptions()
        self.spec = spec
        self.options = options
        self.threads = options.threads
        self.cache_root = options.cache_root
        self.device = pick_device(options.device)
        self.max_seq_length = options.max_seq_length
        self._reference: Any = None
        self._reference_vectors: np.ndarray | None = None

    def reference(self) -> Any:
        """The torch fp32 backend (loaded on first need: a cached export never loads torch weights)."""
        if self._reference is None:
            from encoders.torch_backend import TorchBackend

            model = load_sentence_transformer(self.spec, device=self.device)
            self._reference = TorchBackend(model, "fp32", self.max_seq_length)
        return self._reference

    def load(self) -> LoadedEncoder:
        """The first variant, in order, that exports, passes the gate and loads."""
        backend, precision = self.options.backend, self.options.precision
        attempts: list[dict[str, Any]] = []
        for variant in candidate_variants(backend, precision, self.device):
            if variant.backend == "torch":
                loaded = self._torch(variant)
                return LoadedEncoder(loaded, variant, None, attempts)
            try:
                folder, manifest = self.exported(variant)
                quality = manifest["quality"]
                if not manifest["passed"]:
                    raise RuntimeError(f"quality gate: {quality['summary']}")
                loaded_backend = self._open_exported(variant, folder)
                log.info("encoder %s %s: %s", self.spec.version, variant.key, quality["summary"])
                return LoadedEncoder(loaded_backend, variant, quality, attempts)
            except Exception as error:  # noqa: BLE001 - any failure falls back to the next variant
                log.warning("encoder %s: not using %s: %s", self.spec.version, variant.key, error)
                attempts.append({"variant": variant.key, "error": str(error)})
        raise AssertionError("torch fp32 is always the last candidate")  # pragma: no cover

    def _open_exported(self, variant: Variant, folder: Path) -> EncoderBackend:
        """An export folder's runtime, serving."""
        backend = EXPORTED_BACKENDS[variant.backend](folder, variant.precision, self.threads)
        if self.max_seq_length:
            backend.set_max_seq_length(self.max_seq_length)
        return backend

    def _torch(self, variant: Variant) -> EncoderBackend:
        if variant.precision == "fp32":
            return self.reference()
        from encoders.torch_backend import TorchBackend

        model = load_sentence_transformer(self.spec, device=self.device)
        return TorchBackend(model, variant.precision, self.max_seq_length)

    def _root(self) -> Path:
        if self.cache_root is None:
            raise RuntimeError("no export cache folder configured")
        if self.spec.weights_sha256 is None:
            raise RuntimeError("a hub model has no local weights hash to key its exports by")
        return self.cache_root

    def exported(self, variant: Variant) -> tuple[Path, dict[str, Any]]:
        """The variant's export folder and manifest, exporting (and gating) it on first use."""
        folder = variant_folder(self._root(), self.spec, variant)
        manifest = read_manifest(folder, self.spec)
        if manifest is not None:
            return folder, manifest
        with _export_lock(folder):
            manifest = read_manifest(folder, self.spec)  # another worker may have exported meanwhile
            if manifest is None:
                manifest = self._export(variant, folder)
        return folder, manifest

    def _export(self, variant: Variant, folder: Path) -> dict[str, Any]:
        tmp = folder.parent / f".tmp-{folder.name}-{uuid.uuid4().hex[:8]}"
        started = time.monotonic()
        log.info("exporting %s as %s (first use of this model version; cached afterwards)", self.spec.version,
                 variant.key)  # fmt: skip
        try:
            check = self._write_and_check(variant, tmp)
            manifest = self._manifest(variant, check, time.monotonic() - started)
            (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2))
            shutil.rmtree(folder, ignore_errors=True)  # an export of other weights, or a broken one
            os.replace(tmp, folder)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        log.info("export %s %s: %s", self.spec.version, variant.key, check.describe())
        return manifest

    def _write_and_check(self, variant: Variant, folder: Path) -> QualityGate:
        """Export the variant into `folder` and gate it against torch fp32 on the probe sentences."""
        probe = probe_sentences()
        reference = self.reference()
        tokens = reference.tokenize(probe)
        if self._reference_vectors is None:
            self._reference_vectors = encode_all(reference, tokens)
        write_export(reference, variant.backend, variant.precision, folder, probe)
        candidate = EXPORTED_BACKENDS[variant.backend](folder, variant.precision, self.threads)
        return compare(self._reference_vectors, encode_all(candidate, tokens))

    def _manifest(self, variant: Variant, check: QualityGate, seconds: float) -> dict[str, Any]:
        return {
            "format_version": FORMAT_VERSION,
            "model_id": self.spec.model_id,
            "model_version": self.spec.version,
            "weights_sha256": self.spec.weights_sha256,
            "backend": variant.backend,
            "precision": variant.precision,
            "passed": check.passed,
            "quality": check.as_dict(),
            "export_seconds": round(seconds, 2),
            "created_at": datetime.now(UTC).isoformat(),
        }


def load_encoder_backend(spec: ModelSpec, options: EncoderOptions | None = None) -> LoadedEncoder:
    """Load a model version with the requested (or the best passing) backend and precision."""
    return EncoderLoader(spec, options).load()
