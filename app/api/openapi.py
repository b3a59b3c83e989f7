"""The OpenAPI schema as the contract: limits from settings, and the rules every request body obeys.

FastAPI derives the schema from the models; what it cannot know is added here:
- limits that are settings (`PAIRANK_MAX_TEXT_CHARS`, `..._PER_REQUEST`): fields marked
  `x-pairank-limit` get the configured `maxLength` / `maxItems`;
- every integer in a request must fit 64 bits (the JSON guard refuses the rest): integers get bounds;
- the 405 answers carry an `Allow` header listing every method of the path;
- a worked example of every request body (app/schemas/examples.py);
- the API-key scope each operation needs (`x-pairank-scope`, and a sentence in its description).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from fastapi import FastAPI, Request
from fastapi.openapi.utils import get_openapi
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from app.config import Settings
from app.schemas.common import INT64_MAX, INT64_MIN, LIMIT, STRING_PATTERN
from app.schemas.examples import REQUEST_EXAMPLES


def _walk(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value)


def _referenced(schema: dict[str, Any], roots: list[Any]) -> set[str]:
    """Names of the component schemas reachable from the given nodes."""
    components = schema.get("components", {}).get("schemas", {})
    seen: set[str] = set()
    pending = list(roots)
    while pending:
        for node in _walk(pending.pop()):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/components/schemas/"):
                name = ref.rsplit("/", 1)[1]
                if name not in seen and name in components:
                    seen.add(name)
                    pending.append(components[name])
    return seen


def contract_schema(app: FastAPI, settings: Settings) -> dict[str, Any]:
    """The app's OpenAPI schema with settings limits and request-wide rules filled in."""
    schema = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
    components = schema.get("components", {}).get("schemas", {})
    for node in _walk(components):
        limit = node.get(LIMIT)
        if isinstance(limit, str):
            # An optional field is anyOf [its type, null]: the bound belongs on the non-null branch.
            for target in [b for b in node.get("anyOf", []) if b.get("type") != "null"] or [node]:
                key = "maxItems" if target.get("type") == "array" else "maxLength"
                target[key] = int(getattr(settings, limit))
    request_roots: list[Any] = []
    for path in schema.get("paths", {}).values():
        for operation in path.values():
            request_roots += [operation.get("requestBody", {}), operation.get("parameters", [])]
    request_nodes = [components[name] for name in _referenced(schema, request_roots)] + request_roots
    for root in request_nodes:
        for node in _walk(root):
            if node.get("type") == "string" and not {"pattern", "enum", "format", "const"} & set(node):
                node["pattern"] = STRING_PATTERN  # no NUL: no text column can store one
            if node.get("type") == "integer":
                node.setdefault("minimum", INT64_MIN)
                node.setdefault("maximum", INT64_MAX)
    _declare_scopes(schema)
    for model, example in REQUEST_EXAMPLES.items():
        if model.__name__ in components:
            components[model.__name__]["examples"] = [example]
    return schema


def operation_scope(operation: dict[str, Any]) -> str | None:
    """The key scope an operation needs, from its security requirement (None: public)."""
    requirements = operation.get("security", [])
    scopes = sorted({scope for each in requirements for names in each.values() for scope in names})
    return ",".join(scopes) or None


def _declare_scopes(schema: dict[str, Any]) -> None:
    # Scopes are only defined for OAuth2 in OpenAPI: say them again as `x-pairank-scope` and in words.
    for path in schema.get("paths", {}).values():
        for operation in path.values():
            scope = operation_scope(operation)
            if scope is not None:
                operation["x-pairank-scope"] = scope
                text = operation.get("description", "")
                operation["description"] = f"{text}\n\nNeeds a key with scope `{scope}`.".strip()


_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE")


async def _method_not_allowed(request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, StarletteHTTPException)
    if error.status_code != 405:
        return JSONResponse({"detail": error.detail}, status_code=error.status_code, headers=error.headers)
    # Starlette names only the methods of the first route matching the path; list all of them.
    methods = {
        method
        for method in _METHODS
        if any(
            route.matches({**request.scope, "method": method})[0] == Match.FULL
            for route in request.app.routes
        )
    }
    allow = ", ".join(sorted(methods))
    detail = f"method {request.method} not allowed on {request.url.path}; allowed: {allow}"
    return JSONResponse({"detail": detail}, status_code=405, headers={"Allow": allow})


def install_contract(app: FastAPI, settings: Settings) -> None:
    """Serve the contract schema at /openapi.json and complete the 405 answers."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = contract_schema(app, settings)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    app.add_exception_handler(StarletteHTTPException, _method_not_allowed)
