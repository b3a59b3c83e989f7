"""Tests of evaluation.trec_io: format detection, round trips and error messages."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluation.trec_io import read_qrels, read_run, write_qrels_trec, write_run_trec, write_tsv


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_tsv_with_header(tmp_path: Path) -> None:
    qrels = _write(tmp_path / "q.tsv", "query-id\tcorpus-id\tscore\nq1\td 1\t2\nq1\td2\t0\n\nq2\td1\t1.0\n")
    assert read_qrels(qrels) == {"q1": {"d 1": 2, "d2": 0}, "q2": {"d1": 1}}
    run = _write(tmp_path / "r.tsv", "query-id\tcorpus-id\tscore\r\nq1\td1\t-0.5\r\nq1\td2\t1e-3\r\n")
    assert read_run(run) == {"q1": {"d1": -0.5, "d2": 0.001}}


def test_trec_format(tmp_path: Path) -> None:
    qrels = _write(tmp_path / "q.txt", "q1 0 d1 1\nq1\t0\td2\t0\n")
    assert read_qrels(qrels) == {"q1": {"d1": 1, "d2": 0}}
    # The rank column is ignored: the score alone orders the documents.
    run = _write(tmp_path / "r.txt", "q1 Q0 d1 2 0.9 tag\nq1 Q0 d2 1 0.1 tag\n")
    assert read_run(run) == {"q1": {"d1": 0.9, "d2": 0.1}}


def test_round_trips(tmp_path: Path) -> None:
    qrels = {"q1": {"d1": 3, "d2": 0}, "q2": {"d9": 1}}
    run = {"q1": {"d1": 0.25, "d2": 0.75, "d3": 0.75}, "q2": {"d9": -1.0}}
    write_qrels_trec(qrels, tmp_path / "q.trec")
    write_run_trec(run, tmp_path / "r.trec")
    write_tsv(qrels, tmp_path / "q.tsv")
    write_tsv(run, tmp_path / "r.tsv")
    assert read_qrels(tmp_path / "q.trec") == qrels == read_qrels(tmp_path / "q.tsv")
    assert read_run(tmp_path / "r.trec") == run == read_run(tmp_path / "r.tsv")
    first_lines = (tmp_path / "r.trec").read_text().splitlines()[:3]
    assert first_lines == ["q1 Q0 d3 1 0.75 pairank", "q1 Q0 d2 2 0.75 pairank", "q1 Q0 d1 3 0.25 pairank"]


@pytest.mark.parametrize(
    ("reader", "text", "message"),
    [
        (read_qrels, "q1 0 d1 1\nq1 0 d2\n", ":2: malformed qrels line: expected 4 fields"),
        (read_qrels, "query-id\tcorpus-id\tscore\nq1\td1\n", ":2: malformed qrels line: expected 3 fields"),
        (read_qrels, "q1\td1\t1\n", ":1: malformed qrels line"),  # a TSV without its header
        (read_qrels, "q1 0 d1 high\n", ":1: bad qrels value 'high'"),
        (read_qrels, "q1 0 d1 0.5\n", ":1: bad qrels value '0.5': relevance grade must be an integer"),
        (read_qrels, "q1 0 d1 1\nq1 0 d1 0\n", ":2: duplicate qrels entry"),
        (read_run, "q1 Q0 d1 1 0.5\n", ":1: malformed run line: expected 6 fields"),
        (read_run, "q1 Q0 d1 1 abc x\n", ":1: bad run value 'abc'"),
        (read_run, "q1 Q0 d1 1 nan x\n", ":1: bad run value 'nan': score is NaN"),
        (read_run, "query-id\tcorpus-id\tscore\n\td1\t0.5\n", ":2: empty query or document id"),
    ],
)
def test_malformed_lines_name_the_file_and_line(tmp_path: Path, reader, text: str, message: str) -> None:
    path = _write(tmp_path / "input.txt", text)
    with pytest.raises(ValueError) as error:
        reader(path)
    assert str(error.value).startswith(str(path))
    assert message in str(error.value)


def test_empty_file_reads_as_empty(tmp_path: Path) -> None:
    assert read_run(_write(tmp_path / "empty.tsv", "\n")) == {}
