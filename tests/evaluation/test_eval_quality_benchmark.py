"""benchmarks/quality/quality.py on tiny fixtures with the fake encoder: skipping, the table and the JSON."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from tests.evaluation.eval_helpers import FakeEncoder, pairs_dataset, retrieval_dataset

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "quality" / "quality.py"


def _load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("quality_benchmark", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve string annotations through sys.modules
    spec.loader.exec_module(module)
    return module


def test_absent_datasets_are_skipped_and_present_ones_reported(tmp_path: Path) -> None:
    quality = _load_script()
    retrieval_dataset(tmp_path / "data" / "pfcc_snopes")
    pairs_dataset(tmp_path / "data" / "stsb", graded=True)
    results = quality.run_benchmarks(tmp_path / "data", FakeEncoder())
    assert list(results) == ["PFCC-S", "CQA-A", "CQA-B", "ANTIQUE", "STS-b", "MRPC"]
    assert "skipped" in results["CQA-A"] and "skipped" in results["MRPC"]
    assert results["PFCC-S"]["metrics"]["HasPositive@50"] == 1.0
    assert "per_query" not in results["PFCC-S"]
    payload = {
        "command": "python benchmarks/quality/quality.py",
        "machine": quality.machine(),
        "model": {"model_id": "fake", "version": "fake@0", "device": "cpu"},
        "seconds": 1.0,
        "results": results,
    }
    table = quality.to_markdown(payload)
    assert "| PFCC-S | dev | retrieval | 3 queries / 5 docs | 1 | HasPositive@1 **1.0000**" in table
    assert "| STS-b | dev | pairs (spearman) | 5 pairs |" in table
    assert "| CQA-A | | | | | skipped:" in table
    assert f"{payload['machine']['nproc']} CPUs (`nproc`)" in table


def test_no_data_folder_writes_nothing(tmp_path: Path) -> None:
    quality = _load_script()
    assert quality.main(["--data", str(tmp_path / "absent"), "--output-dir", str(tmp_path / "out")]) == 0
    assert not (tmp_path / "out").exists()
