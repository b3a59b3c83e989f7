"""Calibrating match decisions on judged queries: measure every decision model forward, keep the best.

`calibrate` is the whole procedure the service runs on a corpus's judged pairs (and the benchmark runs
on each earlier part of the shared splits): each kind of decision model (evaluation/decisions.py) decides
the queries forward in time (evaluation/open_world.py); thresholds are chosen on those forward
probabilities for the target precisions; the kind that decides the most queries at the targets (auto-
matches of present claims plus `new` answers for absent ones, log loss breaking ties) is refitted on
every judged query. `worlds` builds the judged queries from vectors in memory (`MatrixCorpus`), as the
service builds them from its live store.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from evaluation.decision_features import Candidate
from evaluation.decisions import (
    DECISION_DEPTH,
    KINDS,
    DecisionModel,
    Thresholds,
    choose_thresholds,
    fit_model,
)
from evaluation.forward_splits import forward_splits
from evaluation.open_world import (
    JudgedQuery,
    Outcome,
    decision_report,
    forward_outcomes,
    outcomes,
    rates,
    training_rows,
)
from indexes.first_stage import MatrixCorpus, gather, rank_pool, sides_of, without
from indexes.fusion import RankingSetting

__all__ = [
    "Calibration",
    "calibrate",
    "forward_evaluation",
    "one_world_each",
    "thresholds_for",
    "worlds",
]


@dataclass(frozen=True)
class Calibration:
    """The chosen decision model, its thresholds, and what forward validation measured."""

    kind: str
    model: DecisionModel
    thresholds: Thresholds
    outcomes: list[Outcome]  # the chosen kind's forward outcomes (thresholds are re-derived from them)
    report: dict[str, Any]  # decision_report at the thresholds
    kinds: dict[str, dict[str, Any]]  # every kind tried: its report at its own thresholds, its log loss


def thresholds_for(
    found: Sequence[Outcome], absent_share: float, match_precision: float, new_precision: float
) -> Thresholds:
    """Thresholds for the targets on forward outcomes, each world weighted by the expected share."""
    probability = np.array([o.probability for o in found])
    right = np.array([o.right_if_matched and not o.absent for o in found])
    absent = np.array([o.absent for o in found])
    weights = np.where(absent, absent_share, 1.0 - absent_share)
    return choose_thresholds(probability, right, absent, weights, match_precision, new_precision)


def _log_loss(found: Sequence[Outcome], absent_share: float) -> float:
    """Weighted log loss of the best candidate's probability against its being a right match."""
    total = weight = 0.0
    for o in found:
        w = absent_share if o.absent else 1.0 - absent_share
        p = min(max(o.probability, 1e-6), 1 - 1e-6)
        y = o.right_if_matched and not o.absent
        total -= w * (math.log(p) if y else math.log(1 - p))
        weight += w
    return total / weight if weight else float("inf")


def calibrate(
    queries: Sequence[JudgedQuery],
    absent_share: float,
    match_precision: float,
    new_precision: float,
    min_words: int,
    folds: int = 3,
    kinds: Sequence[str] = KINDS,
) -> Calibration:
    """The best decision model for these judged queries (oldest first), measured forward."""
    tried: dict[str, tuple[list[Outcome], Thresholds, dict[str, Any], float]] = {}
    for kind in kinds:
        found = forward_outcomes(queries, kind, absent_share, folds)
        thresholds = thresholds_for(found, absent_share, match_precision, new_precision)
        report = decision_report(found, thresholds, absent_share, min_words)
        tried[kind] = (found, thresholds, report, _log_loss(found, absent_share))
    best = max(
        tried,
        key=lambda k: (tried[k][2]["match_coverage"] + tried[k][2]["new_coverage"], -tried[k][3]),
    )
    features, labels, weights = training_rows(queries, absent_share)
    model = fit_model(best, features, labels, weights)
    found, thresholds, report, _ = tried[best]
    summary = {
        kind: {**report_, "log_loss": loss, "thresholds": {"match": th.match, "new": th.new}}
        for kind, (_, th, report_, loss) in tried.items()
    }
    return Calibration(best, model, thresholds, found, report, summary)


def worlds(
    doc_ids: Sequence[str],
    doc_texts: Sequence[str],
    doc_vectors: np.ndarray,
    queries: Sequence[tuple[str, np.ndarray, frozenset[str]]],
    setting: RankingSetting,
    twins: Sequence[Sequence[str]] = (),
    depth: int = DECISION_DEPTH,
) -> list[JudgedQuery]:
    """Judged queries (text, vector, relevant ids) in both worlds over a corpus held in memory; a
    relevant document's twins are right matches too, and leave the corpus with it."""
    corpus = MatrixCorpus(doc_vectors, doc_texts)
    row_of = {doc_id: row for row, doc_id in enumerate(doc_ids)}
    group_of: Mapping[str, Sequence[str]] = {member: group for group in twins for member in group}
    vectors = np.asarray([vector for _, vector, _ in queries], dtype=np.float32)
    pools = gather(corpus, [text for text, _, _ in queries], vectors, depth, sides_of(setting))
    judged = []
    for (text, _, relevant), pool in zip(queries, pools, strict=True):
        gold = frozenset(d for r in relevant for d in group_of.get(r, [r]))
        gone = [row_of[d] for d in gold if d in row_of]

        def listed(hits: list[Any]) -> list[Candidate]:
            return [
                Candidate(doc_ids[h.doc_id], doc_texts[h.doc_id], rank, h.cosine, h.lexical or 0.0)
                for rank, h in enumerate(hits, start=1)
            ]

        present = listed(rank_pool(pool, setting, depth))
        absent = listed(rank_pool(without(pool, gone), setting, depth))
        judged.append(JudgedQuery(text, gold, present, absent))
    return judged


def one_world_each(found: Sequence[Outcome], absent_share: float, seed: int) -> list[Outcome]:
    """Outcomes of queries decided in both worlds (present, absent, in turn), one world kept per query:
    the claim left out for a random `absent_share` of them (the protocol as a desk meets it)."""
    rng = random.Random(seed)
    return [found[i + 1] if rng.random() < absent_share else found[i] for i in range(0, len(found) - 1, 2)]


def forward_evaluation(
    queries: Sequence[JudgedQuery],
    cuts: int,
    absent_share: float,
    match_precision: float,
    new_precision: float,
    min_words: int,
    seeds: Sequence[int] = (0, 1, 2, 3, 4),
    decided: list[tuple[Outcome, Thresholds]] | None = None,
) -> dict[str, Any]:
    """The calibration judged as a desk would meet it: at each forward cut point, `calibrate` learns from
    the earlier queries only and decides the block after it, whose claims are left out for a random
    `absent_share` of its queries (one draw per seed); every decision model tried is scored the same
    way at its own thresholds. Returns each model's rates (mean and sd over cut points x seeds);
    `decided` collects the chosen model's outcomes (both worlds) with the thresholds they met."""
    rows: dict[str, list[dict[str, Any]]] = {kind: [] for kind in (*KINDS, "chosen")}
    chosen: list[dict[str, Any]] = []
    for split in forward_splits([q.query for q in queries], cuts, 0.4):
        earlier, block = (
            list(queries[: split.cut]),
            list(queries[split.cut : split.cut + len(split.validate)]),
        )
        calibration = calibrate(earlier, absent_share, match_precision, new_precision, min_words)
        models = {kind: fit_model(kind, *training_rows(earlier, absent_share)) for kind in KINDS}
        for kind, model in [*models.items(), ("chosen", calibration.model)]:
            th = (
                calibration.thresholds
                if kind == "chosen"
                else Thresholds(**calibration.kinds[kind]["thresholds"])
            )
            found = outcomes(model, block)
            if kind == "chosen" and decided is not None:
                decided += [(outcome, th) for outcome in found]
            for seed in seeds:
                kept = one_world_each(found, absent_share, seed)
                rows[kind].append(vars(rates(kept, th, absent_share, min_words)))
        chosen.append({"cut": split.cut, "block": len(block), "kind": calibration.kind,
                       "thresholds": asdict(calibration.thresholds)})  # fmt: skip
    return {"cuts": chosen, "models": {kind: rate_summary(values) for kind, values in rows.items()}}


def rate_summary(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Each rate's mean, standard deviation and count over rows (a rate never decided is left out)."""
    out: dict[str, Any] = {}
    for name in ("match_precision", "match_coverage", "new_precision", "new_coverage", "gold_shown"):
        values = [r[name] for r in rows if r[name] is not None]
        out[name] = {
            "mean": statistics.fmean(values) if values else None,
            "sd": statistics.stdev(values) if len(values) > 1 else None,
            "n": len(values),
        }
    return out
