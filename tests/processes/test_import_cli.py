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
