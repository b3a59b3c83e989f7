"""Opening, building, saving and re-analysing a corpus's lexical (BM25) index beside its vector index.

The lexical index does not depend on the model, so one copy per corpus and language lives at
`<index dir>/<corpus>/lexical-<language>/` and serves every model version. Like a vector snapshot it is
a cache of the database: opened from disk and replayed from the change log after its mark, rebuilt from
the documents when it is missing, unreadable, analysed otherwise, or ahead of a restored database.
A corpus whose language changed gets a new index built beside the one serving, swapped in once it has
caught up: queries never wait for it (`follow_language`).
"""

from __future__ import annotations

import fcntl
import logging
import shutil
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from app.db.repositories.corpora import ChangeLog, CorpusRepository
from app.db.repositories.documents import DocumentRepository
from app.db.repositories.languages import DocumentLanguages
from app.stores.port import CorpusVectors
from indexes.analysis import Analyser
from indexes.durable import sweep_staging
from indexes.languages import MULTI
from indexes.lexical import LexicalIndex
from indexes.lexical_build import SPILL_EVERY, build_index, sweep_builds
from indexes.snapshot import corpus_dir

log = logging.getLogger(__name__)
_LOG_PAGE = 5000


def lexical_folder(root: Path, corpus_id: int, language: str = "en") -> Path:
    """Where a corpus's lexical index in a language is saved (a process still serving the previous
    language checkpoints beside the new one, never over it)."""
    return corpus_dir(root, corpus_id) / f"lexical-{language}"


def open_lexical(
    root: Path,
    sessions: sessionmaker[Session],
    corpus_id: int,
    name: str,
    mark: int,
    language: str = "en",
    *,
    spill_every: int = SPILL_EVERY,
) -> LexicalIndex:
    """The saved index when it is usable at `mark` (the caller replays the log after it), else a build,
    saved at once (the next start maps it, whatever the vector store checkpoints)."""
    sweep_builds(corpus_dir(root, corpus_id))  # builds that died here, at start-up or on a rebuild
    analyser = Analyser(language)
    loaded = LexicalIndex.load(lexical_folder(root, corpus_id, language), analyser)
    if loaded is not None and loaded.hwm <= mark:
        return loaded
    if loaded is not None:
        log.warning(
            "lexical index %s at %d is ahead of the database (%d): rebuilding", name, loaded.hwm, mark
        )
    started = time.monotonic()
    index = build_lexical(
        sessions,
        corpus_id,
        analyser,
        mark,
        root=root,
        spill_every=spill_every,
        finish=lambda built: save_lexical(root, corpus_id, built),  # while the build's files can be linked
    )
    log.info("lexical index %s (%s): built from %d documents and saved (%.1f s)", name, language, len(index),
             time.monotonic() - started)  # fmt: skip
    return index


def build_lexical(
    sessions: sessionmaker[Session],
    corpus_id: int,
    analyser: Analyser,
    mark: int,
    *,
    root: Path | None = None,
    spill_every: int = SPILL_EVERY,
    batch_size: int = 2048,
    finish: Callable[[LexicalIndex], object] | None = None,
) -> LexicalIndex:
    """A fresh index of the corpus's documents at `mark` (changes after it are replayed by the caller);
    with `root` (the index dir) spilled to a mapped generation every `spill_every` documents; `finish`
    (a save) gets it while the spilled generation's files are still there to link."""
    scratch = corpus_dir(root, corpus_id) if root is not None else None

    def sealed(index: LexicalIndex) -> None:
        index.hwm = mark
        if finish is not None:
            finish(index)

    return build_index(
        _pages(sessions, corpus_id, batch_size),
        analyser,
        scratch=scratch,
        spill_every=spill_every,
        finish=sealed,
    )


def _pages(
    sessions: sessionmaker[Session], corpus_id: int, batch_size: int
) -> Iterator[list[tuple[int, str, str | None]]]:
    # A short session per page: a build (its spills' merges included) never holds one read transaction
    # open, which would keep SQLite's WAL from being checkpointed and PostgreSQL's vacuum back. Pages read
    # after `mark` are consistent with it: whatever changed since is replayed from the log afterwards.
    after = 0
    while True:
        with sessions() as session:
            corpus = CorpusRepository(session).get_by_id(corpus_id)
            page = DocumentLanguages(session, corpus).page_lexical(after, batch_size) if corpus else []
        if not page:
            return
        after = page[-1][0]
        yield page


def save_lexical(root: Path, corpus_id: int, index: LexicalIndex) -> None:
    """Save the index as the corpus's current one in its language (one writer at a time on this host)."""
    folder = lexical_folder(root, corpus_id, index.analyser.language)
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".lock", "w") as lock_file:
        fcntl.flock(lock_file, fcntl.LOCK_EX)
        sweep_staging(folder)  # the half-written generation of a save that died here (the lock is ours)
        index.save(folder)
    shutil.rmtree(corpus_dir(root, corpus_id) / "lexical", ignore_errors=True)  # before languages: unread


def lexical_status(index: LexicalIndex) -> dict[str, Any]:
    """What GET /v1/corpora/{name}/index shows of the lexical index."""
    return {"documents": len(index), "high_water_mark": index.hwm, "language": index.analyser.language}


def lexical_operations(
    final: dict[int, Any], texts: dict[int, tuple[str, str]]
) -> tuple[list[tuple[int, str]], list[int]]:
    """(upserts, deletes) for the last logged change of each document; a vanished upsert is a delete."""
    upserts = [
        (doc_id, texts[doc_id][1]) for doc_id, e in final.items() if e.op == "upsert" and doc_id in texts
    ]
    kept = {doc_id for doc_id, _ in upserts}
    return upserts, [doc_id for doc_id in final if doc_id not in kept]


def own_languages(
    sessions: sessionmaker[Session], corpus_id: int, index: LexicalIndex, ids: Iterable[int]
) -> dict[int, str | None] | None:
    """The documents' own languages when the index is `multi` (one query), else None (not needed)."""
    if index.analyser.language != MULTI:
        return None
    with sessions() as session:
        corpus = CorpusRepository(session).get_by_id(corpus_id)
        return DocumentLanguages(session, corpus).of(sorted(ids)) if corpus is not None else {}


def catch_up_lexical(sessions: sessionmaker[Session], corpus_id: int, index: LexicalIndex) -> None:
    """Replay the change log after the index's mark into it (an index not yet serving)."""
    while True:
        with sessions() as session:
            corpus = CorpusRepository(session).get_by_id(corpus_id)
            if corpus is None:
                return
            entries = ChangeLog(session, corpus).since(index.hwm, _LOG_PAGE)
            if not entries:
                return
            final = {e.document_id: e for e in entries}
            wanted = sorted(d for d, e in final.items() if e.op == "upsert")
            texts = DocumentRepository(session, corpus).by_ids(wanted)
        languages = own_languages(sessions, corpus_id, index, wanted)
        upserts, deletes = lexical_operations(final, texts)
        index.apply(upserts, deletes, hwm=int(entries[-1].seq), languages=languages)
        if len(entries) < _LOG_PAGE:
            return


def follow_language(
    root: Path, sessions: sessionmaker[Session], opened: CorpusVectors, language: str
) -> bool:
    """Serve the corpus's lexical index in `language` if it serves another: the saved one (the language
    job's) or a build, caught up with the log, then swapped in; queries meanwhile use the previous one.
    True when it swapped."""
    if opened.lexical.analyser.language == language:
        return False
    with sessions() as session:
        corpus = CorpusRepository(session).get_by_id(opened.corpus_id)
        if corpus is None:
            return False
        mark = int(corpus.change_seq)
    fresh = open_lexical(root, sessions, opened.corpus_id, opened.name, mark, language)
    catch_up_lexical(sessions, opened.corpus_id, fresh)
    with opened.lock:  # this process's writes to the corpus wait only for the last few changes
        catch_up_lexical(sessions, opened.corpus_id, fresh)
        opened.lexical = fresh
        opened.changes_since_checkpoint += 1  # so that the new language's index is saved soon
    log.info("lexical index %s: now analysed in %s (%d documents)", opened.name, language, len(fresh))
    return True
