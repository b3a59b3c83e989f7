"""The docs site's generated references are complete: every setting, command, operation and record.

The configuration, CLI and API pages are made at build time (scripts/docsite) from `Settings`, the
`pairank.commands` parsers and the app's OpenAPI schema; these tests check what those pages need from
the code (a description for every setting, a section for every command and operation) and that the
pages really carry the generated sections. docker-compose.yml and .env.example are held to the same
settings by tests/deploy/test_compose.py.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from app.config import Settings
from app.main import app
from pairank.cli import commands
from scripts.docsite.cli_md import cli_markdown
from scripts.docsite.openapi_md import anchor, operation_anchor, operations_markdown, schemas_markdown
from scripts.docsite.settings_md import default_text, settings_table, variable

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
VARIABLE = re.compile(r"\bPAIRANK_[A-Z0-9_]+\b")
# Where environment variables are read: the packages, the container's start-up, compose.
READERS = ("app", "indexes", "encoders", "training", "evaluation", "pairank", "migrations", "docker")


def test_every_setting_has_a_description_that_says_what_unset_means() -> None:
    for name, field in Settings.model_fields.items():
        description = field.description or ""
        assert len(description.split()) >= 4, (
            f"{variable(name)} needs a description (the docs' table shows it)"
        )
        if field.default is None:
            assert "Default:" in description or "Unset:" in description, (
                f"{variable(name)} is unset by default: say what that means ('Default: ...' or 'Unset: ...')"
            )


def test_the_configuration_table_has_every_setting_with_its_default() -> None:
    rows = {
        match.group(1): line
        for line in settings_table().splitlines()
        if (match := re.match(r"^\| `(PAIRANK_[A-Z0-9_]+)` \|", line))
    }
    assert set(rows) == {variable(name) for name in Settings.model_fields}
    for name, field in Settings.model_fields.items():
        cells = [cell.strip() for cell in rows[variable(name)].strip("|").split(" | ")]
        assert cells[1] == default_text(field)
    assert default_text(Settings.model_fields["data_dir"]) == "`./data`"
    assert default_text(Settings.model_fields["micro_batching"]) == "`true`"
    assert default_text(Settings.model_fields["max_request_bytes"]) == "`33554432` (32 MiB)"


def test_the_configuration_page_shows_the_table_and_every_other_variable() -> None:
    page = (DOCS / "reference" / "configuration.md").read_text(encoding="utf-8")
    assert "<!-- generated: settings -->" in page
    settings = {variable(name) for name in Settings.model_fields}
    read = set()
    for folder in READERS:
        for path in (ROOT / folder).rglob("*"):
            if path.suffix in {".py", ".sh"} and path.is_file():
                read |= set(VARIABLE.findall(path.read_text(encoding="utf-8")))
    others = read - settings
    assert "PAIRANK_FAISS_GPU" in others  # the scan finds variables outside Settings
    undocumented = sorted(name for name in others if f"`{name}`" not in page)
    assert not undocumented, f"add {undocumented} to 'Read elsewhere' in docs/reference/configuration.md"


def test_the_cli_reference_has_every_command_and_subcommand() -> None:
    page = cli_markdown()
    for name in commands():
        assert f"## pairank {name} {{ #pairank-{name} }}" in page
    assert "### pairank keys revoke" in page
    assert "usage: pairank train" in page and "--config" in page
    assert "<!-- generated: cli -->" in (DOCS / "reference" / "cli.md").read_text(encoding="utf-8")


def test_the_api_reference_has_every_operation_and_record() -> None:
    spec = app.openapi()
    operations, records = operations_markdown(spec), schemas_markdown(spec)
    for path, methods in spec["paths"].items():
        for method in methods:
            assert f"### `{method.upper()} {path}` {{ #{operation_anchor(method, path)} }}" in operations
    for name in spec["components"]["schemas"]:
        assert f"## {name} {{ #{anchor(name)} }}" in records
    # Links from operations to records resolve to a record's anchor.
    for target in set(re.findall(r"\(schemas\.md#([a-z0-9-]+)\)", operations)):
        assert f"{{ #{target} }}" in records, target
    for page in ("api.md", "schemas.md"):
        text = (DOCS / "reference" / page).read_text(encoding="utf-8")
        assert f"<!-- generated: {page.removesuffix('.md')} -->" in text


@pytest.mark.parametrize(
    ("method", "path", "scope"),
    [("post", "/v1/corpora/{name}/rank", "read"), ("delete", "/admin/keys/{key_id}", "admin")],
)
def test_an_operation_states_its_scope_body_and_responses(method: str, path: str, scope: str) -> None:
    text = operations_markdown(app.openapi())
    section = text.split(f"{{ #{operation_anchor(method, path)} }}")[1].split("\n### ")[0]
    assert f"**Scope:** `{scope}`" in section
    assert "| 200 |" in section
    if method == "post":
        assert "[CorpusRankRequest](schemas.md#corpusrankrequest)" in section
        assert "[RankResponse](schemas.md#rankresponse)" in section
