"""`pairank train --cv K|forward`: choose settings and epoch count by cross-validation, then train the
final model on every labelled pair.

`--cv forward` (cv.scheme: forward) validates forward in time instead of in random folds: the pairs'
order is their time order, and each of K cut points trains on every earlier query and validates on the
block after it (evaluation/forward_splits.py); it is the estimate that holds for tomorrow's queries.

Grouped: all labelled pairs (the training pairs plus the dev set's) are judged by the one rule
(evaluation/judgements.py) and split into K folds whose query groups never straddle two folds (queries
sharing a relevant document stay together, evaluation/selection.py). For every grid point and seed,
each fold is held out once: the model trains on the other folds and is scored every epoch on the
held-out queries, ranked against the dev corpus when the dev set is a BEIR folder (as dev scoring does)
or against the pairs' own documents. Epoch 0 is the base model on the same folds: the zero-shot row.
The chosen point and epoch count maximise the mean over folds and seeds; `cv.json` in the run folder
records every fold's metric and the spread, and `final/` is the model trained on all pairs with them.
"""

from __future__ import annotations

import itertools
import json
import shutil
import statistics
from pathlib import Path
from typing import Any

import yaml

from evaluation.datasets import LabeledPair, load_beir, load_pairs
from evaluation.forward_splits import forward_splits
from evaluation.judgements import judge_pairs, write_beir
from evaluation.selection import group_folds, query_groups
from pairank import train_events
from training.config import CVConfig, TrainConfig, apply_overrides, config_from_dict, config_to_dict
from training.data import load_train_pairs
from training.evaluators import dev_ranking
from training.runs.folder import EventWriter, dump_json


def labelled_pairs(config: TrainConfig) -> tuple[list[LabeledPair], dict[str, str] | None]:
    """Every labelled pair (train + dev, documents rendered as training sees them) and the dev corpus."""
    train = load_train_pairs(config.data).as_labeled_pairs(raw=True)  # the judged ones: no view pairs
    dev = config.dev
    if dev.kind == "pairs" and dev.path:
        return train + load_pairs(dev.path), None
    if dev.kind == "beir" and dev.path:
        data = load_beir(dev.path, dev.split, with_titles=dev.with_titles)
        judged = [
            LabeledPair(data.queries[q], data.corpus[d], float(grade))
            for q, docs in data.qrels.items()
            for d, grade in docs.items()
            if d in data.corpus
        ]
        return train + judged, data.corpus
    return train, None


def fold_splits(
    pairs: list[LabeledPair], qrels: dict[str, dict[str, int]], queries: dict[str, str], cv: CVConfig
) -> list[tuple[set[str], set[str]]]:
    """Per fold, the query texts trained on and those validated on. Grouped: a fold's query groups are
    held out and all others train; forward: the pairs' order is time, each cut point's block is
    validated after training on every earlier query (later blocks are not used)."""
    if cv.scheme == "forward":
        ordered = list(dict.fromkeys(p.query for p in pairs))
        return [(set(s.train), set(s.validate)) for s in forward_splits(ordered, cv.folds, cv.min_train)]
    fold_of_text = {queries[q]: f for q, f in group_folds(query_groups(qrels), cv.folds).items()}
    texts = {p.query for p in pairs} | set(fold_of_text)  # unjudged queries always train
    return [
        (texts - (held := {t for t, f in fold_of_text.items() if f == fold}), held)
        for fold in range(cv.folds)
    ]


def _grid_points(grid: dict[str, list[Any]]) -> list[dict[str, Any]]:
    keys = list(grid)
    return [dict(zip(keys, values, strict=True)) for values in itertools.product(*(grid[k] for k in keys))]


def _on_pairs(config: TrainConfig, point: dict[str, Any], pairs_file: Path) -> dict[str, Any]:
    """The config as a dict with a grid point applied, training on `pairs_file` (rendered already)."""
    raw = apply_overrides(config_to_dict(config), [f"{k}={json.dumps(v)}" for k, v in point.items()])
    raw["data"] = {**raw["data"], "train_pairs": str(pairs_file), "document_titles": None, "limit": None}
    raw["seeds"] = 1
    return raw


def _fold_config(
    config: TrainConfig, point: dict[str, Any], seed: int, train_file: Path, dev_dir: Path
) -> TrainConfig:
    raw = _on_pairs(config, point, train_file)
    raw.update(seed=seed, progress_bar=False, keep="last")
    # The held-out fold, as a BEIR folder, scored by the config's own task and metric.
    raw["dev"] = {**raw["dev"], "kind": "beir", "path": str(dev_dir), "split": "dev", "with_titles": False}
    raw["dev"].update(metric=config.dev.metric, task=config.dev.task, limit=None)
    return config_from_dict(raw)


def _write_pairs(path: Path, pairs: list[LabeledPair]) -> Path:
    lines = (json.dumps({"query": p.query, "document": p.document, "label": p.label}) for p in pairs)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def run_cv(
    config: TrainConfig, cv: CVConfig, output: Path, events: EventWriter | None = None
) -> dict[str, Any]:
    """Cross-validate, train the final model, and return (and write) the cv.json summary."""
    from training.trainer import train

    if config.dev.task not in ("retrieval", "rerank"):
        raise ValueError("--cv needs a ranking dev task (retrieval or rerank)")
    pairs, corpus = labelled_pairs(config)
    everything = judge_pairs(pairs, corpus)
    splits = fold_splits(pairs, everything.qrels, everything.queries, cv)
    output.mkdir(parents=True, exist_ok=True)
    scores: dict[str, dict[int, list[float]]] = {}  # point label -> epoch -> fold x seed values
    runs: list[dict[str, Any]] = []
    points = _grid_points(cv.grid) or [{}]
    total = len(points) * cv.seeds * cv.folds
    for point_number, point in enumerate(points):
        label = json.dumps(point, sort_keys=True)
        for seed_offset, fold in itertools.product(range(cv.seeds), range(cv.folds)):
            if events is not None:  # fold models train silently: this is the parent's progress
                seed = config.seed + seed_offset
                events.emit(train_events.CV_FOLD, fold=fold, folds=cv.folds, seed=seed, point=point,
                            run=len(runs) + 1, runs=total)  # fmt: skip
            folder = fold_folder(output, point_number, seed_offset, fold)
            folder.mkdir(parents=True, exist_ok=True)
            trained_on, validated_on = splits[fold]
            held_in = [p for p in pairs if p.query in trained_on]
            held_out = [p for p in pairs if p.query in validated_on]
            dev_dir = write_beir(judge_pairs(held_out, corpus, split="dev"), folder / "dev")
            fold_config = _fold_config(
                config,
                point,
                config.seed + seed_offset,
                _write_pairs(folder / "train.jsonl", held_in),
                dev_dir,
            )
            _train_fold(fold_config, folder)
            history = json.loads((folder / "run" / "metrics.json").read_text())["history"]
            scored = [r for r in history if r["dev_metric"] is not None]  # eval_epochs: last skips some
            for record in scored:
                scores.setdefault(label, {}).setdefault(record["epoch_index"], []).append(
                    record["dev_metric"]
                )
            runs.append({"point": point, "seed": config.seed + seed_offset, "fold": fold,
                         "per_epoch": {r["epoch_index"]: r["dev_metric"] for r in scored}})  # fmt: skip
    table = {
        label: {
            epoch: {"mean": statistics.fmean(v), "std": statistics.stdev(v) if len(v) > 1 else 0.0}
            for epoch, v in sorted(per_epoch.items())
        }  # fmt: skip
        for label, per_epoch in scores.items()
    }
    trained = [(label, epoch) for label, per_epoch in table.items() for epoch in per_epoch if epoch > 0]
    best_label, best_epoch = max(trained, key=lambda item: table[item[0]][item[1]]["mean"])
    zero_shot = next(iter(table.values())).get(0)
    summary = {
        "scheme": cv.scheme,
        "folds": cv.folds,
        "seeds": cv.seeds,
        "metric": config.dev.metric,
        "ranking": dev_ranking(config.dev).label,  # the first stage every fold was scored through
        "queries": len(everything.queries),
        "groups": len(query_groups(everything.qrels)),
        "zero_shot": zero_shot,
        "chosen": {"point": json.loads(best_label), "epochs": best_epoch, **table[best_label][best_epoch]},
        "table": table,
        "runs": runs,
    }
    (output / "cv.json").write_text(dump_json(summary))  # the estimate stands before the final run
    if not cv.final:
        return summary
    final = _final_config(
        config, json.loads(best_label), best_epoch, _write_pairs(output / "all_pairs.jsonl", pairs)
    )
    (output / "final_config.yaml").write_text(yaml.safe_dump(config_to_dict(final), sort_keys=False))
    summary["final"] = train(final, output=output / "final", events=events)
    (output / "cv.json").write_text(dump_json(summary))
    return summary


def fold_folder(output: Path, point_number: int, seed_offset: int, fold: int) -> Path:
    """Where one fold model of a cross-validation lives: its pairs, held-out set and run folder."""
    return output / "folds" / f"p{point_number}-s{seed_offset}-f{fold}"


def _train_fold(config: TrainConfig, folder: Path) -> None:
    """Train one fold, unless the folder already holds a finished run of this very config (a rerun of
    an interrupted cross-validation resumes where it stopped)."""
    from training.trainer import train

    wanted = yaml.safe_dump(config_to_dict(config), sort_keys=False)
    done = folder / "fold_config.yaml"
    if (folder / "run" / "manifest.json").exists() and done.exists() and done.read_text() == wanted:
        return
    shutil.rmtree(folder / "run", ignore_errors=True)
    train(config, output=folder / "run", events=EventWriter(enabled=False))
    done.write_text(wanted)


def _final_config(config: TrainConfig, point: dict[str, Any], epochs: int, pairs_file: Path) -> TrainConfig:
    raw = _on_pairs(config, point, pairs_file)
    raw["dev"] = {**raw["dev"], "kind": "none"}
    raw["eval_before_training"] = False
    if len(raw["stages"]) == 1:  # the epoch count chosen by cross-validation
        raw["stages"][0]["epochs"] = epochs
    return config_from_dict(raw)
