"""The cross-encoder re-ranker: groups from judged and mined negatives, and a trained model that ranks."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch

from evaluation.datasets import LabeledPair
from pairank.models import load_sentence_transformer, resolve_model
from tests.helpers.reranker import build_reranker_base
from tests.training.trainer_helpers import build_setup
from training.data import PairSet
from training.evaluators import model_encoder
from training.reranker import RERANKER_KIND, RerankerConfig, build_groups, load_reranker, train_reranker


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return build_setup(tmp_path_factory.mktemp("reranker"))


def test_groups_take_judged_negatives_first_then_mined_ones() -> None:
    pairs = PairSet(["q", "q", "q", "r"], ["pos", "bad1", "bad2", "rpos"], np.array([1, 0, 0, 1], np.float32))
    mined = [["m1", "m2", "pos"], [], [], ["m3", "rpos", "m4"]]
    groups = build_groups(pairs, mined, count=3, seed=0)
    assert [(g.query, g.positive) for g in groups] == [("q", "pos"), ("r", "rpos")]
    assert set(groups[0].negatives) == {"bad1", "bad2", "m1"}
    assert groups[1].negatives == ("m3", "m4")  # never the positive itself


def test_graded_labels_count_as_relevant_by_the_one_rule() -> None:
    # ANTIQUE's grades 1-4 scaled to [0, 1]: 3 and 4 are positives, 1 and 2 judged negatives.
    raw = [LabeledPair("q", d, g) for d, g in (("g4", 4), ("g3", 3), ("g2", 2), ("g1", 1))]
    pairs = PairSet.from_pairs(raw, label_range=(1, 4))
    groups = build_groups(pairs, [[], [], [], []], count=2, seed=0)
    assert [g.positive for g in groups] == ["g4", "g3"]
    assert all(set(g.negatives) == {"g2", "g1"} for g in groups)


def test_a_trained_reranker_prefers_the_positive(setup: dict[str, Path], tmp_path: Path) -> None:
    torch.manual_seed(0)
    torch.set_num_threads(1)
    rows = [json.loads(line) for line in setup["train"].read_text().splitlines()]
    pairs = PairSet.from_pairs([LabeledPair(r["query"], r["document"], 1.0) for r in rows])
    # The pre-trained base a re-ranker starts from (cut to two layers), as in the product.
    spec = resolve_model(str(build_reranker_base(tmp_path / "base")))
    encode = model_encoder(load_sentence_transformer(spec, device="cpu"))
    config = RerankerConfig(epochs=10, lr=1e-3, batch_size=8, negatives=7, window=8, max_length=32)
    manifest = train_reranker(pairs, spec, encode, tmp_path / "rr", config, progress=False)
    assert manifest["kind"] == RERANKER_KIND and manifest["groups"] == len(pairs)
    assert (tmp_path / "rr" / "training_curves.png").is_file() and (
        tmp_path / "rr" / "manifest.json"
    ).is_file()
    history = json.loads((tmp_path / "rr" / "metrics.json").read_text())["history"]
    # Eight candidates a group: an untrained head sits near ln 8; training must pull well below it.
    chance = math.log(1 + config.negatives)
    assert history[0]["train_loss"] > 0.8 * chance and history[-1]["train_loss"] < 0.75 * chance, history
    model = load_reranker(tmp_path / "rr")
    docs = sorted({r["document"] for r in rows})
    ranks = []
    for row in rows:
        scores = model.predict([(row["query"], d) for d in docs])
        ranks.append(int((scores > scores[docs.index(row["document"])]).sum()))
    assert np.mean(ranks) < 0.45 * len(docs), ranks  # a random order puts the positive mid-list (0.5)


def test_pairank_train_reranker_writes_a_run_the_registry_takes_as_a_cross_encoder(
    setup: dict[str, Path], tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    from pairank.models import CROSS_ENCODER, model_kind
    from training.cli import train

    corpus = tmp_path / "corpus.jsonl"  # a corpus export: more documents to mine negatives from
    corpus.write_text(
        "".join(json.dumps({"id": str(i), "text": f"claim number {i}."}) + "\n" for i in range(5))
    )
    pairs = ["--reranker", "--train-pairs", str(setup["train"])]
    arguments = [*pairs, "--base-model", str(setup["model"]), "--negatives-from", str(corpus),
                 "--output", str(tmp_path / "rr"), "--device", "cpu", "--no-progress-bar",
                 "--set", "reranker.epochs=1", "--set", "reranker.max_length=32"]  # fmt: skip
    assert train(arguments) == 0
    manifest = json.loads((tmp_path / "rr" / "manifest.json").read_text())
    assert manifest["kind"] == CROSS_ENCODER and model_kind(tmp_path / "rr") == CROSS_ENCODER
    assert "epochs: 1" in (tmp_path / "rr" / "config.yaml").read_text()
    done = json.loads(capfd.readouterr().out.strip().splitlines()[-1])  # stdout: JSON lines only
    assert done["event"] == "done" and done["manifest"]["weights_sha256"] == manifest["weights_sha256"]
    unknown = [*pairs, "--set", "reranker.depth=3"]
    assert train(unknown) == 2 and "unknown re-ranker setting 'depth'" in capfd.readouterr().err
