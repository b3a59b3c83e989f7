"""Real `pairank serve` processes for the client's tests: the tiny model, keys required, an admin key.

One server is shared by the package's modules (each uses corpora of its own names); a module that needs
other settings (a rate limit, a broken model, its own PostgreSQL) starts its own with `serve`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

import pytest

from pairank.client import Client
from tests.conftest import process_model_env
from tests.helpers.processes import Server

ADMIN_KEY = "demo-key"  # PAIRANK_ADMIN_API_KEY, as in the README's walk-through and the client's guide
Serve = Callable[..., Server]


@pytest.fixture(scope="package")
def serve(
    tmp_path_factory: pytest.TempPathFactory, tiny_model_dir: Path, export_cache_dir: Path
) -> Iterator[Serve]:
    """Start servers: `serve(database_url=None, ready=True, **PAIRANK_settings)` (SQLite by default)."""
    started: list[Server] = []

    def start(database_url: str | None = None, *, ready: bool = True, **settings: str) -> Server:
        folder = tmp_path_factory.mktemp("client-server")
        env = {
            **os.environ,
            "PAIRANK_DATA_DIR": str(folder / "data"),
            "PAIRANK_DATABASE_URL": database_url or f"sqlite:///{folder / 'pairank.db'}",
            **process_model_env(tiny_model_dir, export_cache_dir),
            "PAIRANK_AUTH": "required",
            "PAIRANK_ADMIN_API_KEY": ADMIN_KEY,
            "PAIRANK_RATE_LIMIT": "0",
            **{f"PAIRANK_{key.upper()}": value for key, value in settings.items()},
        }
        started.append(Server(env, log_file=folder / "serve.log", ready=ready))
        return started[-1]

    yield start
    for server in started:
        if server.process.poll() is None:
            server.kill()


@pytest.fixture(scope="package")
def server(serve: Serve) -> Server:
    """The server the package's modules share."""
    return serve()


def url_of(server: Server) -> str:
    """A server's base URL."""
    return f"http://127.0.0.1:{server.port}"


@pytest.fixture(scope="package")
def admin(server: Server) -> Iterator[Client]:
    """A client with the admin key on the shared server."""
    with Client(url_of(server), api_key=ADMIN_KEY) as client:
        yield client


T = TypeVar("T")


def in_own_thread(run: Callable[[], T]) -> T:
    """`run()` in a thread of its own, which has no event loop: a test file run earlier in the same
    process (the console's Playwright sync API) can leave this thread marked as running one, and then
    `asyncio.run` refuses to start."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(run).result()
