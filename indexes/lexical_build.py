"""A first BM25 build that never holds the whole corpus in Python: what it has read goes to a mapped
segment every so many documents, the segments merged once at the end (issue 41: a fresh replica
rebuilding ten million documents)."""

from __future__ import annotations

import contextlib
import fcntl
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO

from indexes.analysis import Analyser
from indexes.lexical import FORMAT_VERSION, LexicalIndex
from indexes.lexical_base import LexicalBase
from indexes.lexical_segments import merge_segments
from indexes.lexical_write import publish_generation
from indexes.memory import release_freed_memory

# Python postings cost about 1.2 GiB per million documents, so a build spills every 250k documents: to a
# segment of its own while ids ascend, all merged once at the end (indexes/lexical_segments.py; spilling
# into one growing generation re-merged every posting at each spill: quadratic, 8.5 min at 10M).
# benchmarks/lexical_build.md at 3M documents: held, the build and its save peak 4.5 GiB above the start;
# spilled every 250k, 1.1 GiB for 5% more time.
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
    finish: Callable[[LexicalIndex], object] | None = None,
) -> LexicalIndex:
    """An index of (id, text, own language) batches; with `scratch`, spilled to a generation every
    `spill_every` documents.

    While the batches' ids ascend (a build reads the database's pages in id order) each spill is a
    segment of its own, merged with the others once at the end (indexes/lexical_segments.py); a batch
    with an id not above every spilled one merges the segments then and goes on spilling into that
    one growing generation. The generations go to a folder of `scratch` private to this build (never
    loaded as a snapshot: the build is not complete), locked while the build runs and removed at the
    end; the last one stays mapped (an unlinked file lives while mapped) until the caller saves the
    index elsewhere. `finish` gets the index before that folder goes: a save there links the merged
    generation's files (indexes/lexical_write.py) instead of writing every posting once more."""
    index = LexicalIndex(analyser)
    segments: list[Path] = []  # the spilled segments' generations (empty once merged into one)
    highest = spilled_above = -1  # the highest id applied; the highest in a spilled segment
    merged = False  # segments given up: spills merge into the one generation
    with contextlib.ExitStack() as stack:
        folder: Path | None = None
        for given in batches:
            batch = list(given)  # read three times below: a one-pass iterator would be read once
            ids = [doc_id for doc_id, _, _ in batch]
            if segments and ids and min(ids) <= spilled_above:
                index, segments, merged = _merge_spilled(folder, segments, index), [], True
            highest = max([highest, *ids])
            languages = {doc_id: language for doc_id, _, language in batch}
            index.apply([(doc_id, text) for doc_id, text, _ in batch], languages=languages)
            if scratch is not None and index.delta_documents() >= spill_every:
                folder = folder or stack.enter_context(_build_folder(scratch))
                if merged:
                    index.save(folder / "merged")
                    continue
                segments.append(index.save(folder / f"segment-{len(segments):05d}"))
                spilled_above = highest
                index = LexicalIndex(analyser)
        if segments:
            index = _merge_spilled(folder, segments, index)
        if finish is not None:
            finish(index)
    return index


def _merge_spilled(folder: Path | None, segments: list[Path], current: LexicalIndex) -> LexicalIndex:
    """The segments and `current`'s documents as one generation in `folder`/merged, mapped."""
    if folder is None:
        raise RuntimeError("no segment was spilled: nothing to merge")
    if current.delta_documents():
        segments = [*segments, current.save(folder / f"segment-{len(segments):05d}")]
    target = folder / "merged"
    staged = merge_segments(target, [LexicalBase.open(generation) for generation in segments])
    manifest = {"format_version": FORMAT_VERSION, "hwm": 0, "analyser": current.analyser.describe()}
    publish_generation(target, staged, manifest)
    for generation in segments:  # their pages stay mapped by nothing: the merged generation holds all
        shutil.rmtree(generation.parent, ignore_errors=True)
    merged = LexicalIndex.load(target, current.analyser)
    if merged is None:
        raise RuntimeError(f"the merged BM25 generation in {target} does not load")
    release_freed_memory()  # the merge's row maps (8 bytes a document each) are gone: hand the heap back
    return merged


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
