"""Importing the client loads httpx, pydantic and the API's models: no model, index, database or web
framework code, and no numpy (checked in a fresh interpreter, where nothing else was imported before)."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys

from pairank.client import AsyncClient, Client
from pairank.client.api import Api

HEAVY = ("torch", "faiss", "sentence_transformers", "sqlalchemy", "fastapi", "starlette", "numpy", "tqdm")
# httpx and pydantic, with what they import themselves (httpx its command line's click, rich and pygments
# when they are installed); and the project's own packages (the API's models).
ALLOWED = {
    "httpx", "httpcore", "h11", "h2", "anyio", "sniffio", "idna", "certifi", "socksio", "brotli", "zstandard",
    "click", "rich", "pygments",
    "pydantic", "pydantic_core", "typing_extensions", "annotated_types", "typing_inspection",
    "pairank", "app", "indexes", "evaluation",
}  # fmt: skip
PROBE = """
import json, sys
before = set(sys.modules)
import pairank.client
from pairank.client import Client
Client("http://127.0.0.1:9").close()
loaded = {name.split(".")[0] for name in set(sys.modules) - before}
standard = set(sys.stdlib_module_names) | {"_distutils_hack"}
print(json.dumps(sorted(n for n in loaded - standard if not n.startswith("_sysconfigdata"))))
"""


def test_importing_the_client_loads_httpx_and_pydantic_only() -> None:
    result = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60, check=True
    )
    loaded = set(json.loads(result.stdout))
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))
    assert loaded <= ALLOWED, sorted(loaded - ALLOWED)
    assert {"httpx", "pydantic", "pairank", "app"} <= loaded  # the probe did import the client


def test_both_clients_offer_every_operation_from_one_definition() -> None:
    names = [name for name in vars(Api) if not name.startswith("_")]
    assert len(names) >= 40
    blocking, awaiting = Client("http://127.0.0.1:9"), AsyncClient("http://127.0.0.1:9")
    for name in names:
        assert getattr(Client, name) is getattr(AsyncClient, name), name  # the one descriptor
        method, coroutine = getattr(blocking, name), getattr(awaiting, name)
        assert inspect.signature(method) == inspect.signature(coroutine), name
        assert method.__doc__ and method.__doc__ == coroutine.__doc__, f"{name} has no docstring"
    blocking.close()
