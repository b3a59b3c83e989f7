"""pgvector `vector`, `halfvec` and `bit` HNSW graphs over the same float32 rows (issue 41 part 2).

N clustered unit vectors of 384 dimensions (index_scale_parts.synthetic_vectors) are COPYed into one
table; per storage its HNSW graph is built with the service's default spec (m 32, ef_construction 80)
and the store's own expression and operator class (`graph_operand`); a halfvec search re-scores its
ef_search candidates from the float32 rows, as `VectorRepository.search` does, and so does a bit graph
(binary quantization: Hamming distance between sign bits), given more candidates (--bit-ef-search).
Reported: heap and graph bytes, build seconds, search p50/p95 (k=10, 200 queries near stored vectors,
after one warm-up pass) and recall@10 against exact search. With --real DATA the rows are instead the
default model's vectors of the shared corpora's documents (an even share of each, up to --rows) and
the queries the datasets' own queries, encoded: sign bits of real embeddings keep less of the
neighbourhood than those of clustered vectors, which is what a `bit` graph's recall depends on.
Needs pgvector >= 0.7 (the pgserver wheel has 0.6.2). Writes OUTPUT.md and .json (default
benchmarks/pgvector_halfvec).

    .venv/bin/python benchmarks/index/pgvector_halfvec.py --url postgresql://postgres@127.0.0.1:55432/test
    .venv/bin/python benchmarks/index/pgvector_halfvec.py --url postgresql://postgres@127.0.0.1:5432/bench \
        --rows 1000000 --storages vector halfvec bit --output benchmarks/pgvector_1m
    .venv/bin/python benchmarks/index/pgvector_halfvec.py --url postgresql://postgres@127.0.0.1:5432/bench \
        --real ../shared/data --rows 60000 --storages vector halfvec bit --bit-ef-search 40 96 200 400 \
        --output benchmarks/pgvector_real
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
from pgvector.psycopg import register_vector
from tqdm import tqdm

REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO), str(REPO / "benchmarks"), str(REPO / "benchmarks" / "index")]
from bench_common import command_line, latency_ms, machine  # noqa: E402
from index_scale_parts import synthetic_vectors  # noqa: E402

from app.db.vector_schema import graph_operand, search_statement  # noqa: E402

DIMENSION, K, QUERIES = 384, 10, 200


def load(connection: psycopg.Connection, vectors: np.ndarray) -> None:
    """The rows, as the store keeps them: float32 `vector` values in one table."""
    connection.execute("DROP TABLE IF EXISTS document_vectors")
    connection.execute("CREATE TABLE document_vectors (document_id int PRIMARY KEY, embedding vector)")
    with (
        connection.cursor() as cursor,
        cursor.copy("COPY document_vectors FROM STDIN WITH (FORMAT BINARY)") as copy,
    ):
        copy.set_types(["int4", "vector"])
        for i, vector in enumerate(vectors):
            copy.write_row((i, vector))
    connection.execute("ANALYZE document_vectors")


def search_sql(storage: str, ef: int | None) -> str:
    """The store's own search statement (`search_statement`) over the benchmark table, for psycopg."""
    sql = search_statement(storage, DIMENSION, "FROM document_vectors", ef)
    return sql.replace(":q", "%(q)s").replace(":k", str(K))


def run_queries(
    connection: psycopg.Connection, sql: str, queries: np.ndarray
) -> tuple[list[list[int]], list[float]]:
    """Ids found per query and each query's milliseconds."""
    found, millis = [], []
    for query in queries:
        started = time.perf_counter()
        found.append([row[0] for row in connection.execute(sql, {"q": query}).fetchall()])
        millis.append(1000 * (time.perf_counter() - started))
    return found, millis


def measure(
    connection: psycopg.Connection, storage: str, queries: np.ndarray, truth: list[list[int]], efs: list[int]
) -> list[dict[str, Any]]:
    """Build the storage's graph, then its size and per-ef latency and recall; the graph is dropped after."""
    expression, operators, _, _ = graph_operand(storage, DIMENSION)
    started = time.perf_counter()
    connection.execute(
        f"CREATE INDEX graph ON document_vectors USING hnsw (({expression}) {operators}) "
        "WITH (m = 32, ef_construction = 80)"
    )
    build = time.perf_counter() - started
    graph_bytes = connection.execute("SELECT pg_relation_size('graph')").fetchone()[0]
    heap_bytes = connection.execute("SELECT pg_table_size('document_vectors')").fetchone()[0]
    rows = []
    for ef in efs:
        connection.execute(f"SET hnsw.ef_search = {ef}")
        run_queries(connection, search_sql(storage, ef), queries)  # warm-up: the graph's pages cached
        found, millis = run_queries(connection, search_sql(storage, ef), queries)
        recall = float(np.mean([len(set(f) & set(t)) / K for f, t in zip(found, truth, strict=True)]))
        rows.append(
            {
                "storage": storage,
                "ef_search": ef,
                "graph_bytes": graph_bytes,
                "heap_bytes": heap_bytes,
                "build_s": round(build, 1),
                "recall_at_10": round(recall, 3),
                **latency_ms(millis),
            }
        )
    connection.execute("DROP INDEX graph")
    return rows


def report(result: dict[str, Any]) -> str:
    """The markdown page."""
    server = result.get("server", "the pgserver wheel's PostgreSQL 16.2 (shared_buffers 512MB)")
    storages = " vs ".join(f"`{s}`" for s in result.get("storages", ["vector", "halfvec"]))
    lines = [
        f"# pgvector: {storages} HNSW graphs",
        "",
        f"Command: `{result['command']}`  ",
        f"Machine: {result['machine']}  ",
        f"Server: {server}, pgvector {result['pgvector']} built from source; {result['rows']:,} "
        f"{result.get('kind', 'clustered synthetic')} vectors of "
        f"{DIMENSION} dimensions, m 32, ef_construction 80; COPY and ANALYZE of the rows: "
        f"{result.get('load_s', '-')} s.",
        "",
        "| storage | ef_search | heap MiB | graph MiB | build s | search p50 / p95 ms | recall@10 |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for row in result["results"]:
        lines.append(
            f"| {row['storage']} | {row['ef_search']} | {row['heap_bytes'] / 2**20:.0f} | "
            f"{row['graph_bytes'] / 2**20:.0f} | {row['build_s']} | {row['p50_ms']} / {row['p95_ms']} | "
            f"{row['recall_at_10']:.3f} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    """Measure and write the report."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True, help="a PostgreSQL with pgvector >= 0.7 (psycopg URL)")
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--ef-search", type=int, nargs="+", default=[40, 96])
    parser.add_argument("--bit-ef-search", type=int, nargs="+", default=[200, 400])
    parser.add_argument(
        "--storages", nargs="+", default=["vector", "halfvec"], choices=["vector", "halfvec", "bit"]
    )
    parser.add_argument("--output", type=Path, default=REPO / "benchmarks" / "pgvector_halfvec")
    parser.add_argument(
        "--real",
        type=Path,
        help="the shared data folder: MiniLM vectors of its corpora (up to --rows) and queries",
    )
    args = parser.parse_args(argv)
    if args.real is not None:  # real embeddings and real queries: no query sits near a stored vector
        from scale_10m import real_vectors

        vectors, queries = real_vectors(args.real, args.rows, QUERIES)
        args.rows = len(vectors)
    else:
        vectors = synthetic_vectors(args.rows, DIMENSION)
        rng = np.random.default_rng(1)
        queries = vectors[rng.choice(args.rows, QUERIES, replace=False)]
        queries = queries + rng.normal(0, 0.3 / np.sqrt(DIMENSION), queries.shape).astype(np.float32)
    with psycopg.connect(args.url, autocommit=True) as connection:
        connection.execute("CREATE EXTENSION IF NOT EXISTS vector")
        register_vector(connection)
        version = connection.execute(
            "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
        ).fetchone()[0]
        server = connection.execute(
            "SELECT 'PostgreSQL ' || current_setting('server_version') || ' (shared_buffers ' || "
            "current_setting('shared_buffers') || ', max_parallel_maintenance_workers ' || "
            "current_setting('max_parallel_maintenance_workers') || ')'"
        ).fetchone()[0]
        # The graph must fit in maintenance_work_mem or the build slows down by an order of magnitude.
        connection.execute("SET maintenance_work_mem = '6GB'")
        started = time.perf_counter()
        load(connection, vectors)
        load_s = round(time.perf_counter() - started, 1)
        truth, _ = run_queries(connection, search_sql("vector", None), queries)  # no graph yet: exact
        results = []
        for storage in tqdm(args.storages, desc="graphs"):
            efs = args.bit_ef_search if storage == "bit" else args.ef_search
            results += measure(connection, storage, queries, truth, efs)
            partial = {"rows": args.rows, "results": results}
            args.output.with_suffix(".partial.json").write_text(json.dumps(partial, indent=2) + "\n")
    result = {
        "command": command_line("index/pgvector_halfvec.py", argv),
        "machine": machine(),
        "pgvector": version,
        "rows": args.rows,
        "server": server,
        "load_s": load_s,
        "storages": args.storages,
        "kind": "real MiniLM (the shared corpora's documents; queries: the datasets' own)"
        if args.real is not None
        else "clustered synthetic",
        "results": results,
    }
    args.output.with_suffix(".json").write_text(json.dumps(result, indent=2) + "\n")
    args.output.with_suffix(".md").write_text(report(result))
    args.output.with_suffix(".partial.json").unlink(missing_ok=True)
    print(report(result))


if __name__ == "__main__":
    main()
