"""Wait until the configured database accepts connections; the container entrypoint's first step.

The URL is the app's own (`Settings.resolved_database_url`: `PAIRANK_DATABASE_URL`, or the SQLite file
under `PAIRANK_DATA_DIR`), so this waits for exactly the database the service will use. SQLite is a
local file and needs no waiting. Only connection failures are retried: a malformed URL or a missing
driver fails at once instead of after the whole timeout.

Usage: python docker/wait_for_db.py [--timeout SECONDS]   (default: PAIRANK_DB_WAIT_TIMEOUT or 60)
Exit status: 0 when connected, 1 on timeout, 2 on a configuration error.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError
from sqlalchemy.pool import NullPool

DEFAULT_TIMEOUT_S = 60.0


def _log(message: str) -> None:
    print(f"wait_for_db: {message}", file=sys.stderr, flush=True)


def _first_line(error: BaseException) -> str:
    # psycopg errors span several lines (host, port, hint); the first says what went wrong.
    original = getattr(error, "orig", None) or error
    lines = str(original).strip().splitlines()
    return lines[0] if lines else type(original).__name__


def wait_for_database(url: str, timeout: float, interval: float = 1.0) -> int:
    """Try to connect and run `SELECT 1` until it works (0) or `timeout` seconds pass (1)."""
    parsed = make_url(url)
    # Never print the password, even in a failure message.
    shown = parsed.render_as_string(hide_password=True)
    if parsed.get_backend_name() == "sqlite":
        _log(f"{shown} is a local SQLite file; nothing to wait for")
        return 0
    connect_args: dict[str, Any] = {}
    if parsed.get_backend_name() == "postgresql":
        # Bound each attempt, so an unroutable host cannot eat the whole budget in one try.
        connect_args["connect_timeout"] = max(1, min(5, int(timeout)))
    engine = create_engine(url, poolclass=NullPool, connect_args=connect_args)
    deadline = time.monotonic() + timeout
    attempt = 0
    try:
        while True:
            attempt += 1
            try:
                with engine.connect() as connection:
                    connection.execute(text("SELECT 1"))
            except DBAPIError as error:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    _log(
                        f"{shown} still unreachable after {timeout:g}s and {attempt} attempt(s): "
                        f"{_first_line(error)}"
                    )
                    return 1
                _log(f"{shown} not reachable yet ({_first_line(error)}); retrying")
                time.sleep(min(interval, remaining))
            else:
                _log(f"{shown} accepts connections (attempt {attempt})")
                return 0
    finally:
        engine.dispose()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Wait until the configured database accepts connections.")
    parser.add_argument(
        "--timeout",
        type=float,
        default=float(os.environ.get("PAIRANK_DB_WAIT_TIMEOUT") or DEFAULT_TIMEOUT_S),
        help="seconds to keep trying (default: PAIRANK_DB_WAIT_TIMEOUT or 60)",
    )
    args = parser.parse_args(argv)
    try:
        # Imported here so that a broken setting is reported as such, not as a traceback at import.
        from app.config import Settings

        url = Settings().resolved_database_url
        return wait_for_database(url, args.timeout)
    except (ArgumentError, NoSuchModuleError, ValueError) as error:
        _log(f"configuration error: {error}")
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
