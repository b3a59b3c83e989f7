"""benchmarks/quality/loop_forward.py's steps through the real app on the tiny model: the corpus and the
pairs before the cut are loaded, the block is ranked as the corpus serves it, a retraining runs and its
activation is awaited, and the page says "never worse" only when no metric fell."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from evaluation.datasets import BeirDataset
from evaluation.forward_splits import forward_splits
from tests.api.conftest import ClientFactory

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "quality" / "loop_forward.py"
TOPICS = ["moon", "bleach", "vaccine", "earth", "shark", "router", "python", "flight", "plastic", "carrot"]


def script() -> ModuleType:
    """The benchmark script as a module."""
    spec = importlib.util.spec_from_file_location("loop_forward_benchmark", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def judged() -> tuple[BeirDataset, list[str]]:
    """Ten claims, each asked twice in other words: 20 queries in time order."""
    corpus = {f"d{i}": f"The {t} claim {i} was rated false by the desk." for i, t in enumerate(TOPICS)}
    queries, qrels, order = {}, {}, []
    for form in ("is it true that the {} story number {} happened", "{} rumour {} checked?"):
        for i, topic in enumerate(TOPICS):
            query = f"q{len(order)}"
            queries[query], qrels[query] = form.format(topic, i), {f"d{i}": 1}
            order.append(query)
    return BeirDataset(corpus=corpus, queries=queries, qrels=qrels), order


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_the_loop_benchmark_ranks_retrains_and_ranks_again(make_client: ClientFactory) -> None:
    loop = script()
    client = make_client(admin_api_key=loop.ADMIN["X-API-Key"])
    data, order = judged()
    split = forward_splits(order, cuts=1, min_train=0.5)[0]
    assert loop.load(client, data, split) == 10
    assert client.get(f"/v1/corpora/{loop.CORPUS}/pairs").json()["counts"]["total"] == 10
    before = loop.served(client, data, list(split.validate), list(split.validate))
    assert before["ranking"]["mode"] == "hybrid" and 0 < before["all"]["MRR"] <= 1
    # Any candidate is activated (the measurement itself passes no options: the gate decides).
    options = {"epochs": 2, "batch_size": 4, "learning_rate": 1e-3, "cross_validation": "never",
               "min_improvement": -1, "require_significant": False}  # fmt: skip
    result = loop.retrain(client, options, timeout=300)
    assert result["status"] == "succeeded" and result["activation"] == "succeeded"
    after = loop.served(client, data, list(split.validate), list(split.validate))
    assert after["model"] == result["model_version"] != before["model"]
    row = {"cut": 0, "train_queries": 10, "validate_queries": 10, "train_pairs": 10, "loop": result,
           "before": before}  # fmt: skip
    machine = {"nproc": 2, "memory_gib": 1.0, "torch": "x", "date": "2026-11-28", "cpu_model": "cpu"}
    worse = {**after, "all": {**after["all"], "MRR": before["all"]["MRR"] - 0.01}}
    page = loop.report({"command": "c", "machine": machine, "rows": [{**row, "after": worse}]})
    assert "**Never worse** (after >= before on HasPositive@1, MRR at every cut): **False**" in page
    page = loop.report({"command": "c", "machine": machine, "rows": [{**row, "after": before}]})
    assert "**True**" in page


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_on_an_answer_corpus_the_loop_loads_negatives_and_ranks_each_question_among_its_own_answers(
    make_client: ClientFactory,
) -> None:
    """`--dataset cqa_a`: judged-bad answers are loaded as label 0, and each later question is ranked
    among its own judged answers (`candidates`), not the whole corpus."""
    loop = script()
    answers = loop.DATASETS["cqa_a"]
    client = make_client(admin_api_key=loop.ADMIN["X-API-Key"])
    data, order = judged()
    for i, query in enumerate(order):
        data.qrels[query][f"d{(i + 1) % len(TOPICS)}"] = 0  # a judged-bad answer beside the good one
    split = forward_splits(order, cuts=1, min_train=0.5)[0]
    assert loop.load(client, data, split, answers.kind) == 20
    counts = client.get(f"/v1/corpora/{loop.CORPUS}/pairs").json()["counts"]
    assert counts["total"] == 20 and client.get(f"/v1/corpora/{loop.CORPUS}").json()["kind"] == "answer"
    scored = loop.served(client, data, list(split.validate), list(split.validate), answers)
    assert set(scored["all"]) == set(answers.metrics)
    assert scored["ranking"]["mode"] == "dense"  # an answer corpus's default
    whole = loop.served(client, data, list(split.validate), list(split.validate), loop.DATASETS["pfcc"])
    assert whole["all"]["MRR"] <= scored["all"]["MRR"]  # two candidates rank the good one no lower
    machine = {"nproc": 2, "memory_gib": 1.0, "torch": "x", "date": "2026-11-29", "cpu_model": "cpu"}
    row = {"cut": 2, "train_queries": 10, "validate_queries": 10, "train_pairs": 20, "before": scored,
           "after": scored, "loop": {"gate": {"protocol": "dev", "delta": 0.0}, "minutes": 1.0}}  # fmt: skip
    page = loop.report({"command": "c", "machine": machine, "rows": [row]}, answers)
    assert "MAP before -> after" in page and "| 2 (10 -> 10) | 20 |" in page
