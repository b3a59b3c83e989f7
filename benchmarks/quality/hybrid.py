"""Dense, lexical and hybrid ranking on the shared dev sets, with grouped cross-validated selection.

For each dataset: encode once with the serving encoder (`auto`: OpenVINO int8 on this CPU) and the
zero-shot default model, or `--model` (a fine-tuned run folder), score every setting of
`evaluation.hybrid_eval.setting_grid` on every dev query, then choose a setting by 5-fold grouped
cross-validation (queries sharing a relevant document stay in one fold). Writes benchmarks/hybrid.json
and the tables of benchmarks/hybrid.md between its GENERATED markers.

    nice -n 10 .venv/bin/python benchmarks/quality/hybrid.py [--data ../shared/data] [--model default]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any, Literal

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench_common import command_line, machine  # noqa: E402

from evaluation.datasets import load_beir  # noqa: E402
from evaluation.hybrid_eval import candidate_scores, per_query_values, score_settings  # noqa: E402
from evaluation.runner import make_encoder  # noqa: E402
from evaluation.selection import cross_validated_choice, group_folds, query_groups  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
# (label, folder, mode, selection metric, metrics shown)
DATASETS: list[tuple[str, str, Literal["retrieval", "rerank"], str, tuple[str, ...]]] = [
    (
        "PFCC-S",
        "pfcc_snopes",
        "retrieval",
        "MRR",
        ("HasPositive@1", "HasPositive@5", "HasPositive@50", "MRR"),
    ),
    ("CQA-A", "semeval_cqa/subtaskA", "rerank", "MAP", ("MAP", "MRR")),
    ("CQA-B", "semeval_cqa/subtaskB", "rerank", "MAP", ("MAP", "MRR")),
]
FOLDS = 5


def run_dataset(encode: Any, folder: Path, mode: Literal["retrieval", "rerank"], metric: str,
                shown: tuple[str, ...]) -> dict[str, Any]:  # fmt: skip
    """Every setting's means, and the cross-validated choice by `metric`."""
    data = load_beir(folder, "dev")
    candidates = candidate_scores(encode, data, mode, depth=100)
    names = list(dict.fromkeys([metric, *shown]))
    reports = score_settings(candidates, data.qrels, names)
    table = {label: {m: report.means[m] for m in names} for label, report in reports.items()}
    per_query = per_query_values(reports, metric)
    groups = query_groups(data.qrels)
    folds = {seed: cross_validated_choice(per_query, group_folds(groups, FOLDS, seed)) for seed in (0, 1, 2)}
    return {
        "queries": len(data.queries),
        "corpus": len(data.corpus),
        "groups": len(groups),
        "settings": table,
        "selection_metric": metric,
        "cv": {
            "choice": folds[0]["choice"],
            "cv_mean_per_seed": [folds[s]["cv_mean"] for s in folds],
            "cv_std_per_seed": [folds[s]["cv_std"] for s in folds],
            "chosen_per_fold": {s: folds[s]["chosen_per_fold"] for s in folds},
            "cv_mean": statistics.fmean(folds[s]["cv_mean"] for s in folds),
        },
    }


def main(argv: list[str] | None = None) -> int:
    """Score every dataset present and write hybrid.json."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--model", default="default")
    parser.add_argument("--output", type=Path, default=REPO / "benchmarks" / "hybrid.json")
    args = parser.parse_args(argv)
    encode, info = make_encoder(args.model, progress=False)
    results: dict[str, Any] = {}
    for label, folder, mode, metric, shown in DATASETS:
        if (args.data / folder).is_dir():
            results[label] = run_dataset(encode, args.data / folder, mode, metric, shown)
            best = results[label]["cv"]
            print(f"{label}: choice {best['choice']}, CV {metric} {best['cv_mean']:.4f}", flush=True)
    document = {
        "machine": machine(),
        "command": command_line("quality/hybrid.py", argv),
        "model": info,
        "results": results,
    }
    args.output.write_text(json.dumps(document, indent=2, default=str) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
