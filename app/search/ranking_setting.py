"""How a corpus ranks, and how that is chosen: one record shape for every stored ranking choice.

A request's choices win, then the corpus's stored choice for the serving model, then the corpus's
default ranking, then dense. A choice is made on judged queries by grouped cross-validation (queries
sharing a relevant document stay in one fold) and stored by `ranking_record`, whether
`calibrate-ranking` or the retraining gate made it; `stored_setting` reads it (and any record an older
release stored, which lacks the newer keys).

The corpus's ranking may also hold a re-ranking stage (`rerank`: a registered cross-encoder re-orders
the first stage's top k), off unless set; it holds whatever model serves and whatever calibration the
first stage uses, and a request may turn it off, or change its depth or blend (`resolve_rerank`). A
retraining job that trained a re-ranker with its bi-encoder, and whose gate chose the two together,
stores the stage in the calibration it made for that bi-encoder: it serves while that model does
(`served_rerank_record`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from evaluation.hybrid_eval import per_query_values, setting_grid
from evaluation.metrics import RankingReport
from evaluation.selection import cross_validated_choice, group_folds, query_groups
from indexes.fusion import DEFAULT_ALPHA, RankingSetting
from indexes.rerank import DEFAULT_RERANK_K, MAX_RERANK_K

__all__ = [
    "DEFAULT_RERANK_K",
    "MAX_RERANK_K",
    "RankingChoice",
    "RankingRequest",
    "RankingSetting",
    "RerankRequest",
    "RerankSetting",
    "choose_ranking",
    "given_ranking",
    "ranking_record",
    "resolve_mode",
    "resolve_rerank",
    "served_rerank_record",
    "served_setting",
    "stored_rerank",
    "stored_setting",
]


@dataclass(frozen=True)
class RerankSetting:
    """A re-ranking stage: the registered cross-encoder `model` re-orders the first stage's top `k`, by
    its score, or blended with the first stage's (each min-max scaled over the k) when `weight` < 1."""

    model: str
    k: int = DEFAULT_RERANK_K
    weight: float = 1.0  # the cross-encoder's share of the blend; 1: its order alone


@dataclass(frozen=True)
class RerankRequest:
    """What a request asked of the re-ranking stage; None fields: the corpus's."""

    enabled: bool = True
    model: str | None = None
    k: int | None = None
    weight: float | None = None


@dataclass(frozen=True)
class RankingRequest:
    """What a request asked for; None: the corpus's calibration for the serving model, else the default."""

    mode: str | None = None
    alpha: float | None = None
    fusion: str | None = None
    rerank: RerankRequest | None = None


def stored_setting(record: Mapping[str, Any] | None) -> RankingSetting | None:
    """A stored ranking (a calibration, a gate's choice, a corpus default) as a setting; None if none."""
    if not record or not record.get("mode"):
        return None
    alpha = record.get("alpha")
    return RankingSetting(
        str(record["mode"]),
        float(alpha if alpha is not None else DEFAULT_ALPHA),
        str(record.get("fusion") or "linear"),
    )


def stored_rerank(record: Mapping[str, Any] | None) -> RerankSetting | None:
    """The re-ranking stage a corpus's ranking holds; None when it has none."""
    stage = (record or {}).get("rerank")
    if not isinstance(stage, Mapping) or not stage.get("model"):
        return None
    weight = stage.get("weight")
    return RerankSetting(
        str(stage["model"]), int(stage.get("k") or DEFAULT_RERANK_K), float(1.0 if weight is None else weight)
    )


def resolve_rerank(
    requested: RerankRequest | None, default: Mapping[str, Any] | None
) -> RerankSetting | None:
    """The request's re-ranking choices over the corpus's stage; None when neither turns one on.
    ValueError when the request asks for one and names no model the corpus lacks."""
    stored = stored_rerank(default)
    if requested is None:
        return stored
    if not requested.enabled:
        return None
    model = requested.model or (stored.model if stored is not None else None)
    if model is None:
        raise ValueError("the corpus has no re-ranking stage and the request names no model")
    base = stored or RerankSetting(model)
    return RerankSetting(
        model,
        requested.k if requested.k is not None else base.k,
        requested.weight if requested.weight is not None else base.weight,
    )


def resolve_mode(
    requested: RankingRequest | None,
    calibrated: Mapping[str, Any] | None,
    model: str,
    default: Mapping[str, Any] | None = None,
) -> RankingSetting:
    """The request's choices, then the corpus's calibration (only if made with `model`), then the
    corpus's default ranking, then dense."""
    asked = requested or RankingRequest()
    saved = calibrated if calibrated and calibrated.get("model") == model else default
    base = stored_setting(saved) or RankingSetting("dense", DEFAULT_ALPHA)
    return RankingSetting(
        mode=asked.mode or base.mode,
        alpha=float(asked.alpha if asked.alpha is not None else base.alpha),
        fusion=asked.fusion or base.fusion,
    )


class CorpusRankings(Protocol):
    """What a corpus holds of its ranking: a corpus row, or the copy its opened index keeps."""

    @property
    def ranking_calibration(self) -> Mapping[str, Any] | None: ...

    @property
    def default_ranking(self) -> Mapping[str, Any] | None: ...


def served_setting(corpus: CorpusRankings, requested: RankingRequest | None, model: str) -> RankingSetting:
    """The setting a corpus request ranks by with `model` serving: `resolve_mode` over the corpus's own."""
    return resolve_mode(requested, corpus.ranking_calibration, model, corpus.default_ranking)


def served_rerank_record(corpus: CorpusRankings | None, model: str) -> Mapping[str, Any] | None:
    """The record whose `rerank` stage a corpus request runs with `model` serving: the calibration made
    with `model` where it holds one (a retraining gate chose that re-ranker with that bi-encoder, so
    activating another model, a rollback included, takes it away with its bi-encoder), else the corpus's
    default ranking."""
    if corpus is None:
        return None
    calibrated = corpus.ranking_calibration
    if calibrated and calibrated.get("model") == model and calibrated.get("rerank"):
        return calibrated
    return corpus.default_ranking


@dataclass(frozen=True)
class RankingChoice:
    """A ranking setting for one model, with the judged queries' verdict on it and on every other one."""

    setting: RankingSetting
    value: float  # the setting's metric over every query
    settings: dict[str, float]  # every setting of the grid, by label: its metric over every query
    cv_mean: float | None = None  # held-out metric of the setting chosen on the other folds, averaged
    cv_std: float | None = None  # (both None when the setting was given, not chosen)
    chosen_per_fold: list[str] = field(default_factory=list)


def choose_ranking(
    reports: Mapping[str, RankingReport], qrels: Mapping[str, Mapping[str, int]], metric: str, folds: int
) -> RankingChoice:
    """The setting with the best mean `metric` over all queries, estimated by grouped cross-validation
    on at most `folds` folds (one per query group when there are fewer)."""
    groups = query_groups(qrels)
    fold_of = group_folds(groups, min(folds, len(groups)))
    chosen = cross_validated_choice(per_query_values(reports, metric), fold_of)
    setting = next(s for s in setting_grid() if s.label == chosen["choice"])
    means = dict(chosen["means"])
    return RankingChoice(
        setting, means[setting.label], means, chosen["cv_mean"], chosen["cv_std"], chosen["chosen_per_fold"]
    )


def given_ranking(
    setting: RankingSetting, reports: Mapping[str, RankingReport], metric: str
) -> RankingChoice:
    """A setting taken as it is (stored, or a default), beside every setting's metric."""
    settings = {label: report.means[metric] for label, report in reports.items()}
    return RankingChoice(setting, settings[setting.label], settings)


def ranking_record(
    model: str, choice: RankingChoice, metric: str, queries: int, task: str, source: str, calibrated_at: str
) -> dict[str, Any]:
    """A corpus's `ranking_calibration`: the choice for `model`, and what it was chosen on and by whom."""
    return {
        "model": model,
        **asdict(choice.setting),
        "metric": metric,
        "value": choice.value,
        "cv_mean": choice.cv_mean,
        "cv_std": choice.cv_std,
        "chosen_per_fold": list(choice.chosen_per_fold),
        "settings": dict(choice.settings),
        "queries": queries,
        "task": task,
        "source": source,
        "calibrated_at": calibrated_at,
    }
