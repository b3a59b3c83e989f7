"""pgvector DDL: the extension, the vector tables, and each space's partial HNSW index."""

from __future__ import annotations

from typing import NamedTuple, Protocol

from sqlalchemy import Connection, Engine, text
from sqlalchemy.exc import DBAPIError

from app.core.errors import ConfigurationError

VALIDITY = "SELECT i.indisvalid FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid WHERE c.relname = :n"


class SpaceKey(Protocol):
    """What naming and building a space's index needs."""

    @property
    def id(self) -> int: ...  # noqa: D102
    @property
    def corpus_id(self) -> int: ...  # noqa: D102
    @property
    def dimension(self) -> int: ...  # noqa: D102


# halfvec and bit HNSW graphs (and binary_quantize) arrived in pgvector 0.7.0.
QUANTIZED_GRAPHS_FROM = (0, 7, 0)


def pgvector_version(connection: Connection) -> tuple[int, ...]:
    """The installed pgvector extension's version, e.g. (0, 7, 4); () when it is not installed."""
    found = connection.scalar(text("SELECT extversion FROM pg_extension WHERE extname = 'vector'"))
    return tuple(int(part) for part in str(found).split(".") if part.isdigit()) if found else ()


class GraphOperand(NamedTuple):
    """How a space's HNSW graph is built over its rows and how a query `:q` walks it."""

    expression: str  # the indexed expression over `embedding`
    operators: str  # its operator class
    query: str  # the query `:q` cast alike
    distance: str  # the operator the graph orders by


def graph_operand(storage: str, dimension: int) -> GraphOperand:
    """The graph over `vector`, `halfvec` (float16) or `bit` (one sign bit per dimension) copies."""
    d = int(dimension)
    if storage == "bit":
        # Binary quantization: Hamming distance between sign bits; the candidates it finds are re-scored
        # from the float32 rows, so it needs more of them (ef_search) than a float graph.
        bits = f"binary_quantize(embedding::vector({d}))::bit({d})"
        query = f"binary_quantize(CAST(:q AS vector({d})))::bit({d})"
        return GraphOperand(bits, "bit_hamming_ops", query, "<~>")
    kind = "halfvec" if storage == "halfvec" else "vector"
    return GraphOperand(f"embedding::{kind}({d})", f"{kind}_cosine_ops", f"CAST(:q AS {kind}({d}))", "<=>")


def search_statement(storage: str, dimension: int, rows: str, ef_search: int | None) -> str:
    """The top `:k` (document_id, cosine) of `:q` over `rows` (a FROM ... WHERE clause): exact when
    `ef_search` is None, else through the graph of `storage`."""
    full = f"embedding::vector({int(dimension)})"
    scored = f"SELECT document_id, 1 - ({full} <=> :q)"
    if ef_search is None:  # exact (the caller turns index scans off): ties broken by id
        return f"{scored} {rows} ORDER BY {full} <=> :q, document_id LIMIT :k"
    if storage == "vector":
        return f"{scored} {rows} ORDER BY {full} <=> :q LIMIT :k"
    # A float16 or bit graph: its ef_search candidates are re-scored from the float32 rows, so scores
    # stay exact cosines and the order among the candidates is the exact one.
    graph = graph_operand(storage, dimension)
    return (
        f"{scored} FROM (SELECT document_id, embedding {rows} ORDER BY {graph.expression} {graph.distance} "
        f"{graph.query} LIMIT {int(ef_search)}) candidates ORDER BY {full} <=> :q, document_id LIMIT :k"
    )


def index_name(corpus_id: int, space_id: int) -> str:
    """The partial HNSW index of a space (named by corpus too, so a deleted corpus's are found)."""
    return f"ix_dv_hnsw_c{int(corpus_id)}_s{int(space_id)}"


SCHEMA_SQL = (
    """CREATE TABLE IF NOT EXISTS vector_spaces (
        id SERIAL PRIMARY KEY,
        corpus_id INTEGER NOT NULL REFERENCES corpora(id) ON DELETE CASCADE,
        model_version VARCHAR(300) NOT NULL,
        dimension INTEGER NOT NULL,
        hwm BIGINT NOT NULL DEFAULT 0,
        ready BOOLEAN NOT NULL DEFAULT false,
        created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
        CONSTRAINT uq_vector_spaces_corpus_model UNIQUE (corpus_id, model_version))""",
    """CREATE TABLE IF NOT EXISTS document_vectors (
        space_id INTEGER NOT NULL REFERENCES vector_spaces(id) ON DELETE CASCADE,
        document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        text_sha256 VARCHAR(64) NOT NULL,
        embedding vector NOT NULL,
        PRIMARY KEY (space_id, document_id))""",
    # Deleting a document finds its vectors (one per kept model) through this index.
    "CREATE INDEX IF NOT EXISTS ix_document_vectors_document ON document_vectors (document_id)",
)
MISSING_EXTENSION = (
    "PAIRANK_VECTOR_STORE=pgvector needs the pgvector extension in this database, and the role may not "
    "create it ({reason}). Install pgvector on the server (e.g. the pgvector/pgvector:pg16 image) and run, "
    "as a superuser or the database owner: CREATE EXTENSION IF NOT EXISTS vector;"
)


def ensure_vector_schema(connection: Connection) -> None:
    """Create the extension (when the role may) and the vector tables; a clear error otherwise."""
    installed = connection.scalar(text("SELECT 1 FROM pg_extension WHERE extname = 'vector'"))
    if not installed:
        try:
            with connection.begin_nested():
                connection.execute(text("CREATE EXTENSION IF NOT EXISTS vector"))
        except DBAPIError as error:
            reason = str(error.orig).splitlines()[0] if error.orig else str(error)
            raise ConfigurationError(MISSING_EXTENSION.format(reason=reason)) from error
    for statement in SCHEMA_SQL:
        connection.execute(text(statement))


def build_hnsw(
    engine: Engine, space: SpaceKey, m: int, ef_construction: int, storage: str = "vector"
) -> None:
    """Build the space's HNSW index without blocking writes (CONCURRENTLY: outside any transaction).

    An earlier failed build leaves an invalid index behind; it is dropped first.
    """
    name = index_name(space.corpus_id, space.id)
    expression, operators, _, _ = graph_operand(storage, space.dimension)
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        valid = connection.scalar(text(VALIDITY), {"n": name})
        if valid is False:
            connection.execute(text(f'DROP INDEX CONCURRENTLY IF EXISTS "{name}"'))
        connection.execute(
            text(
                f'CREATE INDEX CONCURRENTLY IF NOT EXISTS "{name}" ON document_vectors USING hnsw '
                f"(({expression}) {operators}) "
                f"WITH (m = {int(m)}, ef_construction = {int(ef_construction)}) "
                f"WHERE space_id = {int(space.id)}"
            )
        )


def drop_hnsw_index(engine: Engine, name: str) -> None:
    """Drop one space's HNSW index (its rows are gone; the index would only take space)."""
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        connection.execute(text(f'DROP INDEX CONCURRENTLY IF EXISTS "{name}"'))


def drop_hnsw_indexes(engine: Engine, corpus_id: int) -> None:
    """Drop the HNSW indexes of every space a deleted corpus had."""
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        names = connection.scalars(
            text(
                "SELECT relname FROM pg_class WHERE relkind = 'i' AND relname LIKE :pattern "
                "AND pg_catalog.pg_table_is_visible(oid)"
            ),  # fmt: skip
            {"pattern": f"ix\\_dv\\_hnsw\\_c{int(corpus_id)}\\_s%"},
        ).all()
        for name in names:
            connection.execute(text(f'DROP INDEX CONCURRENTLY IF EXISTS "{name}"'))
