"""Render benchmarks/cv_quality[_DATASET].json as the cross-validated tables of benchmarks/hybrid.md
(between its CV QUALITY markers; other datasets' sections are added at the end the first time).

    .venv/bin/python benchmarks/quality/cv_quality_report.py
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[1]
NAMES = {"pfcc": "PFCC-S", "cqa_a": "CQA-A", "cqa_b": "CQA-B", "antique": "ANTIQUE"}


def markers(dataset: str) -> tuple[str, str]:
    """The BEGIN and END comments around a dataset's table in hybrid.md."""
    tag = "" if dataset == "pfcc" else f" {dataset}"
    return f"<!-- BEGIN CV QUALITY{tag} -->", f"<!-- END CV QUALITY{tag} -->"


def cell(entry: dict[str, float]) -> str:
    """mean +- sd as four decimals."""
    return f"{entry['mean']:.4f} +- {entry['std']:.4f}"


def gain(entry: dict[str, float], n: int = 2) -> str:
    """A paired gain in points, with its sd and whether it exceeds two sd (never said of one run: its
    sd is 0 by construction, not a measured spread)."""
    mean, std = 100 * entry["mean"], 100 * entry["std"]
    mark = " **(>2 sd)**" if n >= 2 and mean > 2 * std and mean > 0 else ""
    return f"{mean:+.2f} +- {std:.2f}{mark}"


def render(document: dict[str, Any]) -> str:
    """The table: every model and setting, mean +- sd over folds x seeds, then the paired gains."""
    table, dataset, metrics = document["table"], document["dataset"], document["metrics"]
    first, second = document["gains"]
    against, config = document["ranked_against"], document["config"]
    lines = [
        f"{document['folds']} grouped folds x {document['seeds']} seed(s) over {document['queries']} "
        f"{NAMES[dataset]} queries ({document['groups']} query groups), each held-out query ranked against "
        f"{against}; fine-tuning: `{config}.yaml` for {document['epochs']} epochs on the other folds. Runs:",
        "",
        *(
            f"- seed(s) {', '.join(str(s) for s in run['seeds'])}: fold training "
            f"{run['training_seconds'] / 60:.0f} min, scoring {run['scoring_seconds'] / 60:.0f} min on "
            f"{run['machine']['nproc']} CPU cores ({run['machine'].get('cpu_model', 'CPU')}); fold models: "
            f"{run['fold_models']}; `{run['command']}`"
            for run in document["runs"]
        ),
        "",
        f"| model / ranking | n | {' | '.join(metrics)} | gain {first} (points) | gain {second} (points) |",
        "|---|---|" + "---|" * (len(metrics) + 2),
    ]
    for label, entry in table.items():
        values = " | ".join(cell(entry[m]) for m in metrics)
        gains = f"{gain(entry['gain'][first])} | {gain(entry['gain'][second])}"
        lines.append(f"| {label} | {entry['n']} | {values} | {gains} |")
    lines += ["", "Gains are paired per fold and seed against zero-shot dense on the same held-out queries."]
    return "\n".join(lines)


def main() -> int:
    """Replace each dataset's CV QUALITY section of hybrid.md with its rendered table."""
    target = HERE / "hybrid.md"
    text = target.read_text()
    for path in sorted(HERE.glob("cv_quality*.json")):
        document = json.loads(path.read_text())
        begin, end = markers(document["dataset"])
        section = f"{begin}\n{render(document)}\n{end}"
        if begin in text:
            before, _, rest = text.partition(begin)
            text = before + section + rest.partition(end)[2]
        else:
            text += f"\n{section}\n"
        print(render(document))
    target.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
