"""`/docs` (Swagger UI) and `/redoc` (ReDoc) with their scripts, styles and icon served from the package
(vendored from npm beside the console's libraries): they render with no request to another host."""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.openapi.docs import (
    get_redoc_html,
    get_swagger_ui_html,
    get_swagger_ui_oauth2_redirect_html,
    swagger_ui_default_parameters,
)
from fastapi.responses import HTMLResponse

from app.api.console import STATIC_PATH

VENDOR = f"{STATIC_PATH}/vendor"
OAUTH2_REDIRECT = "/docs/oauth2-redirect"
# No `validatorUrl`: Swagger UI would otherwise send the schema to validator.swagger.io for a badge.
SWAGGER_PARAMETERS = {**swagger_ui_default_parameters, "validatorUrl": None}


def install_docs(app: FastAPI) -> None:
    """Serve /docs and /redoc from vendored assets (the app is built with docs_url=redoc_url=None)."""
    openapi_url = app.openapi_url or "/openapi.json"
    title = app.title

    @app.get("/docs", include_in_schema=False)
    def swagger_ui() -> HTMLResponse:
        """Swagger UI, offline."""
        return get_swagger_ui_html(
            openapi_url=openapi_url,
            title=f"{title} - Swagger UI",
            swagger_js_url=f"{VENDOR}/swagger-ui/swagger-ui-bundle.js",
            swagger_css_url=f"{VENDOR}/swagger-ui/swagger-ui.css",
            swagger_favicon_url=f"{VENDOR}/swagger-ui/favicon-32x32.png",
            oauth2_redirect_url=OAUTH2_REDIRECT,
            swagger_ui_parameters=SWAGGER_PARAMETERS,
        )

    @app.get(OAUTH2_REDIRECT, include_in_schema=False)
    def swagger_ui_redirect() -> HTMLResponse:
        """Swagger UI's OAuth2 redirect page."""
        return get_swagger_ui_oauth2_redirect_html()

    @app.get("/redoc", include_in_schema=False)
    def redoc() -> HTMLResponse:
        """ReDoc, offline (system fonts: no Google Fonts)."""
        return get_redoc_html(
            openapi_url=openapi_url,
            title=f"{title} - ReDoc",
            redoc_js_url=f"{VENDOR}/redoc/redoc.standalone.js",
            redoc_favicon_url=f"{VENDOR}/swagger-ui/favicon-32x32.png",
            with_google_fonts=False,
        )
