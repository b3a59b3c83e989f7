"""MkDocs hooks (mkdocs.yml `hooks:`): the pages generated from the code, and the offline guard.

- `<!-- generated: NAME -->` alone on a line is replaced at build time by the API operations, the
  records, the configuration table or the CLI reference, made from the app itself, so they cannot drift.
- The committed benchmark reports (benchmarks/*.md) and the training reference (training/README.md)
  become pages of the site as they are in the repository; a report not yet in the nav is added at the
  end of its Benchmarks section.
- A link to one of those files as the repository has it (`../../benchmarks/hybrid.md` from
  docs/concepts/), or from a copied report into docs/ (`../docs/concepts/ranking.md`), is pointed at
  its page on the site, so pages read right on the site and in the repository alike.
- After the build, a page that loads a script, style sheet, font or image from another host fails it:
  the site must work without a network.
"""

from __future__ import annotations

import posixpath
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
from scripts.docsite.settings_md import settings_table, training_defaults_table  # noqa: E402

MARKER = re.compile(r"^<!-- generated: ([a-z]+) -->$", re.MULTILINE)  # alone on its line
BENCHMARKS_SECTION = "Benchmarks"
# Pages copied from elsewhere in the repository: site path -> source.
COPIED = {
    "reference/training.md": ROOT / "training" / "README.md",
    **{f"benchmarks/{path.name}": path for path in sorted((ROOT / "benchmarks").glob("*.md"))},
}
# Images the copied benchmark reports show (plots next to their reports).
ASSETS = {f"benchmarks/{path.name}": path for path in sorted((ROOT / "benchmarks").glob("*.png"))}
DOCS = ROOT / "docs"
SITE_PATH = {source.resolve(): uri for uri, source in COPIED.items()}
LINK = re.compile(r"\]\((?P<target>[^)\s#:]+\.md)(?P<anchor>#[^)\s]*)?\)")
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
    if name == "trainingdefaults":
        return training_defaults_table()
    raise PluginError(f"unknown generated section {name!r} (api, schemas, settings, cli, trainingdefaults)")


def _nav_uris(items: Any) -> set[str]:
    if isinstance(items, str):
        return {items}
    if isinstance(items, dict):
        return set().union(*(_nav_uris(value) for value in items.values()))
    if isinstance(items, list):
        return set().union(*(_nav_uris(item) for item in items))
    return set()


def _title(source: Path) -> str:
    lines = source.read_text(encoding="utf-8").splitlines()
    heading = next((line for line in lines if line.startswith("# ")), "")
    return heading.removeprefix("# ").strip() or source.stem


def on_config(config: Any) -> Any:
    """Add benchmark reports that the nav does not name yet to the end of its Benchmarks section."""
    sections = [item for item in config["nav"] or [] if isinstance(item, dict)]
    section = next((item[BENCHMARKS_SECTION] for item in sections if BENCHMARKS_SECTION in item), None)
    if section is not None:
        listed = _nav_uris(config["nav"])
        for uri, source in COPIED.items():
            if uri.startswith("benchmarks/") and uri not in listed:
                section.append({_title(source): uri})
    return config


def on_files(files: Files, config: Any) -> Files:
    """Add the benchmark reports (with their plots) and the training reference as pages."""
    for uri, source in {**COPIED, **ASSETS}.items():
        files.append(File.generated(config, uri, abs_src_path=str(source)))
    return files


def _site_links(markdown: str, page: Any) -> str:
    # A link resolved from the page's own file (in docs/, or a copied report) to a copied file.
    folder = Path(page.file.abs_src_path).parent
    site_folder = posixpath.dirname(page.file.src_uri) or "."

    def replace(match: re.Match[str]) -> str:
        target = (folder / match["target"]).resolve()
        uri = SITE_PATH.get(target)
        if uri is None and target.is_relative_to(DOCS):
            # A copied report linking into docs/ as the repository has it.
            uri = target.relative_to(DOCS).as_posix()
        if uri is None:
            return match.group(0)
        return f"]({posixpath.relpath(uri, site_folder)}{match['anchor'] or ''})"

    return LINK.sub(replace, markdown)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    """Replace each generated-section marker with its markdown; point repository links at the site."""
    return _site_links(MARKER.sub(lambda match: _generated(match.group(1)), markdown), page)


def on_post_page(output: str, page: Any, config: Any) -> str:
    """Fail the build when a page would fetch anything from another host."""
    for tag in ASSET_TAG.findall(output):
        if REMOTE.search(tag) and not NOT_FETCHED.search(tag):
            raise PluginError(f"{page.file.src_uri} loads {tag[:120]!r}: the site must work offline")
    return output
