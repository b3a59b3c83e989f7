"""Browser fixtures: Debian's Chromium driven by Playwright against a real `pairank serve` process.

Playwright's own browser downloads fail here, so the browser is the system's (`apt-get install
chromium`, which `.ci/run` does); without it, or without the playwright package, these tests skip and
say why. The server runs with keys required, a bootstrap admin key and the tiny model, on SQLite (the
API under the console is tested on every database in tests/api).
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.usecases.api_keys import new_key_text
from tests.api.conftest import CLAIMS
from tests.conftest import process_model_env
from tests.helpers.processes import Server

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome")


def chromium_path() -> str | None:
    """The system's Chromium (PLAYWRIGHT_CHROMIUM overrides), or None."""
    configured = os.environ.get("PLAYWRIGHT_CHROMIUM")
    if configured:
        return configured
    return next((found for name in CHROMIUM_NAMES if (found := shutil.which(name))), None)


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """One headless Chromium for the session."""
    try:
        from playwright.sync_api import expect, sync_playwright
    except ImportError:
        pytest.skip("the playwright package is not installed (pip install -e '.[dev]')")
    executable = chromium_path()
    if executable is None:
        pytest.skip("Chromium is not installed: `apt-get install chromium` (.ci/run does it when root)")
    # expect() polls 5 s by default (apart from the page's timeout): on a CI box running both xdist
    # workers beside the server, /redoc rendered the whole API description in more than that.
    expect.set_options(timeout=20_000)
    playwright = sync_playwright().start()
    # Chromium refuses to run as root inside its sandbox (containers, CI runners).
    args = ["--no-sandbox"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []
    launched = playwright.chromium.launch(executable_path=executable, args=args)
    yield launched
    launched.close()
    playwright.stop()


@dataclass
class Console:
    """The running service: its URL, an admin key, an HTTP client for set-up and checks, and its
    environment (for the CLI's commands on the same data, `pairank models register`)."""

    url: str
    admin_key: str
    http: httpx.Client
    keys: dict[str, str] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)

    def headers(self, key: str | None = None) -> dict[str, str]:
        """The Authorization header of a key (the admin key by default)."""
        return {"Authorization": f"Bearer {key or self.admin_key}"}

    def key(self, scope: str, corpora: list[str] | None = None) -> str:
        """A new stored key of this scope."""
        body: dict[str, Any] = {"scope": scope, "name": f"{scope} tester"}
        if corpora:
            body["corpora"] = corpora
        response = self.http.post("/admin/keys", json=body, headers=self.headers())
        assert response.status_code == 201, response.text
        return str(response.json()["key"])

    def corpus(self, pairs: list[dict[str, Any]] | None = None, scale: str = "binary") -> str:
        """A new corpus with the five test claims (and these pairs), judged on `scale`; its name."""
        name = f"claims-{uuid.uuid4().hex[:8]}"
        body = {"name": name, "kind": "claim", "judgement_scale": scale}
        created = self.http.post("/v1/corpora", json=body, headers=self.headers())
        assert created.status_code == 201, created.text
        documents = [{"id": i, "text": t, "metadata": {"lang": "en"}} for i, t in CLAIMS]
        upserted = self.http.post(
            f"/v1/corpora/{name}/documents", json={"documents": documents}, headers=self.headers()
        )
        assert upserted.status_code == 200, upserted.text
        if pairs:
            stored = self.http.post(
                f"/v1/corpora/{name}/pairs", json={"pairs": pairs}, headers=self.headers()
            )
            assert stored.status_code == 201, stored.text
        return name

    def pairs(self, corpus: str) -> list[dict[str, Any]]:
        """The corpus's stored pairs, as the API lists them."""
        return list(self.http.get(f"/v1/corpora/{corpus}/pairs", headers=self.headers()).json()["pairs"])


@pytest.fixture(scope="session")
def console(
    browser: Any, tmp_path_factory: pytest.TempPathFactory, tiny_model_dir: Path, export_cache_dir: Path
) -> Iterator[Console]:
    """A `pairank serve` with keys required (the browser fixture first: no server when it skips)."""
    folder = tmp_path_factory.mktemp("console")
    admin_key = new_key_text()
    env = {**os.environ, "PAIRANK_DATA_DIR": str(folder / "data"),
           **process_model_env(tiny_model_dir, export_cache_dir), "PAIRANK_AUTH": "required",
           "PAIRANK_BOOTSTRAP_ADMIN_KEY": admin_key, "PAIRANK_RATE_LIMIT": "0"}  # fmt: skip
    env.pop("PAIRANK_DATABASE_URL", None)
    env.pop("PAIRANK_ADMIN_API_KEY", None)
    server = Server(env, log_file=folder / "server.log")
    try:
        yield Console(f"http://127.0.0.1:{server.port}", admin_key, server.http, env=env)
    finally:
        server.kill()


@dataclass
class Watched:
    """A page and what its browser reported: console errors and uncaught exceptions."""

    page: Any
    errors: list[str] = field(default_factory=list)
    expected: list[str] = field(default_factory=list)  # substrings of errors a test provokes on purpose

    def unexpected(self) -> list[str]:
        """Errors that no expected substring explains."""
        return [e for e in self.errors if not any(part in e for part in self.expected)]


@pytest.fixture
def watched(browser: Any, console: Console) -> Iterator[Watched]:
    """A fresh page (its own session storage) whose console must stay free of errors."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.set_default_timeout(30_000)
    watch = Watched(page)
    page.on("console", lambda message: watch.errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: watch.errors.append(f"uncaught: {error}"))
    page.goto(f"{console.url}/console")
    yield watch
    context.close()
    assert not watch.unexpected(), f"errors in the browser console: {watch.unexpected()}"


def sign_in(watch: Watched, key: str) -> None:
    """Sign in through the form and wait for the corpus list."""
    page = watch.page
    page.get_by_test_id("api-key").fill(key)
    page.get_by_test_id("sign-in").click()
    page.get_by_test_id("corpus").wait_for()


def choose(watch: Watched, corpus: str) -> None:
    """Pick a corpus (made before signing in, so the list has it)."""
    watch.page.get_by_test_id("corpus").select_option(corpus)
    watch.page.get_by_test_id("counts").wait_for()
