"""The model registry on machines that share only the database (the database artifact store, on every
database): a configured folder another machine registered, models registered before their files were
stored (an upgrade), and a configured folder no machine has."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from app.core.errors import ConfigurationError
from app.db.engine import transaction
from app.db.repositories.model_versions import ModelRepository
from app.serving.runtime import Runtime
from pairank.models import resolve_model
from tests.helpers.runtime import RuntimeFactory, serve
from tests.helpers.tiny_model import build_tiny_model

TEXTS = ["was the moon landing staged", "bleach does not cure covid"]


def machine(make_runtime: RuntimeFactory, root: Path, model: Path) -> Runtime:
    """A runtime with its own data dir, keeping models' files in the database; torch loads the fetched
    files themselves (no export cache stands in for them)."""
    return make_runtime(data_dir=root, model_cache_dir=root / "models", model=str(model),
                        artifact_store="database", encoder_backend="torch")  # fmt: skip


def test_a_configured_folder_registered_elsewhere_comes_from_the_database(
    make_runtime: RuntimeFactory, tiny_model_dir: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "operator" / "my-model"
    shutil.copytree(tiny_model_dir, folder)
    version = resolve_model(str(folder)).version
    first = machine(make_runtime, tmp_path / "a", folder)
    serve(first)
    assert first.serving.state().model_version == version
    shutil.rmtree(folder)  # the second machine has no such folder: PAIRANK_MODEL names the registration
    second = machine(make_runtime, tmp_path / "b", folder)
    serve(second)
    assert second.serving.state().model_version == version
    loaded = Path(second.serving.state().encoder.spec.path)
    assert loaded.is_relative_to(tmp_path / "b" / "models" / "cache")
    assert resolve_model(str(loaded)).version == version  # the copy is named like the folder it came from
    np.testing.assert_allclose(
        second.serving.state().encoder.encode(TEXTS), first.serving.state().encoder.encode(TEXTS), atol=1e-6
    )


def test_models_registered_before_their_files_were_stored_are_stored_at_start(
    make_runtime: RuntimeFactory, tiny_model_dir: Path, tmp_path: Path
) -> None:
    first = machine(make_runtime, tmp_path / "a", tiny_model_dir)
    serve(first)
    older = build_tiny_model(tmp_path / "older", seed=9)
    spec = resolve_model(str(older))
    with transaction(first.sessions) as session:  # a registration from before migration 0012
        ModelRepository(session).add(version=spec.version, model_id=spec.model_id, path=str(older),
                                     source="trained", weights_sha256=spec.weights_sha256)  # fmt: skip
    assert first.serving.registry.store_unstored() == [spec.version]
    assert first.serving.registry.store_unstored() == []  # once
    shutil.rmtree(older)
    second = machine(make_runtime, tmp_path / "b", tiny_model_dir)
    fetched = Path(second.serving.registry.spec(spec.version).path)
    assert fetched.is_relative_to(tmp_path / "b") and resolve_model(str(fetched)).version == spec.version


def test_a_configured_folder_no_machine_registered_is_a_clear_error(
    make_runtime: RuntimeFactory, tmp_path: Path
) -> None:
    runtime = machine(make_runtime, tmp_path / "a", tmp_path / "not-here")
    with pytest.raises(ConfigurationError, match="no such folder on this machine"):
        runtime.serving.registry.active_at_start(runtime.settings.model)
    with runtime.sessions() as session:
        assert ModelRepository(session).list() == []  # nothing registered or activated in its name


def test_copies_of_a_model_deleted_through_another_machine_are_pruned(
    make_runtime: RuntimeFactory, tiny_model_dir: Path, tmp_path: Path
) -> None:
    first = machine(make_runtime, tmp_path / "a", tiny_model_dir)
    serve(first)
    other = build_tiny_model(tmp_path / "other", seed=12)
    spec = resolve_model(str(other))
    assert first.serving.registry.register(spec, str(other), "trained")
    copy = Path(first.serving.registry.spec(spec.version).path)
    second = machine(make_runtime, tmp_path / "b", tiny_model_dir)
    deleted = second.serving.registry.delete(spec.version, second.settings.model)
    assert deleted.freed_bytes >= (other / "model.safetensors").stat().st_size
    assert copy.is_dir()  # the first machine's cache is its own
    assert first.serving.registry.prune_cache() == 1 and not copy.parent.exists()
    assert first.serving.registry.prune_cache() == 0
    assert Path(first.serving.state().encoder.spec.path).is_dir()  # the served model's copy stays
