"""`pairank eval-run` (through the console script) and `pairank evaluate` (with a tiny model)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from evaluation.cli import EVAL_RUN_METRICS, evaluate
from tests.evaluation.eval_helpers import pairs_dataset, rerank_dataset, retrieval_dataset

VECTORS = Path(__file__).parent / "vectors"
CUTOFFS = (1, 3, 5, 10, 20, 50)
CONTRACT_KEYS = ["MAP", "MRR", "SemEval-MAP@10"] + [
    f"{family}@{k}" for family in ("MAP", "HasPositive", "P", "nDCG", "Recall") for k in CUTOFFS
]


def _pairank(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """Run the installed console script (or the dispatcher module when the script is missing)."""
    script = Path(sys.executable).parent / "pairank"
    command = [str(script)] if script.exists() else [sys.executable, "-m", "pairank.cli"]
    return subprocess.run(
        [*command, *map(str, args)], capture_output=True, text=True, timeout=120, check=False
    )


def _assert_reproduces_expected(output: dict[str, Any], suffix: str = "") -> None:
    expected = json.loads((VECTORS / "expected.json").read_text())
    checked = 0
    for key, values in expected.items():
        if key == "_meta" or not key.endswith(suffix) or (not suffix and key.endswith("]")):
            continue
        metric = key.removesuffix(suffix)
        if metric in output:
            assert round(output[metric], 6) == pytest.approx(values["mean"], abs=1e-9), key
            checked += 1
    assert checked >= (3 if suffix else 14)


def test_eval_run_prints_exactly_the_contract_keys_and_reproduces_expected_json() -> None:
    result = _pairank("eval-run", VECTORS / "qrels.tsv", VECTORS / "run.tsv")
    assert result.returncode == 0, result.stderr
    output = json.loads(result.stdout)
    assert sorted(output) == sorted(CONTRACT_KEYS) == sorted(EVAL_RUN_METRICS)
    _assert_reproduces_expected(output)


def test_eval_run_per_query_and_relevance_level() -> None:
    result = _pairank(
        "eval-run", VECTORS / "qrels.tsv", VECTORS / "run.tsv", "--per-query", "--relevance-level", "2"
    )
    assert result.returncode == 0, result.stderr
    output = json.loads(result.stdout)
    _assert_reproduces_expected(output, suffix="[rel>=2]")
    expected = json.loads((VECTORS / "expected.json").read_text())
    assert set(output["per_query"]) == {"q1", "q2", "q3", "q4", "q5", "q6"}
    for query_id, value in expected["MAP[rel>=2]"]["per_query"].items():
        assert output["per_query"][query_id]["MAP"] == pytest.approx(value, abs=1e-6)


def test_eval_run_reads_trec_format(tmp_path: Path) -> None:
    qrels_lines, run_lines = [], []
    for line in (VECTORS / "qrels.tsv").read_text().splitlines()[1:]:
        query_id, doc_id, grade = line.split("\t")
        qrels_lines.append(f"{query_id} 0 {doc_id} {grade}\n")
    for position, line in enumerate(reversed((VECTORS / "run.tsv").read_text().splitlines()[1:])):
        query_id, doc_id, score = line.split("\t")
        # A misleading rank column: trec_eval (and we) rank by score only.
        run_lines.append(f"{query_id} Q0 {doc_id} {position + 1} {score} test\n")
    (tmp_path / "qrels.txt").write_text("".join(qrels_lines))
    (tmp_path / "run.txt").write_text("".join(run_lines))
    result = _pairank("eval-run", tmp_path / "qrels.txt", tmp_path / "run.txt")
    assert result.returncode == 0, result.stderr
    _assert_reproduces_expected(json.loads(result.stdout))


def test_eval_run_reports_malformed_input(tmp_path: Path) -> None:
    (tmp_path / "bad.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\n")
    result = _pairank("eval-run", tmp_path / "bad.tsv", VECTORS / "run.tsv")
    assert result.returncode == 2
    assert f"{tmp_path / 'bad.tsv'}:2: malformed qrels line" in result.stderr
    assert result.stdout == ""


def test_evaluate_retrieval_end_to_end(
    tiny_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    data = retrieval_dataset(tmp_path / "pfcc")
    output = tmp_path / "out" / "report.json"
    code = evaluate(
        [
            "--data",
            str(data),
            "--split",
            "dev",
            "--model",
            str(tiny_model),
            "--output",
            str(output),
            "--cache-dir",
            str(tmp_path / "models"),
        ]  # fmt: skip
    )
    assert code == 0
    report = json.loads(output.read_text())
    assert report["mode"] == "retrieval" and report["num_queries"] == 3 and report["corpus_size"] == 5
    assert set(report["per_query"]) == {"q1", "q2", "q3"}
    assert all(0.0 <= value <= 1.0 for value in report["metrics"].values())
    assert report["metrics"]["Recall@5"] == 1.0  # 5 documents, top-100: everything is retrieved
    assert report["model"]["path"] == str(tiny_model)
    # Evaluations score what the service serves: the quality-gated int8 export by default.
    assert (report["model"]["backend"], report["model"]["precision"]) == ("openvino", "int8")
    assert report["model"]["quality_gate"]["mean_cosine"] >= 0.99
    printed = capsys.readouterr().out
    assert "pfcc / dev (retrieval)" in printed and "HasPositive" in printed and str(output) in printed


def test_evaluate_rerank_and_pairs_with_default_output(
    tiny_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    monkeypatch.chdir(tmp_path)
    rerank = rerank_dataset(tmp_path / "cqa")
    assert evaluate(["--data", str(rerank), "--model", str(tiny_model), "--relevance-level", "1"]) == 0
    (report_path,) = (tmp_path / "data" / "evaluations").glob("cqa-dev-*.json")
    report = json.loads(report_path.read_text())
    assert report["mode"] == "rerank" and report["relevance_level"] == 1
    assert report["per_query"]["q2"]["MAP"] <= 0.5  # vc9 is relevant but has no text
    for graded, key in ((True, "spearman"), (False, "f1")):
        folder = pairs_dataset(tmp_path / f"pairs-{graded}", graded=graded)
        output = tmp_path / f"pairs-{graded}.json"
        assert evaluate(["--data", str(folder), "--model", str(tiny_model), "--output", str(output)]) == 0
        pairs_report = json.loads(output.read_text())
        assert pairs_report["mode"] == "pairs" and key in pairs_report["metrics"]
    assert "spearman" in capsys.readouterr().out


def test_evaluate_rejects_a_bad_folder_before_loading_a_model(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    assert evaluate(["--data", str(tmp_path / "missing")]) == 2
    (tmp_path / "empty").mkdir()
    assert evaluate(["--data", str(tmp_path / "empty"), "--model", str(tmp_path / "no-model")]) == 2
    assert "no qrels" in capsys.readouterr().err


def test_evaluate_with_lexical_and_hybrid_ranking(tiny_model: Path, tmp_path: Path) -> None:
    data = retrieval_dataset(tmp_path / "pfcc")
    reports = {}
    for ranking in ("lexical", "hybrid"):
        output = tmp_path / f"{ranking}.json"
        args = ["--data", str(data), "--model", str(tiny_model), "--output", str(output)]
        args += ["--cache-dir", str(tmp_path / "models"), "--ranking", ranking, "--alpha", "0.5"]
        assert evaluate(args) == 0
        reports[ranking] = json.loads(output.read_text())
    assert reports["lexical"]["ranking"] == {"mode": "lexical", "alpha": 0.5, "fusion": "linear"}
    assert reports["hybrid"]["ranking"]["mode"] == "hybrid" and set(reports["hybrid"]["per_query"]) == {
        "q1",
        "q2",
        "q3",
    }
    bad = ["--data", str(data), "--model", str(tiny_model), "--ranking", "hybrid", "--alpha", "1.5"]
    assert evaluate(bad) == 2
