"""The trainer: seed runs x stages x epochs, dev evaluation after every epoch, best checkpoint kept.

`train(config)` is the whole job: it loads the base model and the pairs, trains every stage
(sequential training) with its loss from `training.losses` and its batch order from
`training.shuffling` (re-ordered every epoch; batches are consecutive slices), scores the dev set
after every epoch, keeps the best checkpoint over all seed runs and writes the run folder.
"""

from __future__ import annotations

import copy
import random
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from pairank import train_events
from pairank.models import ModelSpec, load_sentence_transformer, pick_device, resolve_model
from training import distributed as D
from training.base_vectors import base_encoder, base_key
from training.config import TrainConfig, resolve_paths
from training.data import PairSet, load_train_pairs, sample_negatives, split_by_query, with_view_pairs
from training.evaluators import build_dev_evaluator, model_encoder
from training.runs.folder import EventWriter, RunFolder, default_run_dir, utc_timestamp
from training.runs.state import Best, RunState
from training.runs.summary import finish_run
from training.stage import steps_per_epoch, train_stage


def set_seed(seed: int) -> None:
    """Seed Python, NumPy and torch (all devices)."""
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def _seed_run(state: RunState, spec: ModelSpec, pairs: PairSet, seed_run: int) -> None:
    """Train every stage from a fresh copy of the base model with seed `config.seed + seed_run`."""
    cfg = state.config
    seed = cfg.seed + seed_run
    set_seed(seed)
    model = load_sentence_transformer(spec, device=str(state.device))
    if cfg.max_seq_length:
        model.max_seq_length = cfg.max_seq_length
    state.best_by_run[seed_run] = Best()
    if cfg.eval_before_training and state.evaluator is not None:
        if state.base_metrics is None:  # every seed run starts from the same weights: score them once
            encode = model_encoder(model, state.evaluator.batch_size)
            state.base_metrics, _, _ = state.evaluate(model, base_encoder(encode, state.base_key))
        assert state.base_metrics is not None
        score = float(state.base_metrics[str(state.evaluator.primary_metric)])
        base = {
            "seed_run": seed_run,
            "seed": seed,
            "stage": -1,
            "stage_name": "base",
            "loss": None,
            "epoch": 0,
        }
        base |= {
            "epoch_index": 0,
            "step": 0,
            "train_loss": None,
            "dev_metric": score,
            "dev": state.base_metrics,
        }
        state.finish_epoch(base | {"stage_end": False}, model)
    for s, stage in enumerate(cfg.stages):
        run_best = state.best_by_run[seed_run]
        if s > 0 and stage.init == "best" and run_best.state is not None:
            model.load_state_dict(run_best.state)
        train_stage(state, model, pairs, seed_run, seed, s)


def _device(config: TrainConfig, dist: D.DistInfo) -> torch.device:
    """This process's device: its own GPU under torchrun, else `config.device` (auto: CUDA if present)."""
    if dist.enabled and torch.cuda.is_available() and config.device in {"auto", "cuda"}:
        return torch.device(f"cuda:{dist.local_rank}")
    return torch.device(pick_device(None if config.device == "auto" else config.device))


def _load_pairs(
    config: TrainConfig, spec: ModelSpec, device: torch.device, key: str
) -> tuple[PairSet, PairSet | None]:
    """Training pairs (with sampled negatives when configured) and the held-out dev pairs (kind=split)."""
    pairs = load_train_pairs(config.data)
    held_out = None
    if config.dev.kind == "split":
        pairs, held_out = split_by_query(pairs, config.dev.fraction, config.seed)
    if config.data.negatives is not None:
        base = load_sentence_transformer(spec, device=str(device))
        if config.max_seq_length:
            base.max_seq_length = config.max_seq_length
        encode = base_encoder(model_encoder(base, config.dev.encode_batch_size), key)  # untrained weights
        pairs = sample_negatives(pairs, config.data.negatives, encode, bool(config.data.document_titles))
    return with_view_pairs(pairs, config.data, config.seed), held_out


def train(
    config: TrainConfig, output: Path | None = None, events: EventWriter | None = None
) -> dict[str, Any]:
    """Run a whole training job; returns the manifest (empty on ranks other than 0)."""
    config = resolve_paths(config)
    if config.seeds > 1 and config.dev.kind == "none":
        raise ValueError("seed search (seeds > 1) needs a dev set to pick the best run")
    dist = D.init_from_env(config.device)
    events = events or EventWriter(enabled=dist.is_main)
    try:
        return _train(config, output, events, dist)
    except BaseException as error:
        if dist.is_main:
            events.emit(train_events.ERROR, message=f"{type(error).__name__}: {error}")
        raise
    finally:
        D.shutdown()


def _train(config: TrainConfig, output: Path | None, events: EventWriter, dist: D.DistInfo) -> dict[str, Any]:
    device = _device(config, dist)
    if config.cpu_threads and device.type == "cpu":
        # Over-subscribed CPUs make torch's spinning worker threads very slow; let the config cap them.
        torch.set_num_threads(config.cpu_threads)
    timestamp = utc_timestamp()
    run = RunFolder(output or default_run_dir(config.name, timestamp)) if dist.is_main else None
    if run is not None:
        run.prepare()
        run.write_config(copy.deepcopy(config))
        events.log_path = events.log_path or run.root / "events.jsonl"
    spec = resolve_model(config.base_model)
    key = base_key(spec.version if spec.weights_sha256 else spec.path, config.max_seq_length)
    pairs, held_out = _load_pairs(config, spec, device, key)
    evaluator = build_dev_evaluator(config.dev, held_out)
    state = RunState(config, run, events, dist, device, evaluator, base_key=key)
    per_seed = sum(
        steps_per_epoch(len(pairs), s.batch_size, dist.world_size) * s.epochs for s in config.stages
    )
    state.total_steps = config.seeds * per_seed
    state.emit(
        train_events.START,
        run_dir=str(run.root) if run else None,
        config=config.name,
        base_model=spec.model_id,
        device=str(device),
        world_size=dist.world_size,
        train_pairs=len(pairs),
        dev_size=evaluator.size if evaluator else 0,
        total_steps=state.total_steps,
        seeds=config.seeds,
        epochs=sum(s.epochs for s in config.stages),
        metric=config.dev.metric if evaluator else None,
    )
    started = time.perf_counter()
    for seed_run in range(config.seeds):
        _seed_run(state, spec, pairs, seed_run)
    if run is None:  # ranks other than 0 are done once every step has run
        return {}
    return finish_run(state, spec, run, timestamp, len(pairs), time.perf_counter() - started, config)
