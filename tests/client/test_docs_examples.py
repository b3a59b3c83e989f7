"""Every Python example of docs/guides/python-client.md runs, in order, against a real `pairank serve`
(the tiny model, `PAIRANK_ADMIN_API_KEY=demo-key`): the page's `http://localhost:8000` is that server."""

from __future__ import annotations

import re
from functools import partial
from pathlib import Path

import pytest

from tests.client.conftest import in_own_thread, url_of
from tests.helpers.processes import Server

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guides" / "python-client.md"
BLOCK = re.compile(r"^```python\n(.*?)^```$", re.DOTALL | re.MULTILINE)
DOCUMENTED_URL = "http://localhost:8000"


def examples() -> list[str]:
    """The guide's Python blocks, in order."""
    return BLOCK.findall(GUIDE.read_text(encoding="utf-8"))


def test_the_guide_has_examples_of_each_topic() -> None:
    code = "\n".join(examples())
    for call in (
        "rank(",
        "upsert(",
        "progress=True",
        "iter_documents(",
        "retrain(",
        ".wait(",
        "except ",
        "RetryPolicy(",
    ):
        assert call in code, call


def test_every_python_example_of_the_guide_runs(
    server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)  # the import example writes a file
    namespace: dict[str, object] = {"__name__": "__guide__"}
    blocks = examples()
    for number, block in enumerate(blocks, 1):
        assert DOCUMENTED_URL in block or "Client(" not in block, f"example {number} names another server"
        code = compile(
            block.replace(DOCUMENTED_URL, url_of(server)), f"{GUIDE.name}, example {number}", "exec"
        )
        in_own_thread(partial(exec, code, namespace))  # the guide's own examples, as a reader runs them
    printed = capsys.readouterr().out
    assert "404 id document 'no-such-claim' does not exist" in printed
    assert "413 documents[0].text 10000" in printed and "None query" in printed
    assert "2000 2003" in printed and "corpus 'claims' already exists" in printed
    assert len(blocks) >= 10
