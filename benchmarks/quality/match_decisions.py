"""Match decisions on the shared PFCC-S train+dev, open-world and forward in time.

The 800 judged tweets in file order (the time order), against the 10,369 Snopes claims, ranked as a
claim corpus serves them (the default model, hybrid a=0.2, the one first stage), each in both worlds:
its claim present, and its claim (with its twins) left out. At each of 3 forward cut points the whole
calibration (evaluation/match_calibration.py: every decision model measured forward on the earlier
tweets, thresholds for auto-match precision .95 and "new" precision .90, the best refitted) learns from
the tweets before the cut and decides the block after it, whose tweets never trained or chose anything;
the block's claims are left out for a random half of its tweets (seeds 0-4), the share the policy
expects (`pairank evaluate --open-world 0.5 --split train,dev` runs the same protocol). Beside it: each
decision model at its own thresholds (`cosine` is the raw top cosine made a probability: the
threshold-on-cosine baseline), and the duplicates view's old rule, a fixed cosine 0.8, as auto-match.
Writes benchmarks/match_decisions.json, .md (between its GENERATED markers) and .png.

    nice -n 10 .venv/bin/python benchmarks/quality/match_decisions.py [--data ../shared/data] [--cuts 3]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench_common import command_line, machine  # noqa: E402

from evaluation.datasets import load_beir  # noqa: E402
from evaluation.decision_plots import calibration_figure, threshold_curves  # noqa: E402
from evaluation.decisions import Thresholds, decide  # noqa: E402
from evaluation.forward_splits import forward_splits  # noqa: E402
from evaluation.match_calibration import calibrate, forward_evaluation, one_world_each, rate_summary, worlds  # noqa: E402
from evaluation.open_world import JudgedQuery, Outcome, outcomes, rates, reliability  # noqa: E402
from evaluation.open_world_eval import dataset_worlds  # noqa: E402
from indexes.fusion import RankingSetting  # noqa: E402

HERE = Path(__file__).resolve().parents[1]
SETTING = RankingSetting("hybrid", 0.2)
TARGETS = {"match_precision": 0.95, "new_precision": 0.90, "absent_share": 0.5}
SEEDS = (0, 1, 2, 3, 4)
CACHE = Path.home() / ".cache" / "pairank-bench"
START, END = "<!-- GENERATED:START -->", "<!-- GENERATED:END -->"


class CachedEncoder:
    """The default model as the service serves it, its vectors cached on disk by the texts' hash."""

    def __init__(self) -> None:
        self.encode: Any = None
        self.info: dict[str, Any] = {}

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        key = hashlib.sha256("\x00".join(texts).encode()).hexdigest()[:16]
        path = CACHE / f"{key}-{len(texts)}.npy"
        if path.exists():
            return np.load(path)
        if self.encode is None:
            from evaluation.runner import make_encoder

            self.encode, self.info = make_encoder("default", progress=True)
        vectors = np.asarray(self.encode(list(texts)), dtype=np.float32)
        CACHE.mkdir(parents=True, exist_ok=True)
        np.save(path, vectors)
        return vectors


def fixed_cosine(block: Sequence[JudgedQuery]) -> list[Outcome]:
    """The old rule: the top hit is a match when its cosine is at least 0.8 (nothing calibrated)."""
    found = []
    for q in block:
        for absent, candidates in ((False, q.present), (True, q.absent)):
            best = max(candidates, key=lambda c: c.cosine) if candidates else None
            found.append(Outcome(absent, best.cosine if best else 0.0, bool(best and best.doc_id in q.gold),
                                 any(c.doc_id in q.gold for c in candidates), q.words))  # fmt: skip
    return found


def by_length(decided: Sequence[tuple[Outcome, Thresholds]]) -> list[dict[str, Any]]:
    """Would-be auto-matches (the probability reached the threshold) by word count, and how many were
    right: what the `min_words` rule is chosen on."""
    rows = []
    for low, high in ((1, 3), (4, 6), (7, 12), (13, 10_000)):
        inside = [(o, th) for o, th in decided if low <= o.words <= high and o.probability >= th.match]
        right = sum(1 for o, _ in inside if o.right_if_matched and not o.absent)
        queries = sum(1 for o, _ in decided if low <= o.words <= high) // 2  # two worlds per tweet
        label = f"{low}-{high}" if high < 10_000 else f"{low}+"
        rows.append({"words": label, "auto_matches": len(inside), "right": right, "queries": queries})
    return rows


def short_texts(data: Path, encode: CachedEncoder, judged: list[JudgedQuery], twins: list[list[str]],
                cut: int, lengths: Sequence[int] = (2, 3, 4, 5, 6, 8)) -> list[dict[str, Any]]:  # fmt: skip
    """The later tweets cut to their first n words, decided by the calibration of the earlier ones:
    how often would-be auto-matches are right at each length (what `min_words` is chosen on)."""
    corpus = load_beir(data / "pfcc_snopes", "train").corpus
    doc_ids = list(corpus)
    doc_texts = [corpus[d] for d in doc_ids]
    doc_vectors = encode(doc_texts)
    doc_vectors = doc_vectors / np.maximum(np.linalg.norm(doc_vectors, axis=1, keepdims=True), 1e-12)
    calibration = calibrate(judged[:cut], 0.5, TARGETS["match_precision"], TARGETS["new_precision"], 0)
    later = judged[cut:]
    rows = []
    for n in lengths:
        texts = [" ".join(q.query.split()[:n]) for q in later]
        vectors = encode(texts)
        vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        asked = [(text, vector, q.gold) for text, vector, q in zip(texts, vectors, later, strict=True)]
        cut_worlds = worlds(doc_ids, doc_texts, doc_vectors, asked, SETTING, twins)
        found = [o for o in outcomes(calibration.model, cut_worlds) if not o.absent]
        matched = [o for o in found if o.probability >= calibration.thresholds.match]
        rows.append({"words": n, "tweets": len(found), "auto_matches": len(matched),
                     "right": sum(o.right_if_matched for o in matched)})  # fmt: skip
    return rows


def run(data: Path, cuts: int, min_words: int) -> tuple[dict[str, Any], bytes]:
    """The forward report, the baseline, the length table and the picture."""
    encode = CachedEncoder()
    started = time.monotonic()
    judged, twins = dataset_worlds(encode, data / "pfcc_snopes", ["train", "dev"], SETTING)
    decided: list[tuple[Outcome, Thresholds]] = []
    report = forward_evaluation(judged, cuts, TARGETS["absent_share"], TARGETS["match_precision"],
                                TARGETS["new_precision"], min_words, SEEDS, decided)  # fmt: skip
    baseline = []
    for split in forward_splits([q.query for q in judged], cuts, 0.4):
        found = fixed_cosine(judged[split.cut : split.cut + len(split.validate)])
        baseline += [vars(rates(one_world_each(found, 0.5, s), Thresholds(0.8, 0.0), 0.5, 0)) for s in SEEDS]
    report["models"]["cosine 0.8 (old rule)"] = rate_summary(baseline)
    forward = [o for o, _ in decided]
    th = report["cuts"][-1]["thresholds"]
    figure = calibration_figure(
        reliability(forward), threshold_curves(forward, 0.5, min_words), th,
        f"PFCC-S forward: {report['cuts'][-1]['kind']} decisions, 3 cut points (last cut's thresholds)",
    )  # fmt: skip
    unlisted = sum(1 for q in judged if not any(c.doc_id in q.gold for c in q.present))
    right_new = sum(
        1 for o, t in decided if o.absent and decide(o.probability, t, o.words >= min_words) == "new"
    )
    return {
        "dataset": "PFCC-S train+dev: 800 tweets in file order, 10,369 claims",
        "ranking": SETTING.label,
        "targets": TARGETS,
        "min_words": min_words,
        "seeds": list(SEEDS),
        "twins": {"groups": len(twins), "documents": sum(len(g) for g in twins)},
        **report,
        "by_length": by_length(decided),
        "short_texts": short_texts(data, encode, judged, twins, report["cuts"][-1]["cut"]),
        "present_claim_not_in_top_10": unlisted / len(judged),
        "absent_said_new": right_new,
        "seconds": round(time.monotonic() - started, 1),
        "encoder": encode.info,
    }, figure


def cell(summary: dict[str, Any]) -> str:
    """mean +- sd, in percent."""
    if summary["mean"] is None:
        return "never decided"
    sd = f" +- {100 * summary['sd']:.1f}" if summary["sd"] is not None else ""
    return f"{100 * summary['mean']:.1f}{sd}"


def markdown(result: dict[str, Any]) -> str:
    """The tables between the GENERATED markers."""
    names = ("match_precision", "match_coverage", "new_precision", "new_coverage", "gold_shown")
    lines = ["| decision model | " + " | ".join(n.replace("_", " ") for n in names) + " |",
             "| --- |" + " ---: |" * len(names)]  # fmt: skip
    for model, row in result["models"].items():
        lines.append(f"| {model} | " + " | ".join(cell(row[n]) for n in names) + " |")
    lines += ["", "| cut point | tweets after it | model kept | match threshold | new threshold |",
              "| ---: | ---: | --- | ---: | ---: |"]  # fmt: skip
    for cut in result["cuts"]:
        t = cut["thresholds"]
        lines.append(f"| {cut['cut']} | {cut['block']} | {cut['kind']} | {t['match']:.3f} | {t['new']:.3f} |")
    lines += [
        "",
        "| words in the tweet | tweets | would-be auto-matches | right |",
        "| --- | ---: | ---: | ---: |",
    ]
    for row in result["by_length"]:
        lines.append(f"| {row['words']} | {row['queries']} | {row['auto_matches']} | {row['right']} |")
    lines += ["", "| the later tweets cut to | would-be auto-matches | right | precision |",
              "| ---: | ---: | ---: | ---: |"]  # fmt: skip
    for row in result["short_texts"]:
        share = f"{100 * row['right'] / row['auto_matches']:.1f}" if row["auto_matches"] else "-"
        lines.append(
            f"| {row['words']} words | {row['auto_matches']} of {row['tweets']} | {row['right']} | {share} |"
        )
    unlisted = 100 * result["present_claim_not_in_top_10"]
    lines += ["", f"Twins found: {result['twins']['groups']} groups, {result['twins']['documents']} claims. "
              f"Tweets whose claim is in the corpus but not among the 10 candidates: {unlisted:.1f}%.",
              f"Machine: {result['machine']['cpu_model']}, {result['machine']['nproc']} CPUs; "
              f"{result['seconds']} s after encoding. Command: `{result['command']}`."]  # fmt: skip
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """Run; write benchmarks/match_decisions.json, .png and the tables of .md."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=HERE.parent.parent / "shared" / "data")
    parser.add_argument("--cuts", type=int, default=3)
    parser.add_argument("--min-words", type=int, default=4)
    args = parser.parse_args(argv)
    result, figure = run(args.data, args.cuts, args.min_words)
    result["command"] = command_line("quality/match_decisions.py", argv)
    result["machine"] = machine()
    (HERE / "match_decisions.json").write_text(json.dumps(result, indent=2, default=str) + "\n")
    (HERE / "match_decisions.png").write_bytes(figure)
    print(write_page(result))


def write_page(result: dict[str, Any]) -> str:
    """The tables into benchmarks/match_decisions.md between its markers; returns them."""
    page = HERE / "match_decisions.md"
    text = page.read_text() if page.exists() else f"# Match decisions\n\n{START}\n{END}\n"
    head, _, rest = text.partition(START)
    tables = markdown(result)
    page.write_text(f"{head}{START}\n{tables}\n{END}{rest.partition(END)[2]}")
    return tables


if __name__ == "__main__":
    main()
