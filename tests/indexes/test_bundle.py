"""Index bundles: round trip, manifest matching, atomic replacement and damaged bundles."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import numpy as np
import pytest

from indexes.bundle import ModelIdentity, bundle_dir, load_bundle, read_manifest, save_bundle
from indexes.vector_index import VectorIndex

MODEL = ModelIdentity("tiny", "tiny@abc", "abc" * 10, 8)


def _index(factory: str = "Flat") -> VectorIndex:
    vectors = np.random.default_rng(0).normal(size=(30, 8)).astype(np.float32)
    index = VectorIndex(8, factory)
    index.upsert([f"d{i}" for i in range(30)], [f"h{i}" for i in range(30)], vectors)
    index.remove(["d7"])
    return index


@pytest.mark.parametrize("factory", ["Flat", "HNSW8"])
def test_round_trip_keeps_ids_hashes_and_results(tmp_path: Path, factory: str) -> None:
    index = _index(factory)
    folder = bundle_dir(tmp_path, "claims", MODEL)
    save_bundle(index, folder, "claims", MODEL)
    loaded = load_bundle(folder, MODEL)
    assert loaded is not None and loaded.hashes() == index.hashes()
    queries = np.random.default_rng(1).normal(size=(5, 8)).astype(np.float32)
    assert loaded.search(queries, 7) == index.search(queries, 7)
    loaded.upsert(["new"], ["hn"], queries[:1])  # ids keep counting after a reload
    assert loaded.search(queries[:1], 1)[0][0][0] == "new"


def test_manifest_contents(tmp_path: Path) -> None:
    folder = bundle_dir(tmp_path, "claims", MODEL)
    save_bundle(_index(), folder, "claims", MODEL)
    manifest = read_manifest(folder)
    assert manifest is not None
    assert {k: manifest[k] for k in ("model_id", "weights_sha256", "dimension", "metric", "factory")} == {
        "model_id": "tiny",
        "weights_sha256": "abc" * 10,
        "dimension": 8,
        "metric": "inner_product",
        "factory": "Flat",
    }
    assert manifest["document_count"] == 29 and manifest["created_at"]


def test_other_model_does_not_load(tmp_path: Path) -> None:
    folder = bundle_dir(tmp_path, "claims", MODEL)
    save_bundle(_index(), folder, "claims", MODEL)
    other = ModelIdentity("tiny", "tiny@abd", "abd" * 10, 8)
    assert load_bundle(folder, other) is None


def test_new_generation_replaces_old_and_leftover_temp_is_ignored(tmp_path: Path) -> None:
    folder = bundle_dir(tmp_path, "claims", MODEL)
    index = _index()
    first = save_bundle(index, folder, "claims", MODEL)
    # A crash mid-write leaves a temporary folder behind; it must never be read.
    (folder / ".tmp-gen-crashed").mkdir()
    (folder / ".tmp-gen-crashed" / "manifest.json").write_text("{broken")
    # Another worker's fresh generation, not yet pointed at: it must survive a save made meanwhile.
    (folder / "gen-other-worker").mkdir()
    an_hour_ago = time.time() - 3600
    for old in (first, folder / ".tmp-gen-crashed"):
        os.utime(old, (an_hour_ago, an_hour_ago))
    index.remove(["d1"])
    second = save_bundle(index, folder, "claims", MODEL)
    assert sorted(p.name for p in folder.iterdir() if p.is_dir()) == sorted([second.name, "gen-other-worker"])
    loaded = load_bundle(folder, MODEL)
    assert loaded is not None and "d1" not in loaded and len(loaded) == 28


def test_damaged_bundle_is_ignored(tmp_path: Path) -> None:
    folder = bundle_dir(tmp_path, "claims", MODEL)
    generation = save_bundle(_index(), folder, "claims", MODEL)
    (generation / "ids.json").write_text(json.dumps({"int_ids": [1]}))
    assert load_bundle(folder, MODEL) is None
    (folder / "CURRENT").write_text("gen-missing")
    assert load_bundle(folder, MODEL) is None
