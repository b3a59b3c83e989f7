"""One contract for both artifact stores: the database store (SQLite, PostgreSQL) and the local one.

A model's files come back byte for byte, are never handed out unless every file hashes to its manifest
row, are invisible until the registering transaction commits, and removing a model frees only what no
other model shares. Where the stores differ by design it is said: the database store fetches a damaged or
missing copy again, the local store (one copy) refuses and names the file.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from app.db.artifacts.model_files import ModelFile
from app.db.blob_store import CHUNK_BYTES, Blob, BlobChunk
from app.db.engine import transaction
from app.db.repositories.model_versions import ModelRepository
from app.stores.artifacts.database import DatabaseArtifactStore
from app.stores.artifacts.local import LocalArtifactStore
from app.stores.artifacts.port import ArtifactRef, ArtifactStore, ArtifactUnavailableError

SHARED_TOKENIZER = b'{"vocab": ["[PAD]", "moon", "landing"]}' * 100


def model_folder(root: Path, seed: int) -> Path:
    """A model-shaped folder: nested files, weights over several 1 MiB chunks, a tokenizer shared by seed."""
    folder = root / f"model-{seed}"
    (folder / "1_Pooling").mkdir(parents=True)
    (folder / "config.json").write_text(f'{{"hidden_size": 32, "seed": {seed}}}')
    (folder / "1_Pooling" / "config.json").write_text('{"pooling_mode_mean_tokens": true}')
    (folder / "tokenizer.json").write_bytes(SHARED_TOKENIZER)
    (folder / "model.safetensors").write_bytes(os.urandom(2 * CHUNK_BYTES + 12345))
    (folder / ".hidden-lock").write_text("not part of the model")
    return folder


def files_of(folder: Path) -> dict[str, bytes]:
    """Relative path -> content of every file the manifest covers (hidden names are not)."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in folder.rglob("*")
        if p.is_file() and not p.name.startswith(".")
    }


@pytest.fixture(params=["database", "local"])
def store_kind(request: pytest.FixtureRequest, database_url: str) -> str:
    """The adapter under test: the database store on every database, the local store on SQLite."""
    if request.param == "local" and not database_url.startswith("sqlite"):
        pytest.skip("the local store is SQLite's (one machine); the database store is PostgreSQL's")
    return str(request.param)


@pytest.fixture
def store(store_kind: str, sessions: sessionmaker[Session], tmp_path: Path) -> ArtifactStore:
    """A fresh store whose cache (database) or owned folders (local) are in this test's data dir."""
    if store_kind == "database":
        return DatabaseArtifactStore(sessions, tmp_path / "data" / "models" / "cache")
    return LocalArtifactStore(sessions, tmp_path / "data" / "models")


Save = Callable[[str, Path], ArtifactRef]


@pytest.fixture
def save(store: ArtifactStore, sessions: sessionmaker[Session]) -> Save:
    """Register a version (its registry row) and store its folder in one transaction, as the registry does."""

    def saved(version: str, folder: Path) -> ArtifactRef:
        with transaction(sessions) as session:
            ModelRepository(session).add(
                version=version, model_id=version, path=str(folder), source="trained", weights_sha256=None
            )
            stored = store.save(session, version, folder)
        assert stored.store == store.name and stored.files == 4
        assert stored.bytes == sum(len(content) for content in files_of(folder).values())
        return ArtifactRef(version, stored.sha256, str(folder))

    return saved


def counts(sessions: sessionmaker[Session]) -> tuple[int, int, int]:
    """(manifest rows, blobs, chunks) in the database."""
    with sessions() as session:
        return (
            int(session.scalar(select(func.count()).select_from(ModelFile)) or 0),
            int(session.scalar(select(func.count()).select_from(Blob)) or 0),
            int(session.scalar(select(func.count()).select_from(BlobChunk)) or 0),
        )


def test_a_saved_model_comes_back_file_for_file(
    store: ArtifactStore, save: Save, sessions: sessionmaker[Session], tmp_path: Path
) -> None:
    origin = model_folder(tmp_path / "registered-here", 1)
    expected = files_of(origin)
    ref = save("m@1", origin)
    assert files_of(store.folder(ref)) == expected
    with sessions() as session:
        assert store.stored_bytes(session) == sum(len(content) for content in expected.values())
    if isinstance(store, DatabaseArtifactStore):
        # Loaded from the database even where it was registered; the data dir holds only a cache.
        fetched = store.folder(ref)
        assert fetched.parent == store.cache_root / ref.sha256 and files_of(fetched) == expected
        assert not list(store.cache_root.glob(".tmp-*"))  # fetched beside its place, then renamed in
        shutil.rmtree(origin)
        shutil.rmtree(fetched.parent)  # another machine: an empty data dir, no registering folder
        assert files_of(store.folder(ref)) == expected
    else:
        # The local store's one copy is the registering folder: without it there is nothing to load.
        shutil.rmtree(origin)
        with pytest.raises(ArtifactUnavailableError, match="missing or does not match its sha256"):
            store.folder(ref)


def test_a_damaged_copy_is_never_handed_out(store: ArtifactStore, save: Save, tmp_path: Path) -> None:
    origin = model_folder(tmp_path / "registered-here", 2)
    expected = files_of(origin)
    ref = save("m@2", origin)
    if isinstance(store, DatabaseArtifactStore):
        copy = store.folder(ref)
        weights = copy / "model.safetensors"
        weights.write_bytes(weights.read_bytes()[:-1] + b"\x00")  # same size, one byte off
        (copy / "1_Pooling" / "config.json").unlink()
        assert files_of(store.folder(ref)) == expected  # detected by sha256 and fetched again
    else:
        weights = origin / "model.safetensors"
        weights.write_bytes(weights.read_bytes()[:-1] + b"\x00")
        with pytest.raises(ArtifactUnavailableError, match="model.safetensors"):
            store.folder(ref)


def test_nothing_is_visible_until_the_registering_transaction_commits(
    store: ArtifactStore, sessions: sessionmaker[Session], tmp_path: Path
) -> None:
    before = counts(sessions)
    with pytest.raises(RuntimeError, match="killed"), transaction(sessions) as session:
        ModelRepository(session).add(
            version="m@3", model_id="m", path="x", source="trained", weights_sha256=None
        )
        store.save(session, "m@3", model_folder(tmp_path, 3))
        raise RuntimeError("killed mid-registration")
    assert counts(sessions) == before
    with sessions() as session:
        assert ModelRepository(session).get("m@3") is None and store.stored_bytes(session) == 0


def test_removing_a_model_frees_only_what_no_other_model_shares(
    store: ArtifactStore, save: Save, sessions: sessionmaker[Session], tmp_path: Path
) -> None:
    first = save("m@4", model_folder(tmp_path, 4))
    second = save("m@5", model_folder(tmp_path, 5))
    second_files = files_of(Path(second.origin))
    with sessions() as session:
        total = store.stored_bytes(session)
    with transaction(sessions) as session:
        freed = store.remove(session, first)
        ModelRepository(session).delete(ModelRepository(session).get("m@4"))  # type: ignore[arg-type]
    store.evict(first)
    with sessions() as session:
        left = store.stored_bytes(session)
    if isinstance(store, DatabaseArtifactStore):
        # What both models hold (tokenizer, pooling config) is stored once and stays; the rest goes.
        only_first = set(files_of(Path(first.origin)).values()) - set(second_files.values())
        assert freed == total - left == sum(len(content) for content in only_first)
    assert files_of(store.folder(second)) == second_files
    with transaction(sessions) as session:
        store.remove(session, second)
        ModelRepository(session).delete(ModelRepository(session).get("m@5"))  # type: ignore[arg-type]
    with sessions() as session:
        assert store.stored_bytes(session) == 0
    assert counts(sessions) == (0, 0, 0)
