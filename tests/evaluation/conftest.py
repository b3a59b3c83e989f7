"""Shared fixtures for the evaluation tests: the eval vectors and one tiny model per session."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

VECTORS = Path(__file__).parent / "vectors"


def read_tsv(path: Path, cast: type) -> dict[str, dict[str, Any]]:
    """Independent TSV reader (plain csv), so the vector tests do not lean on evaluation.trec_io."""
    table: dict[str, dict[str, Any]] = {}
    with path.open() as handle:
        rows = csv.reader(handle, delimiter="\t")
        next(rows)
        for query_id, doc_id, value in rows:
            table.setdefault(query_id, {})[doc_id] = cast(value)
    return table


@pytest.fixture(scope="session")
def vectors_qrels() -> dict[str, dict[str, int]]:
    return read_tsv(VECTORS / "qrels.tsv", int)


@pytest.fixture(scope="session")
def vectors_run() -> dict[str, dict[str, float]]:
    return read_tsv(VECTORS / "run.tsv", float)


@pytest.fixture(scope="session")
def expected() -> dict[str, Any]:
    return json.loads((VECTORS / "expected.json").read_text())


@pytest.fixture(scope="session")
def expected_variants() -> dict[str, Any]:
    return json.loads((VECTORS / "expected_variants.json").read_text())


@pytest.fixture(scope="session")
def tiny_model(tiny_model_dir: Path) -> Path:
    """The session's tiny bi-encoder (built once by tests/conftest.py, about 3 s)."""
    return tiny_model_dir
