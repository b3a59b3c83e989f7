"""Render benchmarks/training_results.json as the tables of benchmarks/training.md.

The tables replace whatever lies between the BEGIN/END markers of training.md; the prose around
them is written by hand.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

BEGIN, END = "<!-- BEGIN GENERATED TABLES -->", "<!-- END GENERATED TABLES -->"
SECTIONS = [
    (
        "PFCC-S dev (80 tweets ranked against all 10,369 claims)",
        "pfcc_snopes",
        ["HasPositive@1", "HasPositive@5", "HasPositive@50", "MRR", "MAP"],
    ),
    (
        "SemEval-2016 CQA-A dev (244 questions, re-rank 10 comments)",
        "semeval_cqa_a",
        ["MAP", "MRR", "SemEval-MAP@10"],
    ),
    ("STS-b dev (1,500 pairs)", "stsb", ["spearman", "pearson"]),
]


def _fmt(value: Any) -> str:
    return "" if value is None else f"{value:.4f}" if abs(value) <= 1 else f"{value:.2f}"


def _table(runs: list[dict[str, Any]], config: str, metrics: list[str]) -> list[str]:
    mine = [r for r in runs if r["config"] == config]
    if not mine:
        return ["(not run)"]
    lines = [
        "| model | " + " | ".join(metrics) + " | best epoch | selected on |",
        "|---|" + "---|" * (len(metrics) + 2),
    ]
    # One run per dataset scores the untouched base model (training_runs.ZERO_SHOT_FROM); the rest skip it.
    base = next((r for r in mine if r["zero_shot"]), None)
    if base:
        zs = base["zero_shot"]
        lines.append(
            "| zero-shot all-MiniLM-L6-v2 | " + " | ".join(_fmt(zs.get(m)) for m in metrics) + " | | |"
        )
    best = max(mine, key=lambda r: r["dev_metrics"][r["dev_metric"]])
    for r in mine:
        cells = [_fmt(r["dev_metrics"].get(m)) for m in metrics]
        if r is best:
            cells = [f"**{c}**" for c in cells]
        label = f"`{r['name']}`: {r['description']}"
        lines.append(f"| {label} | " + " | ".join(cells) + f" | {r['best_epoch']} | {r['dev_metric']} |")
    return lines


def _timing(runs: list[dict[str, Any]]) -> list[str]:
    lines = [
        "| run | batch order | train s/epoch | order s/epoch | order / train | dev eval s/epoch | total s |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in runs:
        shuffles = "+".join(stage["shuffle"] for stage in r["settings"]["stages"])
        evals = [e["eval_seconds"] for e in r["epochs"]]
        lines.append(
            f"| `{r['name']}` | {shuffles} | {r['mean_train_seconds_per_epoch']} | "
            f"{r['mean_shuffle_seconds_per_epoch']} | {r['shuffle_overhead_ratio']:.1%} | "
            f"{sum(evals) / len(evals):.1f} | {r['training_seconds']:.0f} |"
        )
    return lines


def write_tables(results: Path, report: Path) -> None:
    """Replace the generated block of `report` with tables built from `results`."""
    data = json.loads(results.read_text())
    runs = data["runs"]
    block = [
        BEGIN,
        "",
        f"Machine: {data['machine']['cpu']}, {data['machine']['cores']} cores (shared), no GPU.",
        "",
    ]
    for title, config, metrics in SECTIONS:
        block += [f"### {title}", "", *_table(runs, config, metrics), ""]
    block += ["### Time per epoch (CPU)", "", *_timing(runs), "", END]
    text = report.read_text() if report.exists() else f"# Training results\n\n{BEGIN}\n{END}\n"
    head, rest = text.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    report.write_text(head + "\n".join(block) + tail)
    print(f"wrote tables into {report}")
