"""pg_dump and pg_restore for the tests: a test's schema dumped, restored into a fresh database.

The tests' databases are schemas of one server (tests/conftest.py), so a test dumps its own schema;
an operator dumps the whole database (docs/guides/operations.md), which holds the same tables.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import uuid
from pathlib import Path

from sqlalchemy import create_engine, text
from sqlalchemy.engine import URL, make_url


def _connection(url: URL) -> tuple[list[str], dict[str, str]]:
    """libpq arguments (host, port, user, database) and environment for a SQLAlchemy URL."""
    host = url.host or str(url.query.get("host") or "")
    args = ["-h", host, "-U", url.username or "postgres", "-d", url.database or "postgres"]
    if url.port:
        args += ["-p", str(url.port)]
    env = {**os.environ, **({"PGPASSWORD": url.password} if url.password else {})}
    return args, env


def schema_of(url: URL) -> str:
    """The first schema of the URL's search_path (the test's own)."""
    options = str(url.query.get("options") or "")
    found = re.search(r"search_path=([^,\s]+)", options)
    assert found, f"no search_path in {url}"
    return found.group(1)


def server_major(url: URL) -> int:
    """The server's major version (pg_dump must be at least as new, and matches it best)."""
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            return int(connection.execute(text("SHOW server_version_num")).scalar_one()) // 10000
    finally:
        engine.dispose()


def pg_tool(name: str, major: int) -> str | None:
    """pg_dump or pg_restore of the server's major version: the pgserver wheel's, Debian's, or PATH's."""
    candidates = [f"/usr/lib/postgresql/{major}/bin/{name}", shutil.which(name)]
    try:
        import pgserver

        candidates.insert(0, str(Path(pgserver.__file__).parent / "pginstall" / "bin" / name))
    except ImportError:
        pass
    for candidate in candidates:
        if candidate and Path(candidate).is_file():
            version = subprocess.run([candidate, "--version"], capture_output=True, text=True, check=False)
            found = re.search(r"(\d+)\.", version.stdout)
            if found and int(found.group(1)) == major:
                return candidate
    return None


def dump(url_text: str, target: Path) -> None:
    """pg_dump the test's schema in the custom format."""
    url = make_url(url_text)
    args, env = _connection(url)
    tool = pg_tool("pg_dump", server_major(url))
    assert tool, "no pg_dump of the server's version"
    command = [tool, *args, "-n", schema_of(url), "--format=custom", "-f", str(target)]
    subprocess.run(command, env=env, check=True, capture_output=True)


def restore_into_new_database(url_text: str, source: Path, extensions: tuple[str, ...] = ()) -> str:
    """Create a fresh database on the same server, pg_restore the dump into it; its URL (same schema)."""
    url = make_url(url_text)
    name = f"restore_{uuid.uuid4().hex[:10]}"
    admin = create_engine(url.set(query={k: v for k, v in url.query.items() if k != "options"}))
    try:
        with admin.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
            connection.execute(text(f'CREATE DATABASE "{name}"'))
    finally:
        admin.dispose()
    restored = url.set(database=name)
    if extensions:  # pgvector lives in `public`, outside the dumped schema
        fresh = create_engine(restored.set(query={k: v for k, v in url.query.items() if k != "options"}))
        try:
            with fresh.begin() as connection:
                for extension in extensions:
                    connection.execute(text(f"CREATE EXTENSION IF NOT EXISTS {extension} SCHEMA public"))
        finally:
            fresh.dispose()
    args, env = _connection(restored)
    tool = pg_tool("pg_restore", server_major(url))
    assert tool, "no pg_restore of the server's version"
    command = [tool, *args, "--no-owner", "--exit-on-error", "--single-transaction", str(source)]
    subprocess.run(command, env=env, check=True, capture_output=True)
    return restored.render_as_string(hide_password=False)


def drop_database(url_text: str) -> None:
    """Drop a database a restore created (closing its connections)."""
    url = make_url(url_text)
    admin = create_engine(
        url.set(database="postgres", query={k: v for k, v in url.query.items() if k == "host"})
    )
    try:
        with admin.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{url.database}" WITH (FORCE)'))
    finally:
        admin.dispose()
