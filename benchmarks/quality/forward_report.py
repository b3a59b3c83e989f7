"""Render benchmarks/forward_quality_DATASET.json as the forward tables of benchmarks/forward.md (one
section per dataset, between its FORWARD markers; the rest of the page is kept as written), and
benchmarks/forward_stack_DATASET.json (the stack's own runs: zero-shot, fine-tuned, cross-encoder and
the two stacked, at the default ranking and top 20 only) between its FORWARD STACK markers.

    .venv/bin/python benchmarks/quality/forward_report.py
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench_common import machine_name, mean_sd
from cv_quality_report import NAMES, cell, gain

HERE = Path(__file__).resolve().parents[1]
PAGE = HERE / "forward.md"


def stack_row(label: str, document: dict[str, Any]) -> bool:
    """A stack table's row: a model at the default ranking, or a re-ranking of its top 20."""
    setting = label.split(" / ")[-2]
    return setting == document["default"] or setting.endswith("cross-encoder top 20")


# Each JSON family: its files, the tag of its markers in forward.md, its heading, the rows it shows.
SECTIONS: tuple[tuple[str, str, str, Callable[[str, dict[str, Any]], bool]], ...] = (
    ("forward_quality_*.json", "FORWARD", "###", lambda label, document: True),
    ("forward_stack_*.json", "FORWARD STACK", "####", stack_row),
)


# What the re-ranker adds to the very first stage it re-orders, paired per cut and seed: the defaults
# rule (the re-ranker on for a kind only where it wins beyond 2 sd) reads this, not the gain over zero-shot.
STAGES = (
    ("cross-encoder re-ranker", "zero-shot", "zero-shot"),
    ("fine-tuned + cross-encoder", "fine-tuned (config)", "fine-tuned"),
)
BLEND = " + 0.5 cross-encoder top 20"


def over_first_stage(document: dict[str, Any]) -> str:
    """A stack table's companion: each blended re-ranking's gain over its own first stage, per run."""
    default, metrics = document["default"], document["metrics"]
    scores = {(row["cut"], row["seed"], row["model"]): row["scores"] for row in document["rows"]}
    lines = [
        "What the blended cross-encoder adds to the first stage it re-orders, paired per cut point and "
        "seed (points; each run's gain in brackets):",
        "",
        f"| re-ranking over its first stage | n | {' | '.join(f'gain {m}' for m in metrics)} |",
        "|---|---|" + "---|" * len(metrics),
    ]
    for model, base, prefix in STAGES:
        setting = f"{prefix} {default}{BLEND}"
        pairs = [
            (
                ranked[setting]["all"],
                scores[(cut, None if base == "zero-shot" else seed, base)][default]["all"],
            )
            for (cut, seed, name), ranked in scores.items()
            if name == model and setting in ranked
        ]
        if not pairs:
            continue
        cells = []
        for metric in metrics:
            runs = [top[metric] - first[metric] for top, first in pairs]
            cells.append(
                f"{gain(mean_sd(runs), len(runs))} ({', '.join(f'{100 * run:+.2f}' for run in runs)})"
            )
        lines.append(f"| {setting} over {prefix} {default} | {len(pairs)} | {' | '.join(cells)} |")
    return "\n".join(lines)


def render(document: dict[str, Any], keep: Callable[[str, dict[str, Any]], bool] = SECTIONS[0][3]) -> str:
    """One dataset's forward table: every model and ranking (those `keep` keeps), all queries and the
    unseen ones."""
    metrics, (first, second) = document["metrics"], document["gains"]
    seeds = {
        c["cut"]: sorted({r["seed"] for r in document["rows"] if r["cut"] == c["cut"]} - {None})
        for c in document["cuts"]
    }
    uneven = (
        len({len(listed) for listed in seeds.values()}) > 1
    )  # a cut with more seeds than another: name them
    cuts = ", ".join(
        f"q0-q{c['cut'] - 1} -> next {c['validate_queries']} ({c['unseen_queries']} unseen"
        + (f"; seeds {', '.join(map(str, seeds[c['cut']]))})" if uneven else ")")
        for c in document["cuts"]
    )
    counted = (
        f", {sum(map(len, seeds.values()))} (cut point, seed) runs"
        if uneven
        else f" x {document['seeds']} seeds"
    )
    machine = machine_name(document["machine"])
    only = {"levers": [], "seconds": document["seconds"], "command": document["command"]}
    runs = document.get("runs", [only])
    lines = [
        f"{len(document['cuts'])} forward cut points{counted} "
        f"(`{document['config']}.yaml`, {document['epochs']} epochs), each block ranked against "
        f"{document['ranked_against']}. Trained on "
        f"-> validated on: {cuts}. Ran in {sum(run['seconds'] for run in runs) / 60:.0f} min, in these runs:",
        "",
        *(
            f"- {', '.join(run['levers'])} ({run['seconds'] / 60:.1f} min on {run.get('machine', machine)}): "
            f"`{run['command']}`"
            for run in runs
        ),
        "",
        f"Gains are paired per cut point and seed against the product default, zero-shot "
        f"{document['default']}; **(>2 sd)** marks a gain above twice its spread (n >= 2 only).",
        "",
        f"| model / ranking / queries | n | {' | '.join(metrics)} | gain {first} | gain {second} |",
        "|---|---|" + "---|" * (len(metrics) + 2),
    ]
    # Zero-shot first, the baseline every gain is paired with (a later --add run may have re-scored it).
    for label, entry in sorted(
        document["table"].items(), key=lambda item: not item[0].startswith("zero-shot /")
    ):
        if not keep(label, document):
            continue
        values = " | ".join(cell(entry[m]) for m in metrics)
        gains = f"{gain(entry['gain'][first], entry['n'])} | {gain(entry['gain'][second], entry['n'])}"
        lines.append(f"| {label} | {entry['n']} | {values} | {gains} |")
    if keep is stack_row:
        lines += ["", over_first_stage(document)]
    return "\n".join(lines)


def main() -> int:
    """Rewrite each dataset's section of forward.md from its JSON."""
    page = PAGE.read_text()
    for pattern, tag, heading, keep in SECTIONS:
        for path in sorted(HERE.glob(pattern)):
            page = placed(page, json.loads(path.read_text()), tag, heading, keep)
    PAGE.write_text(page)
    print(f"wrote {PAGE}")
    return 0


def placed(page: str, document: dict[str, Any], tag: str, heading: str, keep: Any) -> str:
    """The page with a document's section between its markers (added at the end the first time)."""
    begin = f"<!-- BEGIN {tag} {document['dataset']} -->"
    end = f"<!-- END {tag} {document['dataset']} -->"
    section = f"{begin}\n{heading} {NAMES[document['dataset']]}\n\n{render(document, keep)}\n{end}"
    if begin in page:
        return page[: page.index(begin)] + section + page[page.index(end) + len(end) :]
    return page.rstrip() + "\n\n" + section + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
