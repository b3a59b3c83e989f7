"""Alembic migrations create the schema on SQLite and PostgreSQL, and downgrade cleanly."""

from __future__ import annotations

from datetime import UTC, datetime

from alembic import command
from sqlalchemy import create_engine, inspect, text

from app.core.text_hash import text_sha256
from app.db.migrate import alembic_config, upgrade_to_head


def test_upgrade_downgrade_upgrade(database_url: str) -> None:
    upgrade_to_head(database_url)
    engine = create_engine(database_url)
    try:
        tables = set(inspect(engine).get_table_names())
        assert {
            "corpora",
            "documents",
            "evaluations",
            "alembic_version",
            "blobs",
            "blob_chunks",
            "job_inputs",
        } <= tables
        columns = {c["name"] for c in inspect(engine).get_columns("documents")}
        assert {"external_id", "text", "text_sha256", "metadata", "created_at", "updated_at"} <= columns
        command.downgrade(alembic_config(database_url), "base")
        assert not {"corpora", "documents", "evaluations"} & set(inspect(engine).get_table_names())
        upgrade_to_head(database_url)
        assert {"corpora", "documents"} <= set(inspect(engine).get_table_names())
    finally:
        engine.dispose()


def test_0012_gives_existing_pairs_their_query_hash(database_url: str) -> None:
    config = alembic_config(database_url)
    command.upgrade(config, "0011")
    engine = create_engine(database_url)
    try:
        with engine.begin() as connection:
            connection.execute(
                text("INSERT INTO corpora (id, name, kind, change_seq, document_count, created_at, "
                     "updated_at) VALUES (1, 'claims', 'claim', 0, 0, :now, :now)"),
                {"now": datetime.now(UTC)},
            )  # fmt: skip
            for query in ("was the moon landing fake", "ß" * 3000):  # a query too long for a btree entry
                connection.execute(
                    text("INSERT INTO training_pairs (corpus_id, query, document_id, label, created_at) "
                         "VALUES (1, :query, 'c1', 1, :now)"),
                    {"query": query, "now": datetime.now(UTC)},
                )  # fmt: skip
        upgrade_to_head(database_url)
        with engine.connect() as connection:
            rows = connection.execute(text("SELECT query, query_sha256, judged_by FROM training_pairs")).all()
        assert {(q, h, j) for q, h, j in rows} == {(q, text_sha256(q), None) for q, _, _ in rows}
        assert "ix_training_pairs_corpus_query" in {
            i["name"] for i in inspect(engine).get_indexes("training_pairs")
        }
        command.downgrade(config, "0011")
        assert "query_sha256" not in {c["name"] for c in inspect(engine).get_columns("training_pairs")}
    finally:
        engine.dispose()


def test_0018_keeps_every_judgement_as_one_judges_row(database_url: str) -> None:
    config = alembic_config(database_url)
    command.upgrade(config, "0017")
    engine = create_engine(database_url)
    try:
        with engine.begin() as connection:
            connection.execute(
                text("INSERT INTO corpora (id, name, kind, change_seq, document_count, created_at, "
                     "updated_at) VALUES (1, 'claims', 'claim', 0, 0, :now, :now)"),
                {"now": datetime.now(UTC)},
            )  # fmt: skip
            for judge, label in (("k1", 1.0), (None, 0.0), ("k2", 2.0)):
                connection.execute(
                    text("INSERT INTO training_pairs (corpus_id, query, document_id, label, judged_by, "
                         "created_at) VALUES (1, 'q', 'c1', :label, :judge, :now)"),
                    {"label": label, "judge": judge, "now": datetime.now(UTC)},
                )  # fmt: skip
        upgrade_to_head(database_url)
        with engine.connect() as connection:
            rows = connection.execute(
                text("SELECT p.id, j.judged_by, j.grade, p.label, p.disagreement FROM judgements j "
                     "JOIN training_pairs p ON p.id = j.pair_id ORDER BY p.id")
            ).all()  # fmt: skip
            scale = connection.execute(text("SELECT judgement_scale FROM corpora")).scalar_one()
        assert [(j, g, label, bool(d)) for _, j, g, label, d in rows] == [
            ("k1", 1.0, 1.0, False), ("unknown", 0.0, 0.0, False), ("k2", 2.0, 2.0, False)
        ]  # fmt: skip
        assert scale == "binary"
        command.downgrade(config, "0017")
        assert "judgements" not in set(inspect(engine).get_table_names())
    finally:
        engine.dispose()
