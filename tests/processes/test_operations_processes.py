"""Keys, metrics and logs in real `pairank serve` processes: several workers, JSON logs, the keys CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families

from app.usecases.api_keys import new_key_text
from tests.helpers.processes import ServerFactory


def _requests_total(text: str, method: str, route: str, status: str) -> float:
    wanted = {"method": method, "route": route, "status": status}
    return sum(
        sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == "pairank_http_requests_total" and sample.labels == wanted
    )


def test_two_workers_keys_metrics_and_json_logs(start_server: ServerFactory, tmp_path: Path) -> None:
    bootstrap = new_key_text()
    log_file = tmp_path / "server.log"
    server = start_server(
        workers=2, log_file=log_file, auth="required", bootstrap_admin_key=bootstrap, log_format="json"
    )
    base = f"http://127.0.0.1:{server.port}"
    assert httpx.get(f"{base}/v1/corpora").status_code == 401
    admin = {"Authorization": f"Bearer {bootstrap}"}
    created = httpx.post(f"{base}/admin/keys", json={"scope": "write", "name": "bot"}, headers=admin).json()
    writer = {"Authorization": f"Bearer {created['key']}"}
    assert (
        httpx.post(f"{base}/v1/corpora", json={"name": "c", "kind": "claim"}, headers=writer).status_code
        == 201
    )
    sent = 60
    for i in range(sent):  # a new connection each time, so that both workers answer
        assert (
            httpx.get(f"{base}/v1/corpora", headers={**writer, "X-Request-ID": f"r-{i}"}).status_code == 200
        )
    # Whichever worker answers the scrape, it counts every worker's requests.
    for _ in range(4):
        scraped = httpx.get(f"{base}/metrics", headers=writer)
        assert scraped.status_code == 200
        assert _requests_total(scraped.text, "GET", "/v1/corpora", "200") == sent
    server.kill(15)

    text = log_file.read_text()
    assert bootstrap not in text and created["key"] not in text  # key ids only, never keys
    lines = [json.loads(line) for line in text.splitlines() if line.startswith("{")]
    assert len(lines) > sent and all({"time", "level", "logger", "message", "pid"} <= set(e) for e in lines)
    access = [e for e in lines if e["logger"] == "pairank.access" and e["route"] == "/v1/corpora"]
    ours = {e["request_id"]: e for e in access if e["request_id"].startswith("r-")}
    assert len(ours) == sent
    entry: dict[str, Any] = ours["r-7"]
    assert entry["status"] == 200 and entry["method"] == "GET" and entry["key_id"] == created["id"]
    assert entry["duration_ms"] > 0 and entry["model"].startswith("tiny-model")
    refused = [e for e in access if e["status"] == 401]
    assert refused and refused[0]["key_id"] is None
    by_worker = Counter(e["pid"] for e in ours.values())
    assert len(by_worker) == 2, f"one worker answered everything: {by_worker}"  # so the sum above is real


def _keys(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pairank.cli", "keys", *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=120, check=False)


def test_keys_command(database_url: str, tmp_path: Path) -> None:
    env = {**os.environ, "PAIRANK_DATABASE_URL": database_url, "PAIRANK_DATA_DIR": str(tmp_path)}
    created = _keys(env, "create", "--scope", "write", "--corpus", "claims", "--name", "tipline bot")
    assert created.returncode == 0, created.stderr
    key = json.loads(created.stdout)
    assert (
        key["scope"] == "write"
        and key["corpora"] == ["claims"]
        and key["key"].startswith(f"prk_{key['id']}_")
    )
    assert "not shown again" in created.stderr
    listed = _keys(env, "list")
    assert key["id"] in listed.stdout and "active" in listed.stdout and key["key"] not in listed.stdout
    assert _keys(env, "revoke", key["id"]).returncode == 0
    assert "revoked" in _keys(env, "list").stdout
    missing = _keys(env, "revoke", "ffffffffffff")
    assert missing.returncode == 1 and "does not exist" in missing.stderr
    assert _keys(env, "create", "--scope", "root").returncode == 2
    generated = _keys(env, "generate").stdout.strip()
    assert generated.startswith("prk_") and len(generated) == 4 + 12 + 1 + 43
