"""Match decisions on the shared PFCC-S train+dev, open-world and forward in time (issue: "checked before?").

The 800 judged tweets in file order (the time order), against the 10,369 Snopes claims, ranked as a
claim corpus serves them (the default model, hybrid a=0.2, the one first stage). Each tweet is decided in
both worlds: its claim present, and its claim (with its twins) left out. At each forward cut point the
whole calibration (evaluation/match_calibration.py: every decision model measured forward on the
earlier tweets, thresholds for auto-match precision .95 and "new" precision .90, the best refitted)
learns from the tweets before the cut and decides the block after it, whose tweets never trained or
chose anything. The scored block's claims are left out for a random half of its tweets (seeds 0-4),
the share the policy expects. Baselines: the raw top-1 cosine with its thresholds chosen the same way
(`cosine`) and the duplicates view's old fixed cosine 0.8 as an auto-match rule.

    nice -n 10 .venv/bin/python benchmarks/match_decisions.py [--data ../shared/data] [--cuts 3]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import command_line, machine  # noqa: E402

from evaluation.datasets import load_beir  # noqa: E402
from evaluation.decisions import KINDS, Thresholds, fit_model  # noqa: E402
from evaluation.forward_splits import forward_splits  # noqa: E402
from evaluation.match_calibration import calibrate, worlds  # noqa: E402
from evaluation.open_world import JudgedQuery, Outcome, outcomes, rates, training_rows  # noqa: E402
from evaluation.twins import twin_groups  # noqa: E402
from indexes.first_stage import MatrixCorpus  # noqa: E402
from indexes.fusion import RankingSetting  # noqa: E402

HERE = Path(__file__).resolve().parent
SETTING = RankingSetting("hybrid", 0.2)
TARGETS = {"match_precision": 0.95, "new_precision": 0.90, "absent_share": 0.5}
SEEDS = range(5)
CACHE = Path.home() / ".cache" / "pairank-bench"


def encoded(encode: Any, texts: list[str], name: str) -> np.ndarray:
    """Normalised vectors of the texts, cached by name (the corpus takes minutes on 2 cores)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / f"{name}-{len(texts)}.npy"
    if path.exists():
        return np.load(path)
    vectors = np.asarray(encode(texts), dtype=np.float32)
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    np.save(path, vectors)
    return vectors


def seeded(found: list[Outcome], seed: int) -> list[Outcome]:
    """One world per tweet: the claim left out for a random half of them."""
    rng = random.Random(seed)
    by_query: dict[int, list[Outcome]] = {}
    for position, outcome in enumerate(found):
        by_query.setdefault(position // 2, []).append(outcome)
    return [next(o for o in pair if o.absent == (rng.random() < 0.5)) for pair in by_query.values()]


def block_rates(found: list[Outcome], thresholds: Thresholds, min_words: int) -> list[dict[str, Any]]:
    """The block's rates for each seed's draw of absent claims (each world counted as drawn)."""
    return [vars(rates(seeded(found, seed), thresholds, 0.5, min_words)) for seed in SEEDS]


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Mean and standard deviation of each rate over cut points x seeds."""
    out: dict[str, Any] = {}
    for name in ("match_precision", "match_coverage", "new_precision", "new_coverage", "gold_shown"):
        values = [r[name] for r in rows if r[name] is not None]
        out[name] = {
            "mean": statistics.fmean(values) if values else None,
            "sd": statistics.stdev(values) if len(values) > 1 else None,
            "n": len(values),
        }
    return out


def run(data: Path, cuts: int, min_words: int) -> dict[str, Any]:
    """Every cut point's calibration and scored block; rates per decision model."""
    from evaluation.runner import make_encoder

    folder = data / "pfcc_snopes"
    train, dev = load_beir(folder, "train"), load_beir(folder, "dev")
    qrels = {**train.qrels, **dev.qrels}
    order = sorted(qrels, key=lambda q: int(q[1:]))  # q0..q799: the pairs' file (time) order
    encode, info = make_encoder("default", progress=True)
    doc_ids = list(train.corpus)
    doc_texts = [train.corpus[d] for d in doc_ids]
    doc_vectors = encoded(encode, doc_texts, "pfcc-corpus")
    query_texts = [{**train.queries, **dev.queries}[q] for q in order]
    query_vectors = encoded(encode, query_texts, "pfcc-queries")
    started = time.monotonic()
    neighbours = MatrixCorpus(doc_vectors, doc_texts).dense_hits(doc_vectors, 6, None)
    twins = twin_groups(doc_ids, doc_texts, ((i, j, s) for i, hits in enumerate(neighbours) for j, s in hits))
    relevant = [frozenset(d for d, g in qrels[q].items() if g > 0) for q in order]
    asked = list(zip(query_texts, query_vectors, relevant, strict=True))
    judged = worlds(doc_ids, doc_texts, doc_vectors, asked, SETTING, twins)
    results: dict[str, list[dict[str, Any]]] = {kind: [] for kind in (*KINDS, "chosen", "cosine 0.8")}
    cut_rows = []
    all_forward: list[Outcome] = []
    for split in forward_splits([q.query for q in judged], cuts, 0.4):
        earlier, block = judged[: split.cut], judged[split.cut : split.cut + len(split.validate)]
        calibration = calibrate(earlier, TARGETS["absent_share"], TARGETS["match_precision"],
                                TARGETS["new_precision"], min_words)  # fmt: skip
        for kind in KINDS:
            model = fit_model(kind, *training_rows(earlier, 0.5))
            th = calibration.kinds[kind]["thresholds"]
            found = outcomes(model, block)
            results[kind] += block_rates(found, Thresholds(th["match"], th["new"]), min_words)
        chosen = outcomes(calibration.model, block)
        all_forward += chosen
        results["chosen"] += block_rates(chosen, calibration.thresholds, min_words)
        fixed = fixed_cosine(block)
        results["cosine 0.8"] += block_rates(fixed, Thresholds(0.8, 0.0), 0)
        cut_rows.append({"cut": split.cut, "block": len(block), "chosen": calibration.kind,
                         "thresholds": vars(calibration.thresholds)})  # fmt: skip
    return {
        "dataset": "PFCC-S train+dev (800 tweets, file order), 10,369 claims",
        "setting": SETTING.label,
        "targets": TARGETS,
        "min_words": min_words,
        "twins": {"groups": len(twins), "documents": sum(len(g) for g in twins)},
        "cuts": cut_rows,
        "models": {kind: summary(rows) for kind, rows in results.items()},
        "by_length": by_length(all_forward, cut_rows),
        "seconds": round(time.monotonic() - started, 1),
        "encoder": info,
    }


def fixed_cosine(block: list[JudgedQuery]) -> list[Outcome]:
    """The old rule: the top hit is a match when its cosine is at least 0.8 (no calibration)."""
    found = []
    for q in block:
        for absent, candidates in ((False, q.present), (True, q.absent)):
            best = max(candidates, key=lambda c: c.cosine) if candidates else None
            found.append(
                Outcome(
                    absent,
                    best.cosine if best else 0.0,
                    bool(best and best.doc_id in q.gold),
                    any(c.doc_id in q.gold for c in candidates),
                    q.words,
                )  # fmt: skip
            )
    return found


def by_length(found: list[Outcome], cuts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Auto-match precision of present tweets by word count, at a high probability (what min_words rules)."""
    rows = []
    for low, high in ((1, 3), (4, 6), (7, 10_000)):
        inside = [o for o in found if low <= o.words <= high and not o.absent and o.probability >= 0.5]
        rows.append({"words": f"{low}-{high}", "count": len(inside),
                     "right": sum(o.right_if_matched for o in inside)})  # fmt: skip
    return rows


def main(argv: list[str] | None = None) -> None:
    """Run and write benchmarks/match_decisions.json."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=HERE.parent.parent / "shared" / "data")
    parser.add_argument("--cuts", type=int, default=3)
    parser.add_argument("--min-words", type=int, default=4)
    args = parser.parse_args(argv)
    result = run(args.data, args.cuts, args.min_words)
    result["command"] = command_line("match_decisions.py", argv)
    result["machine"] = machine()
    (HERE / "match_decisions.json").write_text(json.dumps(result, indent=2, default=str) + "\n")
    print(json.dumps(result["models"], indent=2))


if __name__ == "__main__":
    main()
