"""A first BM25 build that never holds the whole corpus in Python: what it has read goes to a mapped
generation every so many documents (issue 41: a fresh replica rebuilding ten million documents)."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

from indexes.analysis import Analyser
from indexes.lexical import LexicalIndex

# Python postings cost about 1.2 GiB per million documents; each spill re-merges the growing base
# (seconds per million documents): benchmarks/lexical_build.md measures both.
SPILL_EVERY = 1_000_000
BUILD_PREFIX = ".lexical-build-"


def build_index(
    batches: Iterable[Sequence[tuple[int, str, str | None]]],
    analyser: Analyser,
    *,
    scratch: Path | None = None,
    spill_every: int = SPILL_EVERY,
) -> LexicalIndex:
    """An index of (id, text, own language) batches; with `scratch`, spilled to a generation every
    `spill_every` documents.

    The generations go to a folder of `scratch` private to this build (never loaded as a snapshot: the
    build is not complete) that is removed at the end; its last generation stays mapped (an unlinked
    file lives while mapped) until the caller's first save replaces it."""
    index = LexicalIndex(analyser)
    folder = _build_folder(scratch) if scratch is not None else None
    try:
        for batch in batches:
            languages = {doc_id: language for doc_id, _, language in batch}
            index.apply([(doc_id, text) for doc_id, text, _ in batch], languages=languages)
            if folder is not None and index.delta_documents() >= spill_every:
                index.save(folder)
    finally:
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
    return index


def _build_folder(scratch: Path) -> Path:
    """A new private folder for a build's generations; those of builds whose process is gone are removed."""
    scratch.mkdir(parents=True, exist_ok=True)
    for stale in scratch.glob(f"{BUILD_PREFIX}*"):
        pid = stale.name[len(BUILD_PREFIX) :].split("-", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(stale, ignore_errors=True)
    return Path(tempfile.mkdtemp(prefix=f"{BUILD_PREFIX}{os.getpid()}-", dir=scratch))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True
