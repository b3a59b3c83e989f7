"""The soak benchmark's short variant (benchmarks/serving/soak.py runs it for 10 minutes on the default
model): mixed traffic at a fixed rate against a real `pairank serve`, and nothing may fail or grow."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest
from sqlalchemy import create_engine, make_url, text

from tests.helpers.processes import ServerFactory

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
QUERIES = [
    f"claim {i}: the {w} was faked by the senator" for i, w in enumerate(["moon", "tower", "flood"] * 20)
]


def soak_module() -> ModuleType:
    """benchmarks/serving/soak.py, imported as the benchmark runs it (its folder on the path)."""
    sys.path[:0] = [str(BENCHMARKS / "serving"), str(BENCHMARKS)]
    spec = importlib.util.spec_from_file_location("soak_benchmark", BENCHMARKS / "serving" / "soak.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("database_url", ["sqlite", "postgresql"], indirect=True)
def test_short_soak_answers_everything_and_grows_nothing(
    start_server: ServerFactory, service_env: dict[str, str], database_url: str
) -> None:
    soak = soak_module()
    counter = None
    if database_url.startswith("postgresql"):
        url = make_url(database_url)
        service_env["PAIRANK_DATABASE_URL"] = url.set(
            query={**url.query, "application_name": soak.APPLICATION}
        ).render_as_string(hide_password=False)
        engine = create_engine(url.set(query={}))
        query = text("SELECT count(*) FROM pg_stat_activity WHERE application_name = :name")

        def counter() -> int:
            with engine.connect() as connection:
                return int(connection.execute(query, {"name": soak.APPLICATION}).scalar_one())

    server = start_server(checkpoint_seconds="5")
    http = server.http
    assert http.post("/v1/corpora", json={"name": "claims", "kind": "claim"}).status_code == 201
    documents = [{"id": f"c{i}", "text": q} for i, q in enumerate(QUERIES)]
    assert http.post("/v1/corpora/claims/documents", json={"documents": documents}).status_code == 200
    result = soak.drive_soak(
        server.port, server.process.pid, "claims", QUERIES, seconds=40, rate=20, warmup=10,
        connections=counter, sample_every=1.0, window=10.0,
    )  # fmt: skip
    assert result["all"]["errors"] == 0 and result["all"]["429"] == 0, result["by_operation"]
    assert set(result["by_operation"]) == {"rank", "upsert", "delete", "duplicates"}
    assert result["achieved_per_s"] >= 15
    growth = result["growth"]
    assert abs(growth["rss_mib"]["growth_percent"]) <= 10, growth
    # A leak grows the descriptors nothing bounds; SQLite's pool (30 connections, each holding the
    # database and its WAL) may still grow late on a slow machine, and a checkpoint holds a lock and
    # staged files while it runs: those are bounded instead.
    assert growth["other_fds"]["last_minute"] <= growth["other_fds"]["first_minute"] + 3, growth
    held = [s["open_fds"] - s["other_fds"] for s in result["samples"]]
    assert max(held) <= 2 * 30 + 1 + 8, held
    if counter is not None:
        assert growth["db_connections"]["peak"] <= growth["db_connections"]["first_minute"] + 3, growth
