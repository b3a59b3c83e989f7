"""A worker's own committed write, applied to its indexes without reading it back from the database.

Following the log costs a session and three reads (the corpus row, the log after the mark, the texts)
for a change the writer holds in memory. Writers of a corpus take turns (PostgreSQL: its row lock;
SQLite: the database's write lock, taken before the row is read: `CorpusRepository.get`), so when
this worker's vector and BM25 indexes both stand at the mark the write began from, the write's entries
are exactly the log between that mark and the new one: applying them (each at its own sequence number)
leaves the indexes where replaying the log would. Anything else (an index behind, another worker's
entries in between, an upsert without its vector) takes the log's way.
"""

from __future__ import annotations

from typing import Protocol

from app.stores.port import OwnWrite
from indexes.lexical import LexicalIndex
from indexes.vector_index import VectorIndex


class _Indexed(Protocol):
    index: VectorIndex
    lexical: LexicalIndex
    changes_since_checkpoint: int


def apply_own_write(opened: _Indexed, written: OwnWrite) -> bool:
    """Apply the write to both indexes if they stand at its start (call under the corpus's lock);
    False, nothing applied, when the log must be read instead."""
    if opened.index.hwm != written.previous_mark or opened.lexical.hwm != written.previous_mark:
        return False
    if not written.complete():
        return False
    upserts = [c for c in written.changes if c.op == "upsert"]
    deletes = [c for c in written.changes if c.op == "delete"]
    opened.index.apply(
        [(c.document_id, c.vector, c.seq) for c in upserts if c.vector is not None],
        [(c.document_id, c.seq) for c in deletes],
        hwm=written.mark,
    )
    opened.lexical.apply(
        [(c.document_id, c.text) for c in upserts if c.text is not None],
        [c.document_id for c in deletes],
        hwm=written.mark,
        languages={c.document_id: c.language for c in upserts},
    )
    opened.changes_since_checkpoint += len(written.changes)
    return True
