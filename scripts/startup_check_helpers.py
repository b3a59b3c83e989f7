"""The Python half of scripts/startup_check.sh: database set-up, readiness polling and the smoke requests.

Kept out of the shell script so that the HTTP and SQL parts are plain, linted Python; each subcommand
prints what it did and exits non-zero with a one-line reason on failure.

    free-port                       print a free TCP port on 127.0.0.1
    create-db ADMIN_URL NAME        drop database NAME if it exists, then create it empty
    drop-db ADMIN_URL NAME          drop database NAME if it exists
    database-url ADMIN_URL NAME     print ADMIN_URL with its database replaced by NAME
    check-migrated DATABASE_URL     the database is at the newest migration (alembic head)
    wait-ready BASE_URL PID SECS    poll /health then /ready until 200; fail early if PID exits
    healthcheck up|down             run the Dockerfile's own HEALTHCHECK command (port: PAIRANK_PORT)
                                    and check it reports healthy (up) or unhealthy (down)
    smoke BASE_URL                  create a corpus, upsert documents, rank, check the best match
    rank BASE_URL                   rank against the corpus `smoke` created (after a restart)
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

CORPUS = "startup-check"
DOCUMENTS = [
    {"id": "vaccine-dna", "text": "COVID-19 vaccines alter your DNA."},
    {"id": "5g-covid", "text": "5G cell towers spread the coronavirus."},
    {"id": "moon-landing", "text": "The Apollo moon landings were filmed in a studio."},
    {"id": "bats-blind", "text": "Bats are completely blind."},
    {"id": "great-wall", "text": "The Great Wall of China is visible from space with the naked eye."},
]
# A paraphrase sharing almost no words with its claim, so only a working model ranks it first.
QUERY = "Are mobile phone masts transmitting covid?"
EXPECTED_FIRST = "5g-covid"
# The bundled default the image ships; the check must exercise that model, not a test model.
DEFAULT_MODEL_VERSION_PREFIX = "sentence-transformers/all-MiniLM-L6-v2@53aa51172d14"


DOCKERFILE = Path(__file__).resolve().parents[1] / "Dockerfile"


class CheckFailed(Exception):
    """A step of the start-up check failed; the message says which and why."""


def _request(
    method: str, url: str, body: Any = None, timeout: float = 120.0, *, keyed: bool = True
) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method)
    request.add_header("content-type", "application/json")
    # The container runs with keys required; the check bootstraps an admin key and uses it.
    key = os.environ.get("PAIRANK_BOOTSTRAP_ADMIN_KEY")
    if keyed and key:
        request.add_header("Authorization", f"Bearer {key}")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            status, raw = response.status, response.read()
    except urllib.error.HTTPError as error:
        status, raw = error.code, error.read()
    try:
        return status, json.loads(raw) if raw else None
    except ValueError:
        return status, raw.decode(errors="replace")


def _expect(method: str, url: str, status: int, body: Any = None) -> Any:
    got, payload = _request(method, url, body)
    if got != status:
        raise CheckFailed(f"{method} {url}: expected HTTP {status}, got {got}: {payload}")
    return payload


def free_port() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        print(sock.getsockname()[1])


def _admin_engine(admin_url: str) -> Any:
    from sqlalchemy import create_engine

    # CREATE/DROP DATABASE cannot run inside a transaction.
    return create_engine(admin_url, isolation_level="AUTOCOMMIT")


def _quoted(name: str) -> str:
    if not name.replace("_", "").isalnum():
        raise CheckFailed(f"refusing unusual database name {name!r}")
    return f'"{name}"'


def drop_db(admin_url: str, name: str) -> None:
    from sqlalchemy import text

    engine = _admin_engine(admin_url)
    try:
        with engine.connect() as connection:
            # FORCE (PostgreSQL 13+): a server left running by an interrupted check must not block it.
            connection.execute(text(f"DROP DATABASE IF EXISTS {_quoted(name)} WITH (FORCE)"))
    finally:
        engine.dispose()
    print(f"dropped database {name} (if it existed)")


def create_db(admin_url: str, name: str) -> None:
    from sqlalchemy import text

    drop_db(admin_url, name)
    engine = _admin_engine(admin_url)
    try:
        with engine.connect() as connection:
            connection.execute(text(f"CREATE DATABASE {_quoted(name)}"))
    finally:
        engine.dispose()
    print(f"created empty database {name}")


def database_url(admin_url: str, name: str) -> None:
    from sqlalchemy.engine import make_url

    print(make_url(admin_url).set(database=name).render_as_string(hide_password=False))


def check_migrated(url: str) -> None:
    from alembic.runtime.migration import MigrationContext
    from alembic.script import ScriptDirectory
    from sqlalchemy import create_engine

    from app.db.migrate import alembic_config

    heads = set(ScriptDirectory.from_config(alembic_config(url)).get_heads())
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            current = set(MigrationContext.configure(connection).get_current_heads())
    finally:
        engine.dispose()
    if current != heads:
        raise CheckFailed(f"database is at revision {sorted(current)}, expected head {sorted(heads)}")
    print(f"database is at the newest migration {sorted(heads)}")


def wait_ready(base_url: str, pid: int, timeout: float) -> None:
    from pairank.processes import pid_alive  # the one liveness rule: a zombie counts as dead

    started = time.monotonic()
    deadline = started + timeout
    healthy = False
    while time.monotonic() < deadline:
        if not pid_alive(pid):
            raise CheckFailed(f"the server (pid {pid}) exited before it was ready")
        try:
            if not healthy:
                status, _ = _request("GET", f"{base_url}/health", timeout=5)
                healthy = status == 200
                if healthy:
                    print(f"/health answered after {time.monotonic() - started:.1f}s (the HEALTHCHECK probe)")
            if healthy:
                status, body = _request("GET", f"{base_url}/ready", timeout=5)
                if status == 200:
                    print(f"/ready after {time.monotonic() - started:.1f}s: {body}")
                    return
                if isinstance(body, dict) and body.get("status") == "failed":
                    raise CheckFailed(f"the service failed to load: {body.get('detail')}")
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass  # not listening yet: migrations or imports still running
        time.sleep(0.5)
    raise CheckFailed(f"the server was not ready after {timeout:g}s (healthy: {healthy})")


def healthcheck(expected: str) -> None:
    # The probe Docker runs, taken from the Dockerfile itself, so a broken probe (which would mark a
    # working container unhealthy and get it restarted) fails here rather than in production.
    text = DOCKERFILE.read_text().replace("\\\n", " ")
    line = next((ln for ln in text.splitlines() if ln.lstrip().startswith("HEALTHCHECK")), None)
    if line is None or " CMD [" not in line:
        raise CheckFailed("the Dockerfile has no exec-form HEALTHCHECK CMD [...]")
    command = json.loads(line[line.index(" CMD [") + len(" CMD ") :])
    result = subprocess.run(command, capture_output=True, text=True, timeout=10)
    healthy = result.returncode == 0
    if healthy != (expected == "up"):
        raise CheckFailed(
            f"the Dockerfile HEALTHCHECK exited {result.returncode} with the server {expected}: "
            f"{result.stderr.strip().splitlines()[-1:] or ''}"
        )
    state = "healthy" if healthy else "unhealthy"
    print(f"the Dockerfile HEALTHCHECK reports {state} with the server {expected}")


def _check_ranking(base_url: str) -> None:
    body = _expect("POST", f"{base_url}/v1/corpora/{CORPUS}/rank", 200, {"query": QUERY, "k": 3})
    results = body["results"]
    if not results or results[0]["id"] != EXPECTED_FIRST:
        raise CheckFailed(f"ranking {QUERY!r}: expected {EXPECTED_FIRST} first, got {results}")
    if not str(body.get("model", "")).startswith(DEFAULT_MODEL_VERSION_PREFIX):
        raise CheckFailed(f"served by {body.get('model')!r}, expected the bundled default model")
    ranked = ", ".join(f"{r['id']} ({r['score']:.3f})" for r in results)
    print(f"rank {QUERY!r} -> {ranked} [{body['model']}]")


def smoke(base_url: str) -> None:
    status, payload = _request("GET", f"{base_url}/v1/corpora", keyed=False)
    if status != 401:
        raise CheckFailed(
            f"GET /v1/corpora without a key: expected 401 (keys required), got {status}: {payload}"
        )
    print("without a key: 401, as PAIRANK_AUTH=required says")
    _expect("POST", f"{base_url}/v1/corpora", 201, {"name": CORPUS, "kind": "claim"})
    upserted = _expect("POST", f"{base_url}/v1/corpora/{CORPUS}/documents", 200, {"documents": DOCUMENTS})
    if upserted.get("inserted") != len(DOCUMENTS):
        raise CheckFailed(f"upsert of {len(DOCUMENTS)} new documents answered {upserted}")
    corpus = _expect("GET", f"{base_url}/v1/corpora/{CORPUS}", 200)
    if corpus.get("document_count") != len(DOCUMENTS):
        raise CheckFailed(f"corpus {CORPUS} reports {corpus.get('document_count')} documents")
    print(f"created corpus {CORPUS} and upserted {len(DOCUMENTS)} documents")
    _check_ranking(base_url)


def rank(base_url: str) -> None:
    corpus = _expect("GET", f"{base_url}/v1/corpora/{CORPUS}", 200)
    if corpus.get("document_count") != len(DOCUMENTS):
        raise CheckFailed(f"after the restart corpus {CORPUS} has {corpus.get('document_count')} documents")
    _check_ranking(base_url)


def main(argv: list[str]) -> int:
    commands: dict[str, tuple[Callable[..., None], int]] = {
        "free-port": (free_port, 0),
        "create-db": (create_db, 2),
        "drop-db": (drop_db, 2),
        "database-url": (database_url, 2),
        "check-migrated": (check_migrated, 1),
        "wait-ready": (lambda url, pid, secs: wait_ready(url, int(pid), float(secs)), 3),
        "healthcheck": (healthcheck, 1),
        "smoke": (smoke, 1),
        "rank": (rank, 1),
    }
    if not argv or argv[0] not in commands or len(argv) - 1 != commands[argv[0]][1]:
        print(__doc__, file=sys.stderr)
        return 2
    from sqlalchemy.exc import SQLAlchemyError

    function, _ = commands[argv[0]]
    try:
        function(*argv[1:])
    except CheckFailed as error:
        print(f"FAILED: {error}", file=sys.stderr)
        return 1
    except SQLAlchemyError as error:
        # The first line says what went wrong (refused, auth, missing database); the rest is noise.
        reason = str(getattr(error, "orig", None) or error).strip().splitlines()[0]
        print(f"FAILED: {argv[0]}: database error: {reason}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
