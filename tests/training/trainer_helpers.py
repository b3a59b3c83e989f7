"""Shared pieces of the trainer and `pairank train` tests: synthetic pairs and a tiny model on disk."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

WORDS = {
    "subject": ["the mayor", "a shark", "the senator", "my neighbour", "a robot", "the vaccine", "a farmer"],
    "verb": ["banned", "photographed", "cured", "sold", "invented", "painted", "hid"],
    "object": [
        "plastic bags",
        "the highway",
        "the moon",
        "cheap flights",
        "a router",
        "the election",
        "carrots",
    ],
}


def make_pairs(n: int, seed: int) -> list[dict[str, Any]]:
    """Claim-like documents and paraphrased queries that share most of their words."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        s, v, o = (rng.choice(WORDS[k]) for k in ("subject", "verb", "object"))
        out.append({"query": f"did {s} really {v} {o}?", "document": f"{s} {v} {o}.", "label": 1})
    return out


def build_setup(root: Path) -> dict[str, Path]:
    """A tiny model whose vocabulary covers the pairs, and train/dev pair files: {model, train, dev}."""
    import torch

    from tests.helpers.tiny_model import build_tiny_model

    train_pairs, dev_pairs = make_pairs(48, 0), make_pairs(12, 1)
    texts = [p[k] for p in train_pairs + dev_pairs for k in ("query", "document")]
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        model = build_tiny_model(root / "tiny", texts=texts, hidden_size=32, num_layers=1)
    finally:
        torch.set_num_threads(threads)
    paths = {"model": model, "train": root / "train.jsonl", "dev": root / "dev.jsonl"}
    for key, rows in (("train", train_pairs), ("dev", dev_pairs)):
        paths[key].write_text("".join(json.dumps(r) + "\n" for r in rows))
    return paths


def tiny_raw_config(setup: dict[str, Path], epochs: int) -> dict[str, Any]:
    """A BSC config on the tiny setup (retrieval dev by MRR), as the plain dict a YAML file holds."""
    stage = {"loss": "bsc", "epochs": epochs, "lr": 3e-3, "batch_size": 8, "shuffle": "none",
             "loss_params": {"temperature": 0.1}}  # fmt: skip
    return {
        "name": "tiny",
        "base_model": str(setup["model"]),
        "max_seq_length": 24,
        "progress_bar": False,
        "data": {"train_pairs": str(setup["train"])},
        "dev": {"kind": "pairs", "path": str(setup["dev"]), "task": "retrieval", "metric": "MRR"},
        "stages": [stage],
    }
