"""Opening, building and saving a corpus's lexical (BM25) index beside its vector index.

The lexical index does not depend on the model, so one copy per corpus lives at
`<index dir>/<corpus>/lexical/` and serves every model version. Like a vector snapshot it is a cache of
the database: opened from disk and replayed from the change log after its mark, rebuilt from the
documents when it is missing, unreadable, or ahead of a restored database.
"""

from __future__ import annotations

import fcntl
import logging
import time
from pathlib import Path
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from app.db.repositories.corpora import CorpusRepository
from app.db.repositories.documents import DocumentRepository
from indexes.lexical import LexicalIndex
from indexes.snapshot import corpus_dir

log = logging.getLogger(__name__)


def lexical_folder(root: Path, corpus_id: int) -> Path:
    """Where a corpus's lexical index is saved."""
    return corpus_dir(root, corpus_id) / "lexical"


def open_lexical(
    root: Path, sessions: sessionmaker[Session], corpus_id: int, name: str, mark: int
) -> LexicalIndex:
    """The saved index when it is usable at `mark` (the caller replays the log after it), else a build."""
    loaded = LexicalIndex.load(lexical_folder(root, corpus_id))
    if loaded is not None and loaded.hwm <= mark:
        return loaded
    if loaded is not None:
        log.warning(
            "lexical index %s at %d is ahead of the database (%d): rebuilding", name, loaded.hwm, mark
        )
    started = time.monotonic()
    index = LexicalIndex()
    with sessions() as session:
        corpus = CorpusRepository(session).get_by_id(corpus_id)
        if corpus is not None:
            # Read after `mark`: changes made since are in these texts or replayed from the log later.
            for batch in DocumentRepository(session, corpus).iter_indexable(batch_size=2048):
                index.apply(batch)
    index.hwm = mark
    log.info(
        "lexical index %s: built from %d documents (%.1f s)", name, len(index), time.monotonic() - started
    )
    return index


def save_lexical(root: Path, corpus_id: int, index: LexicalIndex) -> None:
    """Save the index as the corpus's current one (one writer at a time on this host)."""
    folder = lexical_folder(root, corpus_id)
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".lock", "w") as lock_file:
        fcntl.flock(lock_file, fcntl.LOCK_EX)
        index.save(folder)


def lexical_operations(
    final: dict[int, Any], texts: dict[int, tuple[str, str]]
) -> tuple[list[tuple[int, str]], list[int]]:
    """(upserts, deletes) for the last logged change of each document; a vanished upsert is a delete."""
    upserts = [
        (doc_id, texts[doc_id][1]) for doc_id, e in final.items() if e.op == "upsert" and doc_id in texts
    ]
    kept = {doc_id for doc_id, _ in upserts}
    return upserts, [doc_id for doc_id in final if doc_id not in kept]
