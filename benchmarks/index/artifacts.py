"""Model files in PostgreSQL: bytes, chunks and seconds to store, fetch and verify a model.

On a fresh schema of the given database (dropped at the end), the database artifact store saves a model
folder in one registering transaction, then an empty cache fetches it back (every file checked against
its sha256), then a second load only verifies the cached copy, then a second model with the same files
is stored (shared content is not stored twice). Measured for the bundled all-MiniLM-L6-v2 and the tests'
tiny model. Prints one JSON object and writes it to benchmarks/artifacts.json.

    .venv/bin/python benchmarks/index/artifacts.py [--url postgresql+psycopg://postgres@127.0.0.1:5432/test]
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

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from app.db.engine import make_engine, make_session_factory, transaction  # noqa: E402
from app.db.migrate import upgrade_to_head  # noqa: E402
from app.db.repositories.model_versions import ModelRepository  # noqa: E402
from app.stores.artifacts.database import DatabaseArtifactStore  # noqa: E402
from app.stores.artifacts.port import ArtifactRef  # noqa: E402
from pairank.models import bundled_model_path  # noqa: E402
from tests.helpers.tiny_model import build_tiny_model  # noqa: E402

DEFAULT_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
OUTPUT = Path(__file__).resolve().parents[1] / "artifacts.json"


def measure(url: str, name: str, folder: Path, cache: Path) -> dict[str, Any]:
    """Store, fetch, verify and store again one model folder."""
    engine = make_engine(url)
    sessions = make_session_factory(engine)
    store = DatabaseArtifactStore(sessions, cache)

    def save(version: str) -> tuple[ArtifactRef, float]:
        started = time.perf_counter()
        with transaction(sessions) as session:
            ModelRepository(session).add(
                version=version, model_id=name, path=str(folder), source="configured", weights_sha256=None
            )
            stored = store.save(session, version, folder)
        return ArtifactRef(version, stored.sha256, str(folder)), time.perf_counter() - started

    ref, store_seconds = save(f"{name}@1")
    with engine.connect() as connection:
        counted = text("SELECT count(*), coalesce(sum(length(data)), 0) FROM blob_chunks")
        chunks = connection.execute(counted).one()
        on_disk = connection.execute(text("SELECT pg_total_relation_size('blob_chunks')")).scalar_one()
    started = time.perf_counter()
    store.folder(ref)
    fetch_seconds = time.perf_counter() - started
    started = time.perf_counter()
    store.folder(ref)
    verify_seconds = time.perf_counter() - started
    _, again_seconds = save(f"{name}@2")
    with sessions() as session:
        stored_after_second = store.stored_bytes(session)
    engine.dispose()
    files = [p for p in folder.rglob("*") if p.is_file() and not p.name.startswith(".")]
    return {
        "model": name,
        "files": len(files),
        "bytes": sum(p.stat().st_size for p in files),
        "chunks": int(chunks[0]),
        "chunk_bytes": int(chunks[1]),
        "postgres_bytes_on_disk": int(on_disk),
        "store_seconds": round(store_seconds, 3),
        "fetch_seconds": round(fetch_seconds, 3),
        "verify_cached_seconds": round(verify_seconds, 3),
        "store_same_files_again_seconds": round(again_seconds, 3),
        "stored_bytes_after_second_model": stored_after_second,
    }


def main() -> None:
    """Measure both models, each on its own fresh schema."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default=DEFAULT_URL)
    args = parser.parse_args()
    base = make_url(args.url)
    admin = create_engine(base)
    results = []
    with tempfile.TemporaryDirectory() as scratch:
        tiny = build_tiny_model(Path(scratch) / "tiny")
        for name, folder in (("all-MiniLM-L6-v2", bundled_model_path()), ("tiny", tiny)):
            schema = f"bench_{uuid.uuid4().hex[:10]}"
            with admin.begin() as connection:
                connection.execute(text(f'CREATE SCHEMA "{schema}"'))
            url = base.set(query={**base.query, "options": f"-csearch_path={schema}"})
            rendered = url.render_as_string(hide_password=False)
            try:
                upgrade_to_head(rendered)
                results.append(measure(rendered, name, folder, Path(scratch) / f"cache-{name}"))
            finally:
                with admin.begin() as connection:
                    connection.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
    admin.dispose()
    with create_engine(base).connect() as connection:
        server = connection.execute(text("SHOW server_version")).scalar_one()
    report = {"database": f"PostgreSQL {server}", "results": results}
    OUTPUT.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
