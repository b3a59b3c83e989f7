"""`pairank import` against a real server: a BEIR folder is converted, uploaded and followed to the end."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.processes import ServerFactory

pytestmark = pytest.mark.postgres


def test_import_a_beir_folder(start_server: ServerFactory, tmp_path: Path) -> None:
    server = start_server()
    folder = tmp_path / "beir"
    folder.mkdir()
    rows = [{"_id": f"c{i}", "title": f"Title {i}", "text": f"claim {i} about the moon"} for i in range(1500)]
    (folder / "corpus.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    command = [
        sys.executable,
        "-m",
        "pairank.cli",
        "import",
        str(folder),
        "--corpus",
        "claims",
        "--kind",
        "claim",
        "--url",
        f"http://127.0.0.1:{server.port}",
    ]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "imported 1500 documents into claims" in result.stdout
    assert server.http.get("/v1/corpora/claims").json()["document_count"] == 1500
    document = server.http.get("/v1/corpora/claims/documents/c7").json()
    assert document["text"] == "Title 7 claim 7 about the moon" and document["metadata"] == {
        "title": "Title 7"
    }
    missing = subprocess.run(
        [*command[:4], str(tmp_path / "nope"), *command[5:]], capture_output=True, text=True
    )
    assert missing.returncode == 2 and "does not exist" in missing.stderr


def test_import_fact_checks_from_a_page_and_json_lines(start_server: ServerFactory, tmp_path: Path) -> None:
    server = start_server()
    fixtures = Path(__file__).parents[1] / "fixtures" / "claimreview"
    base = [sys.executable, "-m", "pairank.cli", "import", "--url", f"http://127.0.0.1:{server.port}"]
    command = [*base, "--corpus", "checks", "--kind", "claim", "--language", "multi"]
    page = subprocess.run([*command, str(fixtures / "publisher_page.html")], capture_output=True, text=True)
    assert page.returncode == 0 and "imported 1 fact-checks into checks" in page.stdout, page.stderr
    corpus = server.http.get("/v1/corpora/checks").json()
    assert corpus["language"] == "multi" and corpus["document_count"] == 1
    lines = [*base, "--corpus", "checks", str(fixtures / "reviews.jsonl")]
    refused = subprocess.run(lines, capture_output=True, text=True)
    assert refused.returncode == 1 and "record 3 (line 3): claimReviewed: missing" in refused.stderr
    skipped = subprocess.run([*lines, "--on-error", "skip"], capture_output=True, text=True)
    assert skipped.returncode == 0, skipped.stderr
    assert (
        "imported 2 fact-checks" in skipped.stdout
        and "skipped record 3 (line 3): claimReviewed" in skipped.stdout
    )
    assert server.http.get("/v1/corpora/checks").json()["document_count"] == 3
