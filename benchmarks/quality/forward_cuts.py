"""The files of benchmarks/quality/forward_quality.py's cut points: each cut's earlier training pairs,
its later validation block (BEIR) and the block's unseen query ids, in `work/cutN`; and the config's
shared-data paths rebased onto `--data`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from evaluation.datasets import LabeledPair, load_beir
from evaluation.forward_splits import forward_splits, unseen_queries
from evaluation.judgements import judge_pairs, write_beir
from training.config import config_from_dict
from training.cross_validation import labelled_pairs
from training.data import scale_labels

SHARED_DATA = "../shared/data"


def rebased(raw: Any, data: Path) -> Any:
    """The config with its `../shared/data` paths pointing into `data` (a copy travels to a GPU box)."""
    if isinstance(raw, dict):
        return {k: rebased(v, data) for k, v in raw.items()}
    if isinstance(raw, list):
        return [rebased(v, data) for v in raw]
    return (
        str(data) + raw[len(SHARED_DATA) :] if isinstance(raw, str) and raw.startswith(SHARED_DATA) else raw
    )


def write_cuts(raw: dict[str, Any], work: Path, cuts: int, min_train: float) -> list[dict[str, Any]]:
    """Each cut point's training pairs, validation block (BEIR) and unseen query ids, in `work/cutN`."""
    pairs, corpus = labelled_pairs(config_from_dict(raw))
    label_range = raw["data"].get("label_range")
    if label_range:  # ANTIQUE's grades 1-4: 3-4 relevant, as the loss, the judging and the re-ranker count
        scaled = scale_labels(np.array([p.label for p in pairs], dtype=np.float64), label_range)
        pairs = [LabeledPair(p.query, p.document, float(y)) for p, y in zip(pairs, scaled, strict=True)]
    everything = judge_pairs(pairs, corpus)
    text_of = everything.queries
    id_of = {text: qid for qid, text in text_of.items()}
    ordered = [id_of[q] for q in dict.fromkeys(p.query for p in pairs) if q in id_of]
    described = []
    for number, split in enumerate(forward_splits(ordered, cuts, min_train)):
        folder = work / f"cut{number}"
        folder.mkdir(parents=True, exist_ok=True)
        trained = {text_of[q] for q in split.train}
        validated = {text_of[q] for q in split.validate}
        rows = [json.dumps({"query": p.query, "document": p.document, "label": p.label}) for p in pairs
                if p.query in trained]  # fmt: skip
        (folder / "train.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
        write_beir(
            judge_pairs([p for p in pairs if p.query in validated], corpus, split="dev"), folder / "dev"
        )
        dev_id_of = {text: qid for qid, text in load_beir(folder / "dev", "dev").queries.items()}
        unseen = [dev_id_of[text_of[q]] for q in unseen_queries(split, everything.qrels)]
        (folder / "unseen.json").write_text(json.dumps(unseen))
        sizes = {"train_queries": len(split.train), "validate_queries": len(split.validate)}
        described.append({"cut": split.cut, **sizes, "unseen_queries": len(unseen)})
    return described
