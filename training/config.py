"""Training configuration: YAML files, `key=value` overrides and typed dataclasses.

A config names the base model, the training pairs, the dev set used for checkpoint selection and one or
more stages (sequential training: e.g. BSC then MSE), each with its own loss, epochs, learning rate and
batch order. Unknown keys are errors so that a typo in a config or an override never trains silently
with a default.
"""

from __future__ import annotations

import copy
import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import yaml

REPO_ROOT = Path(__file__).resolve().parents[1]
CONFIG_DIR = Path(__file__).resolve().parent / "configs"

T = TypeVar("T")


@dataclass
class NegativesConfig:
    """Sampled negatives for pointwise losses on positive-only data (the paper's PFCC-S MSE/triplet setup)."""

    strategy: str = "log_rank"  # rank the pool by the base model; take positions start + 2**k
    pool: str = "train"  # "train": documents of the other train pairs; "corpus": the `corpus` file
    corpus: str | None = None
    start: int = 100
    max_per_query: int | None = None  # keep this many, evenly spread over the log positions
    oversample_positives: bool = True  # repeat positives to balance them with the negatives


@dataclass
class HardNegativesConfig:
    """Mining settings of a stage (`hard_negatives:` in a stage of the YAML config)."""

    count: int = 1  # extra document columns per pair
    start: int = 0  # skip this many of the best-ranked non-positives
    window: int = 20  # draw from the next `window` candidates
    near_duplicate_cutoff: float = 0.95  # cosine to a positive at or above which a candidate is skipped
    remine: str = "epoch"  # "epoch": mine again with the current model every epoch; "once": first epoch only
    corpus: str | None = None  # a BEIR corpus.jsonl whose documents join the pool

    def validate(self, where: str) -> None:
        """Reject values that would fail mid-training."""
        if self.count < 1 or self.window < self.count or self.start < 0:
            raise ValueError(f"{where}: need count >= 1, window >= count and start >= 0")
        if not 0 < self.near_duplicate_cutoff <= 1:
            raise ValueError(f"{where}.near_duplicate_cutoff must be in (0, 1]")
        if self.remine not in {"epoch", "once"}:
            raise ValueError(f"{where}.remine must be epoch|once")


@dataclass
class CVConfig:
    """The `cv:` section: folds, seeds per fold, and a grid of overrides (`--set` paths -> values)."""

    folds: int = 5  # grouped: K folds; forward: K cut points
    seeds: int = 1
    # grouped: query groups in K random folds; forward: train on earlier queries (the pairs' order),
    # validate on later ones (evaluation/forward_splits.py), the estimate that holds for new queries
    scheme: str = "grouped"
    min_train: float = 0.4  # forward: the share of the queries before the first cut point
    grid: dict[str, list[Any]] = field(default_factory=dict)
    final: bool = True  # false: only estimate (cv.json), no final model on all pairs (benchmarks)


@dataclass
class DataConfig:
    """Training pairs (`{"query", "document", "label"}` JSONL) and how their labels are read."""

    train_pairs: str = ""
    label_range: list[float] | None = None  # [min, max]: labels rescaled to [0, 1] (STS-b 0-5, ANTIQUE 1-4)
    negatives: NegativesConfig | None = None
    # A BEIR corpus (folder or corpus.jsonl): second texts found in it get its title prefixed, the way
    # the evaluation module renders BEIR documents, so training sees what retrieval ranks.
    document_titles: str | None = None
    limit: int | None = None  # use only the first N pairs (smoke tests)
    # Self-supervised pairs from a BEIR corpus: each titled document gives (title, text), two views of
    # one claim, so every document of the corpus trains, not only the labelled ones.
    view_pairs: str | None = None
    view_pairs_limit: int | None = None  # at most this many (a seeded sample), None: every titled one


@dataclass
class DevConfig:
    """The dev set scored after every epoch; `metric` picks the best checkpoint."""

    kind: str = "split"  # beir | pairs | split (hold out part of train) | none
    path: str | None = None  # BEIR folder (kind=beir) or pairs JSONL (kind=pairs)
    split: str = "dev"
    task: str = "retrieval"  # beir: retrieval|rerank; pairs/split: retrieval|rerank|f1|spearman
    metric: str = "MRR"
    relevance_level: float = 1
    with_titles: bool = True  # beir: prefix document titles (BEIR's convention); PFCC-S trains on bare claims
    fraction: float = 0.1  # kind=split: share of train queries held out (the paper's 9:1)
    encode_batch_size: int = 128
    limit: int | None = None  # evaluate only the first N dev queries/pairs (smoke tests)
    # Ranking sets: the first stage that scores them ({mode, alpha, fusion}, as a corpus stores its
    # ranking): a retrain job passes the one its corpus serves, so fold models are judged as they would
    # be served (indexes/first_stage.py). None: dense.
    ranking: dict[str, Any] | None = None


@dataclass
class StageConfig:
    """One training stage: a loss, its batch order and optimiser settings."""

    name: str = "bsc"
    loss: str = "bsc"
    loss_params: dict[str, Any] = field(default_factory=dict)
    epochs: int = 3
    lr: float = 2e-5
    batch_size: int = 30
    warmup_ratio: float = 0.1
    weight_decay: float = 0.01
    bias_correction: bool = True  # standard AdamW; the paper's configs turn it off for non-CQA tasks
    betas: list[float] = field(default_factory=lambda: [0.9, 0.999])
    eps: float = 1e-6
    max_grad_norm: float | None = 1.0
    temperature_lr: float | None = None  # own learning rate for a trainable temperature (None: same as lr)
    shuffle: str = "example"
    shuffle_params: dict[str, Any] = field(default_factory=dict)
    init: str = "best"  # start from the best checkpoint so far ("best") or the previous stage's last ("last")
    hard_negatives: HardNegativesConfig | None = None  # mined extra document columns (BSC only)
    # Regularisation toward the base model: the embeddings and the first N transformer layers stay frozen.
    freeze_layers: int = 0


@dataclass
class TrainConfig:
    """A whole training run."""

    name: str = "run"
    base_model: str = "default"
    max_seq_length: int | None = 90
    seed: int = 42
    seeds: int = 1  # seed search: train with seed, seed+1, ... and keep the best on dev
    device: str = "auto"
    amp: str = "auto"  # auto: fp16 autocast + GradScaler on CUDA, off on CPU | fp16 | bf16 | off
    log_every: int = 10  # a `step` progress event every N optimiser steps
    eval_before_training: bool = True  # score the base model first (epoch 0 of the curves)
    select_base: bool = False  # may the untouched base model win checkpoint selection?
    keep: str = "best"  # best: the best dev epoch's weights; last: the last epoch's (dev only scored)
    # all: score the dev set after every epoch; last: only after each stage's last epoch (the dev scoring
    # can cost as much as an epoch; cross-validation at a fixed epoch count needs no curve)
    eval_epochs: str = "all"
    progress_bar: bool = True
    cpu_threads: int | None = None  # torch threads on the CPU (None: torch's default); 1 helps on busy hosts
    data: DataConfig = field(default_factory=DataConfig)
    dev: DevConfig = field(default_factory=DevConfig)
    stages: list[StageConfig] = field(default_factory=lambda: [StageConfig()])
    cv: CVConfig | None = None  # `pairank train --cv K` or this section: cross-validated selection
    # WiSE-FT: the saved weights are base + wise_ft * (fine-tuned - base); None (or 1) keeps the fine-tuned
    wise_ft: float | None = None


class ConfigError(ValueError):
    """A config file or override is malformed."""


def _build(cls: type[T], raw: Any, where: str) -> T:
    """Construct dataclass `cls` from a dict, recursing into nested configs and rejecting unknown keys."""
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: expected a mapping, got {type(raw).__name__}")
    fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(raw) - set(fields))
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {unknown}; allowed: {sorted(fields)}")
    nested = {
        "data": DataConfig,
        "dev": DevConfig,
        "negatives": NegativesConfig,
        "hard_negatives": HardNegativesConfig,
        "cv": CVConfig,
    }
    kwargs: dict[str, Any] = {}
    for key, value in raw.items():
        if key in nested and value is not None:
            kwargs[key] = _build(nested[key], value, f"{where}.{key}")
        elif key == "stages":
            if not isinstance(value, list) or not value:
                raise ConfigError(f"{where}.stages: expected a non-empty list")
            kwargs[key] = [_build(StageConfig, s, f"{where}.stages.{i}") for i, s in enumerate(value)]
        else:
            kwargs[key] = value
    return cls(**kwargs)


def config_from_dict(raw: dict[str, Any]) -> TrainConfig:
    """Build and validate a TrainConfig from a plain dict (as read from YAML)."""
    config = _build(TrainConfig, raw, "config")
    if isinstance(config.amp, bool):  # YAML 1.1 reads a bare `off` / `on` as a boolean
        config.amp = "auto" if config.amp else "off"
    validate(config)
    return config


def validate(config: TrainConfig) -> None:
    """Check value ranges that would otherwise fail late, mid-training."""
    if config.seeds < 1:
        raise ConfigError("seeds must be >= 1")
    if config.amp not in {"auto", "fp16", "bf16", "off"}:
        raise ConfigError(f"amp must be auto|fp16|bf16|off, got {config.amp!r}")
    if config.keep not in {"best", "last"}:
        raise ConfigError(f"keep must be best|last, got {config.keep!r}")
    if config.eval_epochs not in {"all", "last"}:
        raise ConfigError(f"eval_epochs must be all|last, got {config.eval_epochs!r}")
    if config.dev.kind not in {"beir", "pairs", "split", "none"}:
        raise ConfigError(f"dev.kind must be beir|pairs|split|none, got {config.dev.kind!r}")
    if config.dev.task not in {"retrieval", "rerank", "f1", "spearman"}:
        raise ConfigError(f"dev.task must be retrieval|rerank|f1|spearman, got {config.dev.task!r}")
    if config.cv is not None:
        if config.cv.scheme not in {"grouped", "forward"}:
            raise ConfigError(f"cv.scheme must be grouped|forward, got {config.cv.scheme!r}")
        if not 0 < config.cv.min_train < 1:
            raise ConfigError(f"cv.min_train must be in (0, 1), got {config.cv.min_train}")
    if config.wise_ft is not None and not 0 <= config.wise_ft <= 1:
        raise ConfigError(
            f"wise_ft must be in [0, 1] (share of the fine-tuned weights), got {config.wise_ft}"
        )
    for i, stage in enumerate(config.stages):
        if stage.freeze_layers < 0:
            raise ConfigError(f"stages.{i}.freeze_layers must be >= 0")
        if stage.epochs < 1 or stage.batch_size < 1 or stage.lr <= 0:
            raise ConfigError(f"stages.{i}: epochs, batch_size and lr must be positive")
        if not 0 <= stage.warmup_ratio < 1:
            raise ConfigError(f"stages.{i}.warmup_ratio must be in [0, 1)")
        if stage.init not in {"best", "last"}:
            raise ConfigError(f"stages.{i}.init must be best|last")
        if stage.hard_negatives is not None:
            if stage.loss != "bsc":
                raise ConfigError(f"stages.{i}.hard_negatives: only the bsc loss takes hard-negative columns")
            try:
                stage.hard_negatives.validate(f"stages.{i}.hard_negatives")
            except ValueError as error:
                raise ConfigError(str(error)) from error


def config_to_dict(config: TrainConfig) -> dict[str, Any]:
    """Plain-dict view of a config (what config.yaml in a run folder holds)."""
    return dataclasses.asdict(config)


def _parse_value(text: str) -> Any:
    """Parse an override value with YAML rules: `3e-5` -> float, `true` -> bool, `[1, 2]` -> list."""
    value = yaml.safe_load(text) if text.strip() else ""
    # YAML 1.1 reads "3e-5" (no dot) as a string; numbers are what people mean.
    if isinstance(value, str):
        try:
            return float(value) if any(c in value.lower() for c in ".e") else int(value)
        except ValueError:
            return value
    return value


def _set_path(raw: Any, keys: list[str], value: Any, full: str) -> None:
    """Set `value` at a dotted path inside nested dicts/lists; `*` applies to every list element."""
    key, rest = keys[0], keys[1:]
    if isinstance(raw, list):
        targets = range(len(raw)) if key == "*" else [int(key)] if key.isdigit() else None
        if targets is None or any(i >= len(raw) for i in targets):
            raise ConfigError(f"--set {full}: {key!r} is not an index of a {len(raw)}-element list")
        for i in targets:
            if rest:
                _set_path(raw[i], rest, copy.deepcopy(value), full)
            else:
                raw[i] = value
        return
    if not isinstance(raw, dict):
        raise ConfigError(f"--set {full}: cannot descend into {type(raw).__name__}")
    if not rest:
        raw[key] = value
        return
    if raw.get(key) is None:
        raw[key] = {}
    _set_path(raw[key], rest, value, full)


def apply_overrides(raw: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """Return a copy of `raw` with `a.b.c=value` overrides applied (`stages.*.lr=1e-5` for all stages)."""
    result = copy.deepcopy(raw)
    for item in overrides:
        if "=" not in item:
            raise ConfigError(f"--set expects key=value, got {item!r}")
        key, text = item.split("=", 1)
        _set_path(result, key.strip().split("."), _parse_value(text), item)
    return result


def find_config(name_or_path: str) -> Path:
    """A config path as given, or a bare name looked up in training/configs/<name>.yaml."""
    path = Path(os.path.expanduser(name_or_path))
    if path.is_file():
        return path
    for candidate in (CONFIG_DIR / name_or_path, CONFIG_DIR / f"{name_or_path}.yaml"):
        if candidate.is_file():
            return candidate
    raise ConfigError(f"config {name_or_path!r} not found (as a path or in {CONFIG_DIR})")


def load_raw_config(name_or_path: str) -> dict[str, Any]:
    """Read a YAML config into a dict; its `name` defaults to the file name."""
    path = find_config(name_or_path)
    raw = yaml.safe_load(path.read_text()) or {}
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: the top level must be a mapping")
    raw.setdefault("name", path.stem)
    return raw


def resolve_data_path(path: str | None) -> str | None:
    """Resolve a data path against the working directory, else against the repository root."""
    if not path:
        return path
    candidate = Path(os.path.expanduser(path))
    if candidate.is_absolute() or candidate.exists():
        return str(candidate.resolve())
    from_root = REPO_ROOT / candidate
    return str(from_root.resolve()) if from_root.exists() else str(candidate)


def resolve_paths(config: TrainConfig) -> TrainConfig:
    """Return a copy whose data and dev paths are absolute where they exist (recorded in the run folder)."""
    config = copy.deepcopy(config)
    config.data.train_pairs = resolve_data_path(config.data.train_pairs) or ""
    config.data.document_titles = resolve_data_path(config.data.document_titles)
    config.data.view_pairs = resolve_data_path(config.data.view_pairs)
    if config.data.negatives is not None:
        config.data.negatives.corpus = resolve_data_path(config.data.negatives.corpus)
    config.dev.path = resolve_data_path(config.dev.path)
    for stage in config.stages:
        if stage.hard_negatives is not None:
            stage.hard_negatives.corpus = resolve_data_path(stage.hard_negatives.corpus)
    if config.base_model not in {"", "default"}:
        local = resolve_data_path(config.base_model)
        if local and Path(local).exists():
            config.base_model = local
    return config
