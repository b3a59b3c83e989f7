"""Export (TREC qrels read back by evaluation.trec_io, the queries as JSONL, judgements as CSV) and import
of judged pairs, with a broken line refused by number and field (both databases)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from fastapi.testclient import TestClient

from evaluation.trec_io import read_qrels
from tests.api.conftest import add_claims

BASE = "/v1/corpora/claims/judgements"
JUDGE = "/v1/corpora/claims/pairs/judgement"


def test_export_trec_jsonl_and_csv(client: TestClient, tmp_path: Path) -> None:
    add_claims(client)
    for query, doc, label in (("moon landing staged", "c1", 1), ("moon landing staged", "c5", 0),
                              ("bleach cures covid", "c2", 1)):  # fmt: skip
        assert client.put(JUDGE, json={"query": query, "document_id": doc, "label": label}).status_code == 200
    trec = client.get(f"{BASE}/export", params={"format": "trec"})
    assert trec.status_code == 200 and trec.headers["content-type"].startswith("text/plain")
    (tmp_path / "qrels.txt").write_text(trec.text)
    qrels = read_qrels(tmp_path / "qrels.txt")
    assert sorted(sorted(docs.items()) for docs in qrels.values()) == [[("c1", 1), ("c5", 0)], [("c2", 1)]]
    assert all(" " not in qid for qid in qrels)
    queries = [
        json.loads(line)
        for line in client.get(f"{BASE}/export", params={"format": "jsonl"}).text.splitlines()
    ]
    assert {q["text"] for q in queries} == {"moon landing staged", "bleach cures covid"}
    assert {q["id"] for q in queries} == set(qrels)
    rows = list(csv.DictReader(io.StringIO(client.get(f"{BASE}/export", params={"format": "csv"}).text)))
    assert [(r["document_id"], r["judged_by"], r["grade"]) for r in rows] == [
        ("c1", "anonymous", "1.0"), ("c5", "anonymous", "0.0"), ("c2", "anonymous", "1.0")
    ]  # fmt: skip
    bad = client.get(f"{BASE}/export", params={"format": "xml"})
    assert bad.status_code == 422 and bad.json()["errors"][0]["field"] == "format"


def test_import_jsonl_and_csv(client: TestClient) -> None:
    add_claims(client)
    text = '{"query": "moon landing staged", "document_id": "c1", "label": 1, "note": "same"}\n\n' \
           '{"query": "moon landing staged", "document_id": "c2", "label": 0}\n'  # fmt: skip
    done = client.post(f"{BASE}/import", json={"format": "jsonl", "text": text})
    assert done.status_code == 200, done.text
    assert done.json() == {"judged": 2, "pairs": 2}
    table = (
        "query,document_id,label,note\nbleach cures covid,c2,1,\nmoon landing staged,c1,0,changed my mind\n"
    )
    assert client.post(f"{BASE}/import", json={"format": "csv", "text": table}).json() == {
        "judged": 2,
        "pairs": 3,
    }
    judgements = client.get(BASE).json()["judgements"]
    assert len(judgements) == 3  # one judge: the second file changed its judgement of (moon, c1)
    moon = next(j for j in judgements if j["document_id"] == "c1")
    assert moon["grade"] == 0 and moon["note"] == "changed my mind"


def test_a_broken_line_is_refused_by_number_and_field(client: TestClient) -> None:
    add_claims(client)
    cases = [
        (
            "jsonl",
            '{"query": "q", "document_id": "c1", "label": 1}\n{"query": "q", "document_id": "c1"\n',
            "text",
            "line 2",
        ),
        (
            "jsonl",
            '{"query": "q", "document_id": "c1", "label": 1}\n\n{"query": "q", "label": 1}\n',
            "document_id",
            "line 3",
        ),
        ("jsonl", '{"query": "q", "document_id": "c1", "label": "yes"}\n', "label", "line 1"),
        ("jsonl", '{"query": "q", "document_id": "c1", "label": 3}\n', "label", "line 1"),
        ("jsonl", '{"query": "q", "document_id": "nope", "label": 1}\n', "document_id", "line 1"),
        ("csv", "query,document_id,label\nq,c1,1\nq,c2,\n", "label", "line 3"),
        ("csv", "query,label\nq,1\n", "text", "line 1"),
    ]
    for kind, text, field, where in cases:
        refused = client.post(f"{BASE}/import", json={"format": kind, "text": text})
        assert refused.status_code == 422, (text, refused.text)
        assert refused.json()["field"] == field and refused.json()["detail"].startswith(where), refused.text
    assert client.get("/v1/corpora/claims/pairs").json()["counts"]["total"] == 0  # all or nothing
