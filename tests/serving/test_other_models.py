"""Encoders of non-serving versions for comparisons: loaded once, at most `keep`, the least recently used
closed after it is dropped (a request may still be using it), all closed at shutdown."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from app.core.errors import ConflictError
from app.serving import other_models
from app.serving.encoder import Encoder
from app.serving.other_models import OtherModels
from encoders.loader import EncoderOptions
from pairank.models import ModelSpec, resolve_model
from tests.helpers.tiny_model import build_tiny_model


def test_loaded_once_least_recently_used_dropped(
    tmp_path: Path, tiny_model_dir: Path, export_cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(other_models, "_CLOSE_AFTER_SECONDS", 0.0)
    loads: list[str] = []

    def load(spec: ModelSpec) -> Encoder:
        loads.append(spec.version)
        return Encoder.load(
            spec, EncoderOptions(backend="torch", precision="fp32", cache_root=export_cache_dir)
        )

    models = OtherModels(load, keep=1)
    first = resolve_model(str(tiny_model_dir))
    second = resolve_model(str(build_tiny_model(tmp_path / "second", seed=3)))
    encoder = models.encoder(first.version, lambda: first)
    assert models.encoder(first.version, lambda: pytest.fail("resolved again")) is encoder
    assert loads == [first.version]  # loaded (and its files verified) once
    assert encoder.encode(["a claim"]).shape[0] == 1
    with pytest.raises(ConflictError, match="are now"):
        models.encoder("renamed@000000000000", lambda: second)  # the weights there are another version
    kept = models.encoder(second.version, lambda: second)
    assert models.loaded() == [second.version] and loads == [first.version, second.version]
    deadline = time.monotonic() + 10
    while not encoder.batcher._closed and time.monotonic() < deadline:  # the timer closes it
        time.sleep(0.01)
    with pytest.raises(RuntimeError, match="closed"):
        encoder.encode(["a claim"])
    assert kept.encode(["a claim"]).shape[0] == 1
    models.close()
    assert models.loaded() == []
