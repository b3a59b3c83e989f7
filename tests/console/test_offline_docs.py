"""`/docs` and `/redoc` render in a real browser with every request to another host blocked: their
scripts, styles and icon come from the package."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from playwright.sync_api import expect

from tests.console.conftest import Console, Watched


def block_other_hosts(watch: Watched, console: Console) -> list[str]:
    """Abort every request to another host; returns the list they are recorded in."""
    own = urlsplit(console.url).netloc
    blocked: list[str] = []

    def handle(route: Any) -> None:
        url = route.request.url
        if url.startswith(("data:", "blob:")) or urlsplit(url).netloc == own:
            route.continue_()
        else:
            blocked.append(url)
            route.abort()

    watch.page.route("**/*", handle)
    return blocked


def test_swagger_ui_and_redoc_render_offline(console: Console, watched: Watched) -> None:
    blocked = block_other_hosts(watched, console)
    page = watched.page
    page.goto(f"{console.url}/docs")
    expect(page.locator(".swagger-ui .opblock").first).to_be_visible()
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("pairank")
    assert page.locator(".swagger-ui .opblock-summary-path").count() > 30
    page.goto(f"{console.url}/redoc")
    expect(page.locator("h1").first).to_contain_text("pairank")
    expect(page.get_by_role("menuitem").first).to_be_visible()
    expect(page.get_by_text("/v1/corpora/{name}/judgements/agreement").first).to_be_attached()
    assert blocked == []
