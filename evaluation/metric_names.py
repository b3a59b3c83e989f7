"""Metric names and their grammar (`MAP`, `MRR`, a family at a cutoff such as `nDCG@10`), without numpy.

The API's request models validate metric names with these (the Python client imports those models, and
must not pay for numpy); `evaluation.metrics` computes the metrics they name.
"""

from __future__ import annotations

import re

# Metric family (as written in a metric name) -> what it measures; `@k` families need a cutoff.
METRIC_FAMILIES: dict[str, str] = {
    "MAP": "mean average precision over the whole list (trec_eval map)",
    "MRR": "mean reciprocal rank of the first relevant document, no cutoff (recip_rank)",
    "MAP@k": "average precision within the top k, divided by all relevant documents (map_cut)",
    "MRR@k": "reciprocal rank of the first relevant document, 0 if it is below rank k",
    "HasPositive@k": "1 if a relevant document is in the top k (success_k)",
    "P@k": "relevant documents in the top k divided by k (P_k)",
    "Recall@k": "relevant documents in the top k divided by all relevant documents (recall_k)",
    "nDCG@k": "normalized DCG at k with linear gain = grade (ndcg_cut)",
    "SemEval-MAP@k": "SemEval CQA MAP: AP over the top k divided by the relevant documents found there",
}
_CUTOFF_FAMILIES = tuple(name[:-2] for name in METRIC_FAMILIES if name.endswith("@k"))
_METRIC_PATTERN = re.compile(r"^(?P<family>[A-Za-z-]+)(?:@(?P<k>[1-9][0-9]*))?$")


def parse_metric(name: str) -> tuple[str, int | None]:
    """Split a metric name into (family, cutoff); raise ValueError naming the valid metrics if unknown."""
    match = _METRIC_PATTERN.match(name)
    if match:
        family, cutoff = match.group("family"), match.group("k")
        if cutoff is None and family in ("MAP", "MRR"):
            return family, None
        if cutoff is not None and family in _CUTOFF_FAMILIES:
            return family, int(cutoff)
    valid = ", ".join(METRIC_FAMILIES)
    raise ValueError(f"unknown metric {name!r}; valid metrics are {valid} (k a positive integer)")


def is_valid_metric(name: str) -> bool:
    """True when `name` is a metric evaluate_ranking can compute (e.g. `MAP`, `nDCG@10`)."""
    try:
        parse_metric(name)
    except ValueError:
        return False
    return True
