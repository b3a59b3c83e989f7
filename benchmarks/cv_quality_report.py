"""Render benchmarks/cv_quality.json as the cross-validated table of benchmarks/hybrid.md (between its
CV QUALITY markers).

    .venv/bin/python benchmarks/cv_quality_report.py
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
METRICS = ["HasPositive@1", "HasPositive@5", "HasPositive@50", "MRR"]
BEGIN, END = "<!-- BEGIN CV QUALITY -->", "<!-- END CV QUALITY -->"


def cell(entry: dict[str, float]) -> str:
    """mean +- sd as four decimals."""
    return f"{entry['mean']:.4f} +- {entry['std']:.4f}"


def gain(entry: dict[str, float]) -> str:
    """A paired gain in points, with its sd and whether it exceeds two sd."""
    mean, std = 100 * entry["mean"], 100 * entry["std"]
    mark = " **(>2 sd)**" if mean > 2 * std and mean > 0 else ""
    return f"{mean:+.2f} +- {std:.2f}{mark}"


def runs_of(document: dict[str, Any]) -> list[dict[str, Any]]:
    """The runs behind the table (the first format held one run, best-of-epochs fold models)."""
    if "runs" in document:
        return list(document["runs"])
    first = {k: document[k] for k in ("machine", "command", "training_seconds", "scoring_seconds")}
    seeds = sorted({row["seed"] for row in document["rows"]})
    return [{**first, "seeds": seeds, "fold_models": "best of epochs 1-3 on the held-out fold"}]


def render(document: dict[str, Any]) -> str:
    """The table: every model and setting, mean +- sd over folds x seeds, then the paired gains."""
    table = document["table"]
    lines = [
        f"{document['folds']} grouped folds x {document['seeds']} seed(s) over {document['queries']} PFCC-S "
        f"queries ({document['groups']} query groups), each held-out fold ranked against all 10,369 claims; "
        f"fine-tuning: `pfcc_snopes.yaml` for {document['epochs']} epochs on the other folds. Runs:",
        "",
        *(
            f"- seed(s) {', '.join(str(s) for s in run['seeds'])}: fold training "
            f"{run['training_seconds'] / 60:.0f} min, scoring {run['scoring_seconds'] / 60:.0f} min on "
            f"{run['machine']['nproc']} CPU cores ({run['machine'].get('cpu_model', 'CPU')}); fold models: "
            f"{run['fold_models']}; `{run['command']}`"
            for run in runs_of(document)
        ),
        "",
        "| model / ranking | n | " + " | ".join(METRICS) + " | gain HP@1 (points) | gain MRR (points) |",
        "|---|---|" + "---|" * (len(METRICS) + 2),
    ]
    for label, entry in table.items():
        values = " | ".join(cell(entry[m]) for m in METRICS)
        gains = f"{gain(entry['gain']['HasPositive@1'])} | {gain(entry['gain']['MRR'])}"
        lines.append(f"| {label} | {entry['n']} | {values} | {gains} |")
    lines += ["", "Gains are paired per fold and seed against zero-shot dense on the same held-out queries."]
    return "\n".join(lines)


def main() -> int:
    """Replace the CV QUALITY section of hybrid.md with the rendered table."""
    document = json.loads((HERE / "cv_quality.json").read_text())
    target = HERE / "hybrid.md"
    text = target.read_text()
    section = f"{BEGIN}\n{render(document)}\n{END}"
    if BEGIN in text:
        text = re.sub(re.escape(BEGIN) + ".*?" + re.escape(END), lambda _: section, text, flags=re.S)
    else:
        text += f"\n{section}\n"
    target.write_text(text)
    print(render(document))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
