"""Index bundles on disk: one folder per corpus and model, replaced atomically.

Layout of `<root>/<corpus>/<model slug>/`:
    CURRENT                 name of the live generation (replaced with os.replace, so always whole)
    gen-<time>-<rand>/      index.faiss, vectors.npy, ids.json, manifest.json
A generation is written under a temporary name, fsynced and renamed into place before CURRENT moves
to it, so a crash at any point leaves the previous generation live and never a half-written one.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import faiss
import numpy as np

from indexes.vector_index import METRIC, VectorIndex

FORMAT_VERSION = 1
_CURRENT = "CURRENT"
_STALE_AFTER_SECONDS = 60.0
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ModelIdentity:
    """What an index bundle must match to be reused: the model's id, weights hash and dimension."""

    model_id: str
    model_version: str
    weights_sha256: str | None
    dimension: int


def slugify(value: str) -> str:
    """A file-system-safe folder name for a corpus or model version."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", value).strip("._") or "_"


def bundle_dir(root: Path, corpus: str, model: ModelIdentity) -> Path:
    """The folder of the bundle for this corpus and model."""
    return root / slugify(corpus) / slugify(model.model_version)


def _fsync_file(path: Path) -> None:
    with path.open("rb") as handle:
        os.fsync(handle.fileno())


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def save_bundle(index: VectorIndex, folder: Path, corpus: str, model: ModelIdentity) -> Path:
    """Write the index as a new generation and make it current; returns the generation folder."""
    faiss_index, int_ids, doc_ids, hashes, vectors, dead, next_id = index.snapshot()
    folder.mkdir(parents=True, exist_ok=True)
    name = f"gen-{datetime.now(UTC).strftime('%Y%m%dT%H%M%S%f')}-{uuid.uuid4().hex[:8]}"
    tmp = folder / f".tmp-{name}"
    tmp.mkdir()
    faiss.write_index(faiss_index, str(tmp / "index.faiss"))
    np.save(tmp / "vectors.npy", vectors)
    ids = {"int_ids": int_ids, "doc_ids": doc_ids, "text_sha256": hashes, "dead": dead, "next_id": next_id}
    (tmp / "ids.json").write_text(json.dumps(ids))
    manifest = {
        "format_version": FORMAT_VERSION,
        "corpus": corpus,
        "model_id": model.model_id,
        "model_version": model.model_version,
        "weights_sha256": model.weights_sha256,
        "dimension": index.dimension,
        "metric": METRIC,
        "normalized": True,
        "factory": index.factory,
        "document_count": len(doc_ids),
        "faiss_version": faiss.__version__,
        "created_at": datetime.now(UTC).isoformat(),
    }
    (tmp / "manifest.json").write_text(json.dumps(manifest, indent=2))
    for child in tmp.iterdir():
        _fsync_file(child)
    _fsync_dir(tmp)
    generation = folder / name
    os.replace(tmp, generation)
    pointer_tmp = folder / f".{_CURRENT}.{uuid.uuid4().hex[:8]}"
    pointer_tmp.write_text(name)
    _fsync_file(pointer_tmp)
    os.replace(pointer_tmp, folder / _CURRENT)
    _fsync_dir(folder)
    _remove_stale_generations(folder, keep=name)
    return generation


def _remove_stale_generations(folder: Path, keep: str) -> None:
    # Several workers may save the same bundle: a generation another one has just written (and is about to
    # point CURRENT at) must survive, so only generations untouched for a while are removed.
    horizon = time.time() - _STALE_AFTER_SECONDS
    for child in folder.iterdir():
        if child.is_dir() and child.name != keep and child.stat().st_mtime < horizon:
            shutil.rmtree(child, ignore_errors=True)


def read_manifest(folder: Path) -> dict[str, Any] | None:
    """The manifest of the current generation, or None when there is none."""
    pointer = folder / _CURRENT
    if not pointer.is_file():
        return None
    manifest_path = folder / pointer.read_text().strip() / "manifest.json"
    if not manifest_path.is_file():
        return None
    data = json.loads(manifest_path.read_text())
    return data if isinstance(data, dict) else None


def manifest_matches(manifest: dict[str, Any], model: ModelIdentity) -> bool:
    """True when a bundle was built by exactly this model (same id, weights and dimension)."""
    return (
        manifest.get("format_version") == FORMAT_VERSION
        and manifest.get("model_id") == model.model_id
        and manifest.get("weights_sha256") == model.weights_sha256
        and manifest.get("dimension") == model.dimension
        and manifest.get("metric") == METRIC
    )


def load_bundle(folder: Path, model: ModelIdentity) -> VectorIndex | None:
    """Load the current generation if it was built by this model; None when absent, stale or unreadable."""
    try:
        manifest = read_manifest(folder)
        if manifest is None or not manifest_matches(manifest, model):
            return None
        generation = folder / (folder / _CURRENT).read_text().strip()
        ids = json.loads((generation / "ids.json").read_text())
        vectors = np.load(generation / "vectors.npy")
        faiss_index = faiss.read_index(str(generation / "index.faiss"))
        return VectorIndex.restore(
            dimension=int(manifest["dimension"]),
            factory=str(manifest["factory"]),
            faiss_index=faiss_index,
            int_ids=ids["int_ids"],
            doc_ids=ids["doc_ids"],
            text_hashes=ids["text_sha256"],
            vectors=vectors,
            dead=ids["dead"],
            next_id=ids["next_id"],
        )
    except (OSError, ValueError, KeyError, RuntimeError) as error:
        # A damaged bundle is only a cache of the database: rebuild rather than refuse to start.
        log.warning("ignoring unreadable index bundle %s: %s", folder, error)
        return None


def delete_corpus_bundles(root: Path, corpus: str) -> None:
    """Remove every bundle (all models) of a corpus."""
    shutil.rmtree(root / slugify(corpus), ignore_errors=True)
