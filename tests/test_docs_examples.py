"""Every shell and Python example in docs/ runs, as written, against real `pairank serve` processes.

Two servers on the tiny model: `demo` as `PAIRANK_ADMIN_API_KEY=demo-key make serve` runs (the demo
corpus, no keys), `keys` with keys required and its bootstrap admin key in `$ADMIN`. Each page's blocks
run in order (tests/helpers/doc_blocks.py says how a block is marked); `localhost:8000` is pointed at the
server, every `curl` call's status is recorded, and a block passes when it exits 0 and its calls
answered 2xx or the statuses its directive lists. Between pages every corpus but the demo's is
deleted. python-client.md is its author's to test.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from app.usecases.api_keys import new_key_text
from tests.conftest import process_model_env
from tests.helpers.doc_blocks import Block, docs_pages, parse_page
from tests.helpers.processes import Server

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
SKIPPED_PAGES = frozenset({"guides/python-client.md"})
PAGES = docs_pages(DOCS, SKIPPED_PAGES)
RUN_PAGES = sorted(name for name, page in PAGES.items() if any(block.run for block in page.blocks))
BLOCK_SECONDS = 240  # the longest block retrains the demo corpus (about 20 s on the tiny model)
# Records each curl call's final status beside the block, without touching what the block prints.
CURL_PRELUDE = r"""set -eo pipefail
curl() {
    local headers status code
    headers=$(mktemp "$DOCS_CALLS/headers.XXXXXX")
    command curl -D "$headers" "$@" && status=0 || status=$?
    code=$(awk '/^HTTP\//{code=$2} END{print code}' "$headers")
    printf '%s\t%s\n' "$code" "${*//$'\n'/ }" >> "$DOCS_CALLS/calls"
    return $status
}
"""


@dataclass(frozen=True)
class DocsServer:
    """A server, the environment its blocks run in, and an admin key for it."""

    server: Server
    env: dict[str, str]
    admin_key: str


def _environment(
    data_dir: Path, tiny_model_dir: Path, export_cache_dir: Path, **settings: str
) -> dict[str, str]:
    env = {name: value for name, value in os.environ.items() if not name.startswith("PAIRANK_")}
    return {
        **env,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
        "PAIRANK_DATA_DIR": str(data_dir),
        **process_model_env(tiny_model_dir, export_cache_dir),
        **{f"PAIRANK_{name.upper()}": value for name, value in settings.items()},
    }


@pytest.fixture(scope="module")
def servers(
    tmp_path_factory: pytest.TempPathFactory, tiny_model_dir: Path, export_cache_dir: Path
) -> Iterator[dict[str, DocsServer]]:
    """The demo server and the keys-required server, each with its blocks' environment and admin key."""
    admin = new_key_text()
    folder = tmp_path_factory.mktemp("docs-servers")
    demo_env = _environment(
        folder / "demo",
        tiny_model_dir,
        export_cache_dir,
        auth="disabled",
        seed_demo="true",
        admin_api_key="demo-key",
    )
    keys_env = _environment(folder / "keys", tiny_model_dir, export_cache_dir, bootstrap_admin_key=admin)
    with ThreadPoolExecutor(2) as pool:  # both start (and wait to be ready) at once
        demo, keys = pool.map(Server, [demo_env, keys_env])
    started = {
        "demo": DocsServer(demo, demo_env, "demo-key"),
        "keys": DocsServer(keys, {**keys_env, "ADMIN": admin}, admin),
    }
    yield started
    for docs_server in started.values():
        docs_server.server.kill()


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where blocks run: the repository's top level linked in, so paths such as `app/demo/pairs.json`
    and `.venv/bin/pairank` resolve, while the files blocks write stay out of the checkout."""
    folder = tmp_path_factory.mktemp("docs-cwd")
    for entry in ROOT.iterdir():
        if entry.name not in {"data", "site", ".git", ".venv"}:
            (folder / entry.name).symlink_to(entry)
    (folder / ".venv").symlink_to(sys.prefix)  # the environment running the tests, wherever it lives
    return folder


def _reset(server: Server, admin_key: str) -> None:
    # Each page starts from the demo corpus alone.
    headers = {"X-API-Key": admin_key}
    for corpus in server.http.get("/v1/corpora", headers=headers).raise_for_status().json()["corpora"]:
        if corpus["name"] != "demo-claims":
            name = corpus["name"]
            server.http.delete(
                f"/v1/corpora/{name}", params={"confirm": name}, headers=headers
            ).raise_for_status()


def _run(block: Block, server: Server, env: dict[str, str], workdir: Path, calls_dir: Path) -> list[str]:
    code = block.code.replace("localhost:8000", f"127.0.0.1:{server.port}")
    calls_dir.mkdir()
    script = calls_dir / ("block.sh" if block.language == "bash" else "block.py")
    script.write_text(CURL_PRELUDE + code if block.language == "bash" else code, encoding="utf-8")
    command = ["bash", str(script)] if block.language == "bash" else [sys.executable, str(script)]
    done = subprocess.run(
        command,
        cwd=workdir,
        env={**env, "DOCS_CALLS": str(calls_dir)},
        capture_output=True,
        text=True,
        timeout=BLOCK_SECONDS,
    )
    output = f"--- stdout\n{done.stdout[-3000:]}\n--- stderr\n{done.stderr[-3000:]}"
    assert done.returncode == 0, f"{block.where} exited {done.returncode}\n{block.code}\n{output}"
    calls_file = calls_dir / "calls"
    calls = calls_file.read_text().splitlines() if calls_file.exists() else []
    statuses = [int(line.split("\t")[0]) if line.split("\t")[0].isdigit() else 0 for line in calls]
    listing = "\n".join(calls)
    if block.statuses is not None:
        assert tuple(statuses) == block.statuses, (
            f"{block.where}: the curl calls answered {statuses}, the page says {list(block.statuses)}\n"
            f"{listing}\n{output}"
        )
    else:
        assert all(200 <= status < 300 for status in statuses), (
            f"{block.where}: a curl call did not answer 2xx (mark the block `<!-- run: statuses ... -->` "
            f"if that is the point)\n{listing}\n{output}"
        )
    return calls


@pytest.mark.parametrize("page", RUN_PAGES)
def test_page_examples_run(page: str, servers: dict[str, DocsServer], workdir: Path, tmp_path: Path) -> None:
    for docs_server in servers.values():
        _reset(docs_server.server, docs_server.admin_key)
    for number, block in enumerate(block for block in PAGES[page].blocks if block.run):
        target = servers[block.server]
        _run(block, target.server, target.env, workdir, tmp_path / f"block-{number}")


def test_every_directive_is_understood_and_most_blocks_run() -> None:
    errors = [error for page in PAGES.values() for error in page.errors]
    assert not errors, "\n".join(errors)
    blocks = [block for page in PAGES.values() for block in page.blocks]
    running = [block for block in blocks if block.run]
    assert len(running) >= 40, f"only {len(running)} blocks run"
    assert len(running) > 3 * (len(blocks) - len(running))
    assert {"getting-started.md", "guides/security.md", "guides/fine-tuning.md"} <= set(RUN_PAGES)
    assert any(block.language == "python" for block in running)


def test_directives_are_read_from_the_line_before_the_fence() -> None:
    text = """Intro.

<!-- norun: needs Docker -->
```bash
docker compose up -d
```

<!-- run: keys; statuses 401 201 -->

```sh
curl -s localhost:8000/v1/corpora
```

```json
{"not": "run"}
```

<!-- run: statuses 42 -->
```python
print("x")
```

<!-- nosuchthing -->
```bash
true
```
"""
    page = parse_page(text, "example.md")
    norun, keys, python, plain = page.blocks
    assert (norun.run, norun.code) == (False, "docker compose up -d\n")
    assert (keys.run, keys.server, keys.statuses, keys.language) == (True, "keys", (401, 201), "bash")
    assert (python.language, python.statuses, python.line) == ("python", None, 19)
    assert plain.run and plain.server == "demo"
    assert page.errors == [
        "example.md:19: unknown run option 'statuses 42' (keys; statuses NNN ...)",
        "example.md:24: unknown directive '<!-- nosuchthing -->' (norun, run: ...)",
    ]


def test_a_failing_call_fails_its_block(
    servers: dict[str, DocsServer], workdir: Path, tmp_path: Path
) -> None:
    server, env = servers["demo"].server, servers["demo"].env
    missing = Block("example.md", 1, "bash", "curl -s localhost:8000/v1/corpora/no-such-corpus\n")
    with pytest.raises(AssertionError, match=r"did not answer 2xx"):
        _run(missing, server, env, workdir, tmp_path / "missing")
    expected = Block("example.md", 1, "bash", missing.code, statuses=(404,))
    assert _run(expected, server, env, workdir, tmp_path / "expected")[0].startswith("404\t")
    failing = Block("example.md", 1, "python", "raise SystemExit(3)\n")
    with pytest.raises(AssertionError, match=r"exited 3"):
        _run(failing, server, env, workdir, tmp_path / "failing")
