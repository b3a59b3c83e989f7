"""The console's page and files as the server sends them (no browser: tests/console drives one)."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

from app.api.console import HERE
from tests.api.conftest import ClientFactory

TEST_IDS = (
    "api-key", "sign-in", "corpus", "query", "search", "result", "judge-relevant", "judge-not-relevant",
    "compare", "compare-left", "compare-right", "retrain", "job-status", "error", "mode", "alpha", "rerank",
    "compare-mode-left", "compare-mode-right", "compare-rerank-left", "compare-rerank-right", "rerank-score",
)  # fmt: skip


def test_the_page_is_the_same_for_everyone_and_carries_no_key(make_client: ClientFactory) -> None:
    client: TestClient = make_client(auth="required", admin_api_key="admin-from-env")
    anonymous = client.get("/console")
    assert anonymous.status_code == 200 and anonymous.headers["content-type"].startswith("text/html")
    with_key = client.get("/console", headers={"Authorization": "Bearer admin-from-env"})
    assert with_key.text == anonymous.text and "admin-from-env" not in with_key.text
    policy = anonymous.headers["content-security-policy"]
    assert "script-src 'self' 'unsafe-eval'" in policy and "frame-ancestors 'none'" in policy
    assert anonymous.headers["x-content-type-options"] == "nosniff"
    page = anonymous.text
    for test_id in TEST_IDS:  # the acceptance test's handles, one element each (x-for repeats `result`)
        found = re.findall(rf"""data-testid="{test_id}"|:data-testid="'{test_id}""", page)
        assert found, test_id
    # The policy allows no inline script: every script has a src, no element an on... handler.
    assert "<script>" not in page and not re.search(r"\son[a-z]+=", page)
    assert "x-html" not in page  # text is never rendered as HTML
    scripts = re.findall(r'src="([^"]+)"', page)
    for src in scripts:
        assert client.get(src).status_code == 200, src
    assert "/console" not in client.get("/openapi.json").json()["paths"]


def test_vendored_libraries_ship_with_their_licences(client: TestClient) -> None:
    vendor = HERE / "static" / "vendor"
    for library, bundle in (("alpinejs", "alpine.esm.min.js"), ("chartjs", "chart.umd.min.js")):
        assert (vendor / library / "LICENSE.md").read_text().startswith(("# MIT License", "The MIT License"))
        served = client.get(f"/console/static/vendor/{library}/{bundle}")
        assert served.status_code == 200 and served.content == (vendor / library / bundle).read_bytes()
    listed = (vendor / "README.md").read_text()
    assert "3.17.5" in listed and "4.6.1" in listed and "5.35.0" in listed and "2.5.4" in listed
    assert (vendor / "swagger-ui" / "LICENSE").read_text().lstrip().startswith("Apache License")
    assert "MIT License" in (vendor / "redoc" / "LICENSE").read_text()
    for page, bundle in (
        ("/docs", "swagger-ui/swagger-ui-bundle.js"),
        ("/redoc", "redoc/redoc.standalone.js"),
    ):
        html = client.get(page).text
        assert f"/console/static/vendor/{bundle}" in html and "cdn." not in html and "googleapis" not in html
        assert client.get(f"/console/static/vendor/{bundle}").status_code == 200
    for module in (HERE / "static" / "js").glob("*.js"):  # every module the page imports is served
        assert client.get(f"/console/static/js/{module.name}").status_code == 200
    assert client.get("/console/static/../__init__.py").status_code == 404
