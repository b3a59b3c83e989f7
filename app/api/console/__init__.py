"""The relevance workbench: a browser console at `/console`, served by the API process itself.

A presentation plane beside the JSON API: the page is one Jinja2 template (split into partials) with
Alpine.js and Chart.js vendored under `static/vendor` (no Node build step, nothing fetched at run time).
In the browser it calls the public API with the user's key, which lives in `sessionStorage` only: the
server renders no key and no data, so the page is the same for everyone and is rendered once.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from fastapi import APIRouter, FastAPI
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles
from jinja2 import Environment, FileSystemLoader, select_autoescape

from pairank import __version__

HERE = Path(__file__).parent
STATIC_PATH = "/console/static"
# Scripts only from this origin; Alpine.js evaluates its attribute expressions with `new Function`
# ('unsafe-eval'), which is why the console never renders text as HTML (x-text only, no x-html).
POLICY = (
    "default-src 'self'; script-src 'self' 'unsafe-eval'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
HEADERS = {
    "Content-Security-Policy": POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}

router = APIRouter(include_in_schema=False)


@lru_cache(maxsize=1)
def page() -> str:
    """The console's HTML (the same for every caller)."""
    environment = Environment(
        loader=FileSystemLoader(HERE / "templates"), autoescape=select_autoescape(["html"]), auto_reload=False
    )
    return environment.get_template("console.html").render(static=STATIC_PATH, version=__version__)


@router.get("/console", response_class=HTMLResponse)
def console() -> HTMLResponse:
    """The workbench page; sign-in happens in the browser with an API key."""
    return HTMLResponse(page(), headers=HEADERS)


def install_console(app: FastAPI) -> None:
    """Serve the console page and its static files (scripts, styles, vendored libraries)."""
    app.include_router(router)
    app.mount(STATIC_PATH, StaticFiles(directory=HERE / "static"), name="console-static")
