"""MkDocs hooks (mkdocs.yml `hooks:`): the pages generated from the code, and the offline guard.

- `<!-- generated: NAME -->` in a page is replaced at build time by the API operations, the records,
  the configuration table or the CLI reference, made from the app itself, so they cannot drift.
- The committed benchmark reports (benchmarks/*.md) and the training reference (training/README.md)
  become pages of the site as they are in the repository.
- After the build, a page that loads a script, style sheet or font from another host fails it: the
  site must work without a network.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[2]
# mkdocs runs this file by path and restores sys.path afterwards, so the generators are imported now.
sys.path.insert(0, str(ROOT))
from scripts.docsite.cli_md import cli_markdown  # noqa: E402
from scripts.docsite.openapi_md import operations_markdown, schemas_markdown  # noqa: E402
from scripts.docsite.settings_md import settings_table  # noqa: E402

MARKER = re.compile(r"^<!-- generated: ([a-z]+) -->$", re.MULTILINE)  # alone on its line
# Pages copied from elsewhere in the repository: site path -> source.
COPIED = {
    "reference/training.md": ROOT / "training" / "README.md",
    **{f"benchmarks/{path.name}": path for path in sorted((ROOT / "benchmarks").glob("*.md"))},
}
ASSET_TAG = re.compile(r"<(?:script|link|img|iframe|source|video|audio)\b[^>]*>", re.IGNORECASE)
REMOTE = re.compile(r"""\b(?:src|href)=["'](?:https?:)?//""", re.IGNORECASE)
# Links a browser does not fetch (`mkdocs serve` adds a canonical URL of its own address).
NOT_FETCHED = re.compile(r"""\brel=["'](?:canonical|alternate|prev|next)["']""", re.IGNORECASE)


def _generated(name: str) -> str:
    if name in ("api", "schemas"):
        from app.main import app

        spec = app.openapi()
        return operations_markdown(spec) if name == "api" else schemas_markdown(spec)
    if name == "settings":
        return settings_table()
    if name == "cli":
        return cli_markdown()
    raise PluginError(f"unknown generated section {name!r} (api, schemas, settings, cli)")


def on_files(files: Files, config: Any) -> Files:
    """Add the benchmark reports and the training reference as pages."""
    for uri, source in COPIED.items():
        files.append(File.generated(config, uri, abs_src_path=str(source)))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    """Replace each generated-section marker with its markdown."""
    return MARKER.sub(lambda match: _generated(match.group(1)), markdown)


def on_post_page(output: str, page: Any, config: Any) -> str:
    """Fail the build when a page would fetch anything from another host."""
    for tag in ASSET_TAG.findall(output):
        if REMOTE.search(tag) and not NOT_FETCHED.search(tag):
            raise PluginError(f"{page.file.src_uri} loads {tag[:120]!r}: the site must work offline")
    return output
