"""A first BM25 build that never holds the whole corpus in Python: what it has read goes to a mapped
generation every so many documents (issue 41: a fresh replica rebuilding ten million documents)."""

from __future__ import annotations

import contextlib
import fcntl
import shutil
import tempfile
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO

from indexes.analysis import Analyser
from indexes.lexical import LexicalIndex

# Python postings cost about 1.2 GiB per million documents; each spill re-merges the growing base (read
# mapped, written streamed). benchmarks/lexical_build.md at 3M documents: held, the build and its save
# peak 4.5 GiB above the start; spilled every 250k, 1.1 GiB for 5% more time (an earlier run: every 1M,
# 2.1 GiB, when a spill's merge still held the new arrays in memory).
SPILL_EVERY = 250_000
BUILD_PREFIX = ".lexical-build-"
_LOCK = ".lock"
_UNLOCKED_GRACE_SECONDS = 600.0  # a folder without its lock yet: just created, or left by a crash


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
    build is not complete), locked while the build runs and removed at the end; its last generation
    stays mapped (an unlinked file lives while mapped) until the caller saves the index elsewhere."""
    index = LexicalIndex(analyser)
    with contextlib.ExitStack() as stack:
        folder: Path | None = None
        for batch in batches:
            languages = {doc_id: language for doc_id, _, language in batch}
            index.apply([(doc_id, text) for doc_id, text, _ in batch], languages=languages)
            if scratch is not None and index.delta_documents() >= spill_every:
                folder = folder or stack.enter_context(_build_folder(scratch))
                index.save(folder)
    return index


def sweep_builds(scratch: Path) -> int:
    """Remove the folders of builds that are over (their process died mid-build); returns how many."""
    removed = 0
    for folder in scratch.glob(f"{BUILD_PREFIX}*"):
        lock = folder / _LOCK
        if not lock.exists():
            with contextlib.suppress(OSError):
                if time.time() - folder.stat().st_mtime > _UNLOCKED_GRACE_SECONDS:
                    shutil.rmtree(folder, ignore_errors=True)
                    removed += 1
            continue
        try:
            with open(lock, "a") as handle:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)  # held by a live build: it raises
                shutil.rmtree(folder, ignore_errors=True)
                removed += 1
        except (BlockingIOError, FileNotFoundError):
            continue
    return removed


@contextlib.contextmanager
def _build_folder(scratch: Path) -> Iterator[Path]:
    """A new folder for one build's generations, locked (flock: released by the kernel if the process
    dies, so a sweep can tell a live build from a dead one on any host sharing the disk) and removed."""
    scratch.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix=BUILD_PREFIX, dir=scratch))
    handle: IO[str] = open(folder / _LOCK, "w")  # noqa: SIM115 - held for the whole build
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        handle.close()
