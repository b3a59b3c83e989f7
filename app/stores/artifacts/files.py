"""A model folder's files as a manifest, its sha256, and checking a local copy against it."""

from __future__ import annotations

import fcntl
import hashlib
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from app.db.artifacts.model_files import FileEntry
from app.db.blob_store import file_sha256


def scan_folder(folder: Path) -> list[FileEntry]:
    """Every file under a model folder (links followed, hidden names skipped), sorted by relative path."""
    entries = []
    for root, directories, names in os.walk(folder, followlinks=True):
        directories[:] = sorted(d for d in directories if not d.startswith("."))
        for name in names:
            path = Path(root) / name
            if name.startswith(".") or not path.is_file():
                continue
            sha256, size = file_sha256(path)
            entries.append(FileEntry(path.relative_to(folder).as_posix(), sha256, size))
    if not entries:
        raise FileNotFoundError(f"model folder {folder} holds no files")
    return sorted(entries, key=lambda entry: entry.path)


def manifest_sha256(entries: Sequence[FileEntry]) -> str:
    """The sha256 naming a manifest: one `path<TAB>sha256<TAB>size` line per file, sorted by path."""
    digest = hashlib.sha256()
    for entry in sorted(entries, key=lambda e: e.path):
        digest.update(f"{entry.path}\t{entry.sha256}\t{entry.size}\n".encode())
    return digest.hexdigest()


def mismatches(folder: Path, entries: Sequence[FileEntry]) -> list[FileEntry]:
    """The manifest's files that are missing from `folder` or whose content does not hash to the row."""
    bad = []
    for entry in entries:
        path = folder / entry.path
        if not path.is_file() or path.stat().st_size != entry.size or file_sha256(path)[0] != entry.sha256:
            bad.append(entry)
    return bad


@contextmanager
def folder_lock(cache_root: Path, name: str) -> Iterator[None]:
    """An exclusive lock on one cached folder, shared by every process of this machine."""
    cache_root.mkdir(parents=True, exist_ok=True)
    with open(cache_root / f".{name}.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
