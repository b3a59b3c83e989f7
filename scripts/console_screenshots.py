"""Regenerate the console screenshots in docs/ (the README and docs/guides/console.md show them).

    .venv/bin/python scripts/console_screenshots.py [--output docs] [--model default]

Starts `pairank serve --demo` on a temporary data dir with a throwaway admin key (the bundled
all-MiniLM-L6-v2 by default: its first export takes a minute or two), stores the demo pairs, then drives
Debian's Chromium (`apt-get install chromium`) through searching and judging (beside a second judge's
judgements), the review screen with the judges' agreement, a comparison with its metrics, duplicates,
and a retraining (past its confirm step) followed to its end. Nothing it writes outlives the run but the
PNGs.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
QUERY = "Is it true that 5G masts are spreading covid?"
INCOMING = "\n".join(
    [
        "Drinking bleach protects you from the coronavirus",
        "The moon landings were faked",
        "Bats are completely blind",
    ]
)


def free_port() -> int:
    """A TCP port nobody listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(data_dir: Path, model: str, admin_key: str) -> tuple[subprocess.Popen[bytes], str]:
    """`pairank serve --demo` in its own process; returns it and its URL once ready."""
    port = free_port()
    env = {**os.environ, "PAIRANK_DATA_DIR": str(data_dir), "PAIRANK_MODEL": model,
           "PAIRANK_ADMIN_API_KEY": admin_key, "PAIRANK_RATE_LIMIT": "0"}  # fmt: skip
    env.pop("PAIRANK_DATABASE_URL", None)
    log = (data_dir.parent / "server.log").open("wb")
    command = [sys.executable, "-m", "pairank.cli", "serve", "--demo", "--port", str(port)]
    process = subprocess.Popen(command, env=env, stdout=log, stderr=log)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 900
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"the server exited; see {log.name}")
        try:
            if httpx.get(f"{url}/ready", timeout=5).status_code == 200:
                return process, url
        except httpx.TransportError:
            pass
        time.sleep(1)
    raise SystemExit("the server never became ready")


def second_judge(url: str) -> None:
    """Another judge's verdicts on the query's first results (anonymous: auth is off), so the review
    screen has two judges to compare; one of them differs from what the console's judge will say."""
    ranked = httpx.post(f"{url}/v1/corpora/demo-claims/rank", json={"query": QUERY, "k": 3}, timeout=60)
    ranked.raise_for_status()
    for position, result in enumerate(ranked.json()["results"]):
        body = {"query": QUERY, "document_id": result["id"], "label": 1 if position in (0, 1) else 0}
        httpx.put(f"{url}/v1/corpora/demo-claims/pairs/judgement", json=body, timeout=60).raise_for_status()


def shoot(page: Any, output: Path, name: str) -> None:
    """Save a full-page screenshot."""
    page.wait_for_timeout(400)  # charts finish drawing
    page.screenshot(path=str(output / name), full_page=True)
    print("wrote", output / name)


def drive(url: str, admin_key: str, output: Path, browser: Any) -> None:
    """Search and judge, compare, duplicates, retrain: one screenshot each."""
    page = browser.new_page(viewport={"width": 1280, "height": 820})
    page.set_default_timeout(120_000)
    page.goto(f"{url}/console")
    page.get_by_test_id("api-key").fill(admin_key)
    page.get_by_test_id("sign-in").click()
    page.get_by_test_id("corpus").select_option("demo-claims")
    page.get_by_test_id("query").fill(QUERY)
    page.get_by_test_id("query").press("Enter")
    results = page.get_by_test_id("result")
    results.first.wait_for()
    results.nth(0).get_by_test_id("judge-relevant").click()
    for position in (1, 2):
        results.nth(position).get_by_test_id("judge-not-relevant").click()
    page.keyboard.press("j")
    page.wait_for_timeout(300)
    page.screenshot(path=str(output / "console-search.png"))  # the viewport: the first results
    print("wrote", output / "console-search.png")

    page.get_by_test_id("view-judgements").click()
    page.get_by_test_id("agreement").wait_for()
    shoot(page, output, "console-judgements.png")

    page.get_by_test_id("view-compare").click()
    page.get_by_test_id("compare-mode-left").select_option("dense")
    page.get_by_test_id("compare-mode-right").select_option("lexical")
    page.get_by_test_id("compare").click()
    page.get_by_test_id("compare-left").get_by_test_id("result").first.wait_for()
    page.get_by_test_id("compare-metrics").click()
    page.get_by_test_id("compare-report").wait_for()
    shoot(page, output, "console-compare.png")

    page.get_by_test_id("view-duplicates").click()
    page.get_by_test_id("duplicates-texts").fill(INCOMING)
    page.get_by_test_id("duplicates-check").click()
    page.get_by_test_id("duplicate").first.wait_for()
    shoot(page, output, "console-duplicates.png")

    page.get_by_test_id("view-models").click()
    page.get_by_test_id("epochs").fill("4")
    page.get_by_test_id("gate-protocol").select_option("never")  # a dev metric every epoch, for the curve
    page.get_by_test_id("retrain").click()
    page.get_by_test_id("retrain-start").click()
    page.wait_for_function(
        "() => ['succeeded', 'failed', 'cancelled'].includes("
        "document.querySelector('[data-testid=job-status]').textContent.trim())",
        timeout=1_800_000,
        polling=1000,
    )
    shoot(page, output, "console-retrain.png")


def main() -> None:
    """Start the demo, take the screenshots, stop it."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--output", type=Path, default=ROOT / "docs")
    parser.add_argument("--model", default="default", help="PAIRANK_MODEL of the demo server")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    executable = shutil.which("chromium") or shutil.which("chromium-browser")
    if executable is None:
        raise SystemExit("Chromium is not installed: apt-get install chromium")
    args.output.mkdir(parents=True, exist_ok=True)
    admin_key = f"screenshots-{os.urandom(8).hex()}"
    with tempfile.TemporaryDirectory(prefix="pairank-screens-") as folder:
        process, url = start_server(Path(folder) / "data", args.model, admin_key)
        try:
            pairs = json.loads((ROOT / "app" / "demo" / "pairs.json").read_text())
            httpx.post(f"{url}/v1/corpora/demo-claims/pairs", json=pairs, timeout=60).raise_for_status()
            second_judge(url)
            with sync_playwright() as playwright:
                sandbox = ["--no-sandbox"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []
                browser = playwright.chromium.launch(executable_path=executable, args=sandbox)
                drive(url, admin_key, args.output, browser)
                browser.close()
        finally:
            process.terminate()
            process.wait(60)


if __name__ == "__main__":
    main()
