"""pgvector SQL: vector spaces (one corpus x one model version), their rows and their HNSW indexes.

A space's rows live in `document_vectors` beside the documents (a foreign key with ON DELETE CASCADE:
deleting a document deletes its vectors in the same transaction). Each space may get a partial HNSW
index (`WHERE space_id = N`, cosine ops on `embedding::vector(dim)`), so every corpus and model has its
own graph and a search never post-filters another corpus's neighbours. Ids and dimensions are
integers from our own tables and are written into the SQL text on purpose: the planner matches a
partial index only against literal predicates.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from sqlalchemy import text
from sqlalchemy.orm import Session

from app.db.vector_schema import VALIDITY, index_name, search_statement


@dataclass(frozen=True)
class Space:
    """One corpus's vectors for one model version: `hwm` is the change-log mark they reflect."""

    id: int
    corpus_id: int
    model_version: str
    dimension: int
    hwm: int
    ready: bool


@dataclass(frozen=True)
class Freshness:
    """What a request compares before searching: the corpus's mark and the space's."""

    corpus_id: int
    change_seq: int
    space: Space | None


def hnsw_index_name(space: Space) -> str:
    """The partial HNSW index of a space (named by corpus too, so a deleted corpus's are found)."""
    return index_name(space.corpus_id, space.id)


def _register(session: Session) -> None:
    # pgvector's psycopg adapters: numpy arrays in, `Vector` out, once per pooled connection.
    from pgvector.psycopg import register_vector

    raw = session.connection().connection.driver_connection
    if raw is not None and raw.adapters.types.get("vector") is None:
        register_vector(raw)


def _space(row: object) -> Space:
    return Space(*row)  # type: ignore[misc]  # columns selected in field order


_SPACE_COLUMNS = "id, corpus_id, model_version, dimension, hwm, ready"
_ROWS_OF = "FROM document_vectors WHERE space_id = :s AND document_id = ANY(:ids)"


class VectorRepository:
    """Queries on one session: spaces, vector rows, searches."""

    def __init__(self, session: Session) -> None:
        self.session = session
        _register(session)

    # --- spaces ---------------------------------------------------------------------------------
    def freshness(self, corpus_name: str, model_version: str) -> Freshness | None:
        """The corpus's mark and its space for the model in one query; None when no such corpus."""
        row = self.session.execute(
            text(
                f"SELECT c.id, c.change_seq, {', '.join('s.' + c for c in _SPACE_COLUMNS.split(', '))} "
                "FROM corpora c LEFT JOIN vector_spaces s ON s.corpus_id = c.id AND s.model_version = :v "
                "WHERE c.name = :name"
            ),
            {"name": corpus_name, "v": model_version},
        ).first()
        if row is None:
            return None
        space = _space(row[2:]) if row[2] is not None else None
        return Freshness(int(row[0]), int(row[1]), space)

    def space(self, corpus_id: int, model_version: str) -> Space | None:
        """The space of a corpus and model, if created."""
        row = self.session.execute(
            text(f"SELECT {_SPACE_COLUMNS} FROM vector_spaces WHERE corpus_id = :c AND model_version = :v"),
            {"c": corpus_id, "v": model_version},
        ).first()
        return _space(row) if row is not None else None

    def create_space(self, corpus_id: int, model_version: str, dimension: int) -> Space:
        """The space, created empty (not ready) when missing; concurrent creators get the same row."""
        self.session.execute(
            text(
                "INSERT INTO vector_spaces (corpus_id, model_version, dimension) VALUES (:c, :v, :d) "
                "ON CONFLICT (corpus_id, model_version) DO NOTHING"
            ),
            {"c": corpus_id, "v": model_version, "d": dimension},
        )
        space = self.space(corpus_id, model_version)
        assert space is not None
        return space

    def mark_ready(self, space: Space, hwm: int) -> None:
        """The build reached `hwm`: the space may be searched (after a catch-up past it)."""
        self.session.execute(
            text("UPDATE vector_spaces SET ready = true, hwm = GREATEST(hwm, :h) WHERE id = :s"),
            {"s": space.id, "h": hwm},
        )

    def advance(self, space_id: int, hwm: int, *, only_from: int | None = None) -> bool:
        """Move the space's mark to `hwm` (never back); with `only_from`, only if it stands there."""
        condition = "hwm = :from" if only_from is not None else "hwm < :h"
        result = self.session.execute(
            text(f"UPDATE vector_spaces SET hwm = :h WHERE id = :s AND {condition}"),
            {"s": space_id, "h": hwm, "from": only_from},
        )
        return bool(result.rowcount)  # type: ignore[attr-defined]

    def spaces_of_other_models(self, keep: Sequence[str]) -> list[Space]:
        """Every space whose model version is not one of `keep`."""
        rows = self.session.execute(
            text(f"SELECT {_SPACE_COLUMNS} FROM vector_spaces WHERE NOT (model_version = ANY(:keep))"),
            {"keep": list(keep)},
        )
        return [_space(row) for row in rows]

    def delete_space(self, space: Space) -> None:
        """Delete a space and (by cascade) its rows."""
        self.session.execute(text("DELETE FROM vector_spaces WHERE id = :s"), {"s": space.id})

    # --- rows -----------------------------------------------------------------------------------
    def upsert(self, space: Space, rows: Sequence[tuple[int, str, np.ndarray]]) -> None:
        """Write (document id, text hash, vector) rows, replacing a document's previous vector."""
        if not rows:
            return
        self.session.execute(
            text(
                "INSERT INTO document_vectors (space_id, document_id, text_sha256, embedding) "
                "VALUES (:s, :d, :h, :e) ON CONFLICT (space_id, document_id) "
                "DO UPDATE SET text_sha256 = EXCLUDED.text_sha256, embedding = EXCLUDED.embedding"
            ),
            [{"s": space.id, "d": d, "h": h, "e": np.asarray(e, np.float32)} for d, h, e in rows],
        )

    def hashes(self, space: Space, doc_ids: Sequence[int]) -> dict[int, str]:
        """Text hash each stored vector was encoded from."""
        rows = self.session.execute(
            text(f"SELECT document_id, text_sha256 {_ROWS_OF}"),
            {"s": space.id, "ids": list(doc_ids)},
        )
        return {int(d): str(h) for d, h in rows}

    def vectors(self, space: Space, doc_ids: Sequence[int]) -> dict[int, np.ndarray]:
        """Stored vectors by document id (missing ones are absent)."""
        if not doc_ids:
            return {}
        rows = self.session.execute(
            text(f"SELECT document_id, embedding {_ROWS_OF}"),
            {"s": space.id, "ids": list(doc_ids)},
        )
        return {int(d): np.asarray(e.to_numpy(), np.float32) for d, e in rows}

    def stale_documents(self, space: Space, after: int, limit: int) -> list[tuple[int, str, str]]:
        """(id, text hash, text) of the corpus's documents past `after` with no current vector here."""
        rows = self.session.execute(
            text(
                "SELECT d.id, d.text_sha256, d.text FROM documents d LEFT JOIN document_vectors v "
                "ON v.space_id = :s AND v.document_id = d.id WHERE d.corpus_id = :c AND d.id > :after "
                "AND (v.document_id IS NULL OR v.text_sha256 <> d.text_sha256) ORDER BY d.id LIMIT :n"
            ),
            {"s": space.id, "c": space.corpus_id, "after": after, "n": limit},
        )
        return [(int(i), str(h), str(t)) for i, h, t in rows]

    def document_hashes(self, doc_ids: Sequence[int]) -> dict[int, str]:
        """The current text hash of each existing document."""
        rows = self.session.execute(
            text("SELECT id, text_sha256 FROM documents WHERE id = ANY(:ids)"), {"ids": list(doc_ids)}
        )
        return {int(d): str(h) for d, h in rows}

    def count(self, space: Space) -> int:
        """Rows in the space."""
        return int(
            self.session.scalar(
                text("SELECT count(*) FROM document_vectors WHERE space_id = :s"), {"s": space.id}
            )
            or 0
        )

    # --- search ---------------------------------------------------------------------------------
    def search(
        self, space: Space, queries: np.ndarray, k: int, ef_search: int | None, storage: str = "vector"
    ) -> list[list[tuple[int, float]]]:
        """Top k (id, cosine) per query; through the space's HNSW graph when `ef_search` is given."""
        rows_of = f"FROM document_vectors WHERE space_id = {int(space.id)}"
        if ef_search is None:
            # Exact: a sequential scan of the space's rows, even where an HNSW index exists.
            self.session.execute(text("SET LOCAL enable_indexscan = off"))
        else:
            self.session.execute(text(f"SET LOCAL hnsw.ef_search = {int(ef_search)}"))
        sql = search_statement(storage, space.dimension, rows_of, ef_search)
        results = []
        for vector in np.asarray(queries, np.float32):
            rows = self.session.execute(text(sql), {"q": vector, "k": k})
            results.append([(int(d), float(s)) for d, s in rows])
        return results

    def has_hnsw(self, space: Space) -> bool:
        """True when the space's HNSW index exists and is valid (a failed concurrent build is not)."""
        return bool(
            self.session.scalar(
                text(f"{VALIDITY} AND pg_catalog.pg_table_is_visible(c.oid)"),
                {"n": hnsw_index_name(space)},
            )
        )

    def hnsw_bytes(self, space: Space) -> int | None:
        """Size of the space's HNSW index on disk, or None without one."""
        name = hnsw_index_name(space)
        found = self.session.scalar(text("SELECT to_regclass(:n) IS NOT NULL"), {"n": name})
        return (
            int(self.session.scalar(text("SELECT pg_relation_size(:n)"), {"n": name}) or 0) if found else None
        )


def copy_rows(
    session: Session,
    space: Space,
    rows: Iterable[tuple[int, str, np.ndarray]],
) -> int:
    """Bulk-write (document id, text hash, vector) rows through COPY into a staging table; returns rows."""
    _register(session)  # COPY's binary `vector` type: this pooled connection may not know it yet
    raw = session.connection().connection.driver_connection
    assert raw is not None
    session.execute(
        text(
            "CREATE TEMP TABLE IF NOT EXISTS staging_vectors (document_id INTEGER, text_sha256 VARCHAR(64), "
            "embedding vector) ON COMMIT DELETE ROWS"
        )  # fmt: skip
    )
    written = 0
    with (
        raw.cursor() as cursor,
        cursor.copy(
            "COPY staging_vectors (document_id, text_sha256, embedding) FROM STDIN WITH (FORMAT BINARY)"
        ) as copy,
    ):
        copy.set_types(["int4", "varchar", "vector"])
        for doc_id, sha, vector in rows:
            copy.write_row((doc_id, sha, np.asarray(vector, np.float32)))
            written += 1
    session.execute(
        text(
            "INSERT INTO document_vectors (space_id, document_id, text_sha256, embedding) "
            f"SELECT {int(space.id)}, document_id, text_sha256, embedding FROM staging_vectors "
            "ON CONFLICT (space_id, document_id) DO UPDATE SET text_sha256 = EXCLUDED.text_sha256, "
            "embedding = EXCLUDED.embedding"
        )
    )
    return written
