"""Database transactions of the hot path: per dense rank with a key, and per second of an idle process.

Runs the real app in this process (the tests' tiny model; the counts do not depend on the model) on a
fresh schema of the given PostgreSQL database, with keys required and a database key (not the
configured admin key). Two counts, side by side:
  - the engine's `begin` events (exactly this process's transactions), and
  - `pg_stat_database.xact_commit + xact_rollback` of the database (what the server saw; use a database
    nobody else uses, as the default `hot_bench` below, or the count includes their work).
Then an idle process (the follower and the embedded job worker running, no requests) for `--idle`
seconds. Prints one JSON object.

    .venv/bin/python benchmarks/serving/hot_path.py [--url postgresql+psycopg://postgres@127.0.0.1:5432/hot_bench]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import create_engine, event, text
from sqlalchemy.engine import make_url

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from app.config import Settings  # noqa: E402
from app.db.migrate import upgrade_to_head  # noqa: E402
from app.main import create_app  # noqa: E402
from app.serving.runtime import Runtime  # noqa: E402
from app.usecases.api_keys import ApiKeyService  # noqa: E402
from tests.helpers.tiny_model import build_tiny_model  # noqa: E402

DEFAULT_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/hot_bench"
OUTPUT = Path(__file__).resolve().parents[1] / "hot_path.json"
# The same script at 984c719 (before issue 25's hot path): a pooled connection's pre-ping was a
# transaction of its own, the key check, the corpus row and the resolve one each; the follower and the
# job worker polled every second (2 transactions each).
BEFORE = {
    "commit": "984c719",
    "transactions_per_rank_events": 3.0,
    "transactions_per_rank_server": 6.03,
    "idle_transactions_per_second_events": 4.0,
    "idle_transactions_per_second_server": 8.29,
}
TEXTS = [f"claim number {i} about vaccines, the moon landing and a flat earth" for i in range(50)]


def server_transactions(admin: Any) -> int:
    """Committed plus rolled-back transactions of the database (flushed stats; ours excluded later)."""
    time.sleep(11)  # an idle backend reports its counts within 10 s (PGSTAT_IDLE_INTERVAL)
    with admin.connect() as connection:
        return int(connection.execute(text(
            "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()"
        )).scalar_one())  # fmt: skip


def schema_url(base: str, schema: str) -> str:
    """The URL with `schema` first on the search path."""
    url = make_url(base)
    return url.set(query={**url.query, "options": f"-csearch_path={schema}"}).render_as_string(False)


def measure(url: str, folder: Path, ranks: int, idle: float, **overrides: Any) -> dict[str, Any]:
    """Transactions per dense rank with a key (background loops off), then per idle second (on)."""
    settings = Settings(
        data_dir=folder / "data",
        database_url=url,
        model=str(build_tiny_model(folder / "model")),
        model_cache_dir=folder / "exports",
        auth="required",
        rate_limit=0,
        **overrides,
    )
    upgrade_to_head(url)
    runtime = Runtime(settings)
    begins = [0]
    event.listen(runtime.engine, "begin", lambda _connection: begins.__setitem__(0, begins[0] + 1))
    admin = create_engine(url, poolclass=None)
    with TestClient(create_app(settings, runtime)) as client:
        assert runtime.serving.wait_ready(120), runtime.serving.load_error
        _, key = ApiKeyService(runtime.sessions).create("write")
        headers = {"Authorization": f"Bearer {key}"}
        assert (
            client.post("/v1/corpora", json={"name": "c", "kind": "claim"}, headers=headers).status_code
            == 201
        )
        documents = [{"id": str(i), "text": t} for i, t in enumerate(TEXTS)]
        client.post("/v1/corpora/c/documents", json={"documents": documents}, headers=headers)
        body = {"query": "the moon landing", "k": 5, "mode": "dense"}
        client.post("/v1/corpora/c/rank", json=body, headers=headers)  # warm: key cache, opened corpus
        before_events, before_server = begins[0], server_transactions(admin)
        for _ in range(ranks):
            assert client.post("/v1/corpora/c/rank", json=body, headers=headers).status_code == 200
        rank_events, rank_server = begins[0] - before_events, server_transactions(admin) - before_server - 1
        result = {
            "ranks": ranks,
            "transactions_per_rank_events": round(rank_events / ranks, 2),
            "transactions_per_rank_server": round(rank_server / ranks, 2),
        }
    runtime.close()
    admin.dispose()
    return result


def measure_idle(url: str, folder: Path, idle: float) -> dict[str, Any]:
    """Transactions per second of a started, idle process (follower and embedded job worker on)."""
    settings = Settings(data_dir=folder / "idle-data", database_url=url, model=str(folder / "model"),
                        model_cache_dir=folder / "exports", auth="required", rate_limit=0)  # fmt: skip
    runtime = Runtime(settings)
    begins = [0]
    event.listen(runtime.engine, "begin", lambda _connection: begins.__setitem__(0, begins[0] + 1))
    admin = create_engine(url)
    with TestClient(create_app(settings, runtime)):
        assert runtime.serving.wait_ready(120), runtime.serving.load_error
        time.sleep(3)  # past start-up
        before_events, before_server = begins[0], server_transactions(admin)
        time.sleep(idle)
        events, server = begins[0] - before_events, server_transactions(admin) - before_server - 1
    runtime.close()
    admin.dispose()
    # The server count covers `idle` seconds plus the 11 s wait of the second reading.
    return {"idle_seconds": idle, "idle_transactions_per_second_events": round(events / (idle + 11), 2),
            "idle_transactions_per_second_server": round(server / (idle + 11), 2)}  # fmt: skip


def main() -> None:
    """Measure on a fresh schema of the database and print the numbers."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default=DEFAULT_URL)
    parser.add_argument("--ranks", type=int, default=50)
    parser.add_argument("--idle", type=float, default=10.0)
    parser.add_argument("--write", action="store_true", help=f"also write {OUTPUT.name} (with the before)")
    args = parser.parse_args()
    schema = f"hot_{uuid.uuid4().hex[:8]}"
    admin = create_engine(args.url)
    with admin.begin() as connection:
        connection.execute(text(f'CREATE SCHEMA "{schema}"'))
    try:
        url = schema_url(args.url, schema)
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            result = measure(url, folder, args.ranks, args.idle, sync_seconds=0, embedded_worker=False)
            result.update(measure_idle(url, folder, args.idle))
        print(json.dumps(result, indent=2))
        if args.write:
            payload = {"command": " ".join(["python", *sys.argv]), "before": BEFORE, "after": result}
            OUTPUT.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    finally:
        with admin.begin() as connection:
            connection.execute(text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        admin.dispose()


if __name__ == "__main__":
    main()
