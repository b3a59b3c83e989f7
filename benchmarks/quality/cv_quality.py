"""Issue 15's cross-validated tables: zero-shot vs fine-tuned (with and without hard negatives), each
dense, lexical and hybrid, by grouped K-fold cross-validation over a dataset's train + dev pairs.

`--dataset pfcc` (default): PFCC-S with `training/configs/pfcc_snopes.yaml` (3 epochs as chosen by the
first cross-validation; `--epochs` overrides), the grid over hard negatives off/on, every held-out
query ranked against all 10,369 claims. `--dataset cqa_a|cqa_b`: SemEval CQA-A/B with their configs
(combo loss: no hard negatives), re-ranking each question's 10 candidates, MAP.

The folds and fold models come from `training.cross_validation.run_cv` (the code of `pairank train
--cv`): query groups never straddle two folds. Every held-out fold is ranked by the fold model and by
the zero-shot model through `evaluation.hybrid_eval` (each side's top 100, as the service ranks),
scored dense, lexical and hybrid (alpha 0.1 and 0.2, fixed in advance from benchmarks/hybrid.md, and
RRF). Gains are paired per fold and seed against zero-shot dense. Fold models keep their last epoch and
are scored once, after it (`keep: last`, `eval_epochs: last`). A rerun with the same --work folder
resumes finished folds (`--score-only` scores a finished run's folds from its cv.json without
training); `--first-seed N --add` trains seeds 42+N.. and adds their rows to the committed ones (a
seed per session on a CPU). Writes benchmarks/cv_quality[_DATASET].json; cv_quality_report.py renders
them into hybrid.md. PFCC-S: about 40 minutes of training per seed on 2 CPU cores, minutes on a GPU.

    nice -n 10 .venv/bin/python benchmarks/quality/cv_quality.py [--dataset pfcc|cqa_a|cqa_b] [--seeds 1]
        [--first-seed 0 [--add]] [--device auto|cpu|cuda]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench_common import command_line, machine, mean_sd  # noqa: E402

from evaluation.datasets import load_beir  # noqa: E402
from evaluation.hybrid_eval import RankingSetting, candidate_scores, fused_run  # noqa: E402
from evaluation.metrics import evaluate_ranking  # noqa: E402
from evaluation.runner import make_encoder  # noqa: E402
from training.config import CVConfig, TrainConfig, apply_overrides, config_from_dict, load_raw_config  # noqa: E402
from training.cross_validation import fold_folder, run_cv  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Dataset:
    """One cross-validated table: the training config, its ranking task and the metrics reported."""

    config: str
    task: str  # retrieval (against the whole corpus) or rerank (a query's own candidates)
    metrics: tuple[str, ...]
    gains: tuple[str, str]  # the two metrics whose paired gains the report shows
    hard_negatives: bool  # grid over hard negatives off/on (BSC configs only)
    output: str
    ranked_against: str  # what each held-out query is ranked against, for the report


RERANK_METRICS = ("MAP", "MRR", "HasPositive@1")
DATASETS = {
    "pfcc": Dataset("pfcc_snopes", "retrieval", ("HasPositive@1", "HasPositive@5", "HasPositive@50", "MRR"),
                    ("HasPositive@1", "MRR"), True, "cv_quality.json", "all 10,369 claims"),
    "cqa_a": Dataset("semeval_cqa_a", "rerank", RERANK_METRICS, ("MAP", "MRR"), False,
                     "cv_quality_cqa_a.json", "its question's 10 comments"),
    "cqa_b": Dataset("semeval_cqa_b", "rerank", RERANK_METRICS, ("MAP", "MRR"), False,
                     "cv_quality_cqa_b.json", "its question's 10 related questions"),
}  # fmt: skip
# Forward validation only (benchmarks/quality/forward_quality.py): ANTIQUE has no grouped-CV table.
FORWARD_DATASETS = {
    **DATASETS,
    "antique": Dataset("antique", "rerank", RERANK_METRICS, ("MRR", "HasPositive@1"), False,
                       "", "its question's judged answers (about 12)"),
}  # fmt: skip
SETTINGS = {
    "dense": RankingSetting("dense"),
    "lexical": RankingSetting("lexical"),
    "hybrid a=0.1": RankingSetting("hybrid", 0.1),
    "hybrid a=0.2": RankingSetting("hybrid", 0.2),
    "hybrid rrf": RankingSetting("hybrid", 0.0, "rrf"),
}
POINTS = {"fine-tuned": None, "fine-tuned + hard negatives": "hard"}


def hard_negatives(data: Path) -> dict[str, Any]:
    """One mined negative per pair from ranks 0-20 of all claims by the base model, mined once."""
    return {"count": 1, "window": 20, "remine": "once", "corpus": str(data / "pfcc_snopes" / "corpus.jsonl")}


def scored(encode: Any, dev_dir: Path, dataset: Dataset) -> dict[str, dict[str, float]]:
    """Each setting's metric means on one held-out fold."""
    data = load_beir(dev_dir, "dev")
    candidates = candidate_scores(encode, data, dataset.task, depth=100)  # type: ignore[arg-type]
    metrics = list(dataset.metrics)
    return {
        label: evaluate_ranking(data.qrels, fused_run(candidates, setting), metrics=metrics).means
        for label, setting in SETTINGS.items()
    }


def cached(encode: Any) -> Any:
    """The zero-shot encoder with a text cache: every fold ranks the same 10,369 claims."""
    memory: dict[str, np.ndarray] = {}

    def run(texts: list[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in memory]
        if missing:
            memory.update(zip(missing, encode(missing), strict=True))
        return np.stack([memory[t] for t in texts])

    return run


def summarise(rows: list[dict[str, Any]], metrics: tuple[str, ...]) -> dict[str, Any]:
    """Mean +- sd over folds x seeds of every (model, setting) and of its paired gain over zero-shot."""
    table: dict[str, Any] = {}
    for row in rows:
        base = row["zero-shot"]["dense"]
        for model in ("zero-shot", *POINTS):
            for setting, values in row.get(model, {}).items():
                entry = table.setdefault(f"{model} / {setting}", {"values": [], "gains": []})
                entry["values"].append(values)
                entry["gains"].append({m: values[m] - base[m] for m in metrics})

    return spread_table(table, metrics)


def spread_table(
    table: dict[str, dict[str, list[dict[str, float]]]], metrics: Sequence[str]
) -> dict[str, Any]:
    """Per label: n, mean +- sd of each metric over its `values`, and of its paired `gains`."""

    def spread(items: list[dict[str, float]], metric: str) -> dict[str, float]:
        return mean_sd([item[metric] for item in items])

    return {
        label: {
            "n": len(entry["values"]),
            **{m: spread(entry["values"], m) for m in metrics},
            "gain": {m: spread(entry["gains"], m) for m in metrics},
        }
        for label, entry in table.items()
    }


def dataset_arguments(
    doc: str | None, stem: str, seeds: int, forward: bool = False
) -> argparse.ArgumentParser:
    """The arguments the quality benchmarks share: dataset, data folder, work folder, output, seeds."""
    parser = argparse.ArgumentParser(description=(doc or "").splitlines()[0])
    choices = sorted(FORWARD_DATASETS if forward else DATASETS)
    parser.add_argument("--dataset", choices=choices, default="pfcc")
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--work", type=Path, help=f"default: data/bench/{stem}")
    parser.add_argument("--output", type=Path, help=f"default: benchmarks/{stem}.json")
    parser.add_argument("--seeds", type=int, default=seeds)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Cross-validate the fine-tuning configs, score every fold every way, write the dataset's JSON."""
    parser = dataset_arguments(__doc__, "cv_quality[_DATASET]", seeds=1)
    parser.add_argument("--first-seed", type=int, default=0, help="train seeds 42+N, 42+N+1, ...")
    parser.add_argument("--add", action="store_true", help="keep --output's rows of other seeds")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--epochs", type=int, help="default: the config's")
    parser.add_argument("--device", default="auto")
    parser.add_argument(
        "--score-only",
        action="store_true",
        help="score the folds of the finished run in --work (its cv.json)",
    )
    args = parser.parse_args(argv)
    dataset = DATASETS[args.dataset]
    suffix = "" if args.dataset == "pfcc" else f"_{args.dataset}"
    work = args.work or REPO / "data" / "bench" / f"cv_quality{suffix}"
    output = args.output or REPO / "benchmarks" / dataset.output
    device = None if args.device == "auto" else args.device
    started = time.perf_counter()
    raw = apply_overrides(
        load_raw_config(dataset.config),
        [f"device={args.device}", "progress_bar=false", "eval_before_training=false", "eval_epochs=last"],
    )
    if args.epochs:
        raw["stages"][0]["epochs"] = args.epochs
    raw["seed"] = raw.get("seed", TrainConfig.seed) + args.first_seed
    grid = [None, hard_negatives(args.data)] if dataset.hard_negatives else [None]
    cv = CVConfig(folds=args.folds, seeds=args.seeds, grid={"stages.0.hard_negatives": grid}, final=False)
    if args.score_only:
        summary = json.loads((work / "cv.json").read_text())
    else:
        summary = run_cv(config_from_dict(raw), cv, work)
    trained = time.perf_counter()
    print(f"folds trained in {trained - started:.0f} s", flush=True)
    zero_shot, info = make_encoder(
        "default", backend="torch", precision="fp32", device=device, progress=False
    )
    zero_shot = cached(zero_shot)
    rows: list[dict[str, Any]] = []
    training_seconds = 0.0  # the fold trainings' own time (epochs and per-epoch dev scoring)
    for run in summary["runs"]:
        point_number = grid.index(run["point"]["stages.0.hard_negatives"])
        folder = fold_folder(work, point_number, run["seed"] - raw["seed"], run["fold"])
        key = (run["seed"], run["fold"])
        row = next((r for r in rows if (r["seed"], r["fold"]) == key), None)
        if row is None:
            row = {
                "seed": run["seed"],
                "fold": run["fold"],
                "zero-shot": scored(zero_shot, folder / "dev", dataset),
            }
            rows.append(row)
        fine_tuned, _ = make_encoder(str(folder / "run"), backend="torch", precision="fp32",
                                     device=device, progress=False)  # fmt: skip
        name = (
            "fine-tuned" if run["point"]["stages.0.hard_negatives"] is None else "fine-tuned + hard negatives"
        )
        row[name] = scored(fine_tuned, folder / "dev", dataset)
        history = json.loads((folder / "run" / "metrics.json").read_text())["history"]
        parts = ("train_seconds", "shuffle_seconds", "mining_seconds", "eval_seconds")
        training_seconds += sum(record[part] for record in history for part in parts)
        print(f"seed {run['seed']} fold {run['fold']} {name}: {json.dumps(row[name]['dense'])}", flush=True)
    trained_seeds = sorted({int(row["seed"]) for row in rows})
    this_run: dict[str, Any] = {
        "seeds": trained_seeds,
        "machine": machine(),
        "command": command_line("quality/cv_quality.py", argv),
        "fold_models": "last epoch",
        "training_seconds": round(training_seconds, 1),
        "scoring_seconds": round(time.perf_counter() - trained, 1),
        "training_cv": {k: summary[k] for k in ("metric", "table", "runs")},
    }
    earlier = json.loads(output.read_text()) if args.add and output.exists() else {}
    runs = [r for r in earlier.get("runs", []) if not set(r["seeds"]) & set(trained_seeds)] + [this_run]
    rows = [r for r in earlier.get("rows", []) if r["seed"] not in trained_seeds] + rows
    document = {
        "dataset": args.dataset,
        "config": dataset.config,
        "metrics": list(dataset.metrics),
        "gains": list(dataset.gains),
        "ranked_against": dataset.ranked_against,
        "model": info,
        "folds": args.folds,
        "seeds": len({row["seed"] for row in rows}),
        "epochs": raw["stages"][0]["epochs"],
        "queries": summary["queries"],
        "groups": summary["groups"],
        "training_seconds": round(sum(r["training_seconds"] for r in runs), 1),
        "scoring_seconds": round(sum(r["scoring_seconds"] for r in runs), 1),
        "runs": runs,
        "rows": rows,
        "table": summarise(rows, dataset.metrics),
    }
    output.write_text(json.dumps(document, indent=2) + "\n")
    print(f"wrote {output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
