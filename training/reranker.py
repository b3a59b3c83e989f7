"""A cross-encoder re-ranking stage: trained on a corpus's judged pairs plus mined hard negatives.

A bi-encoder scores query and document apart; a cross-encoder (sentence-transformers `CrossEncoder`)
reads them together, which is slower (one forward pass per candidate) but sees word-level agreement,
so the service runs it over the first stage's top-k only. It starts from the base bi-encoder's own
weights (its BERT, with a new one-logit head) so nothing is downloaded, and trains listwise: each
positive pair against `negatives` others of its query (the query's judged non-relevant documents
first, then hard negatives mined by the base bi-encoder from the whole corpus), a softmax over the
group with the positive as the target.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TextIO

import numpy as np
import torch
import yaml
from tqdm.auto import tqdm

from evaluation.judgements import relevance_grade
from pairank.models import CROSS_ENCODER, ModelSpec, file_sha256, folder_weights_sha256
from training.config import ConfigError, HardNegativesConfig
from training.data import PairSet
from training.hard_negatives import mine_hard_negatives
from training.loop import resolve_amp
from training.optim import build_scheduler
from training.runs.folder import MODEL_DIR, RunFolder, utc_timestamp
from training.runs.plots import plot_training_curves

Encoder = Callable[[Sequence[str]], np.ndarray]
RERANKER_KIND = CROSS_ENCODER  # manifest.json's `kind`: what the service loads as a re-ranker


@dataclass
class RerankerConfig:
    """How the cross-encoder trains: epochs, learning rate, group shape and sequence length."""

    epochs: int = 2
    lr: float = 2e-5
    batch_size: int = 8  # query groups per optimizer step
    negatives: int = 7  # per positive: judged non-relevant ones first, then mined
    window: int = 30  # mined from the base model's top `window` non-positives
    max_length: int = 256
    warmup_ratio: float = 0.1
    weight_decay: float = 0.01
    seed: int = 42
    amp: str = "auto"


@dataclass(frozen=True)
class Group:
    """One listwise example: a query, its positive document and the negatives ranked against it."""

    query: str
    positive: str
    negatives: tuple[str, ...]


def build_groups(pairs: PairSet, mined: Sequence[Sequence[str]], count: int, seed: int) -> list[Group]:
    """One group per positive pair: its query's judged negatives (sampled), topped up with mined ones.
    Labels are the scaled ones (in [0, 1]); a pair is positive by the one relevance rule (>= 0.5), so
    ANTIQUE's grades 1-2 are negatives, as the BSC loss and the evaluation count them."""
    rng = random.Random(seed)
    judged_negative: dict[str, list[str]] = {}
    for query, document, label in zip(pairs.firsts, pairs.seconds, pairs.labels, strict=True):
        if not relevance_grade(float(label)):
            judged_negative.setdefault(query, []).append(document)
    groups = []
    for index, (query, document, label) in enumerate(
        zip(pairs.firsts, pairs.seconds, pairs.labels, strict=True)
    ):
        if not relevance_grade(float(label)):
            continue
        own = judged_negative.get(query, [])
        chosen = rng.sample(own, min(count, len(own)))
        chosen += [d for d in mined[index] if d not in chosen and d != document][: count - len(chosen)]
        if chosen:
            groups.append(Group(query, document, tuple(chosen)))
    return groups


def train_reranker(
    pairs: PairSet,
    base: ModelSpec,
    encode: Encoder,
    output: Path,
    config: RerankerConfig,
    pool: Sequence[str] = (),
    device: str = "cpu",
    progress: bool = True,
) -> dict[str, Any]:
    """Train a cross-encoder from `base`'s weights into `output/model`; returns the manifest."""
    from sentence_transformers import CrossEncoder

    random.seed(config.seed)
    torch.manual_seed(config.seed)
    run = RunFolder(output)
    run.prepare()
    run.write_config({"reranker": asdict(config), "base_model": base.model_id, "pairs": len(pairs)})
    started = time.perf_counter()
    mining = HardNegativesConfig(
        count=config.negatives, window=max(config.window, config.negatives), remine="once"
    )
    mined = mine_hard_negatives(pairs, encode, mining, config.seed, pool)
    groups = build_groups(pairs, mined, config.negatives, config.seed)
    if not groups:
        raise ValueError(
            "no positive pair with a negative to rank it against: nothing to train a re-ranker on"
        )
    model = CrossEncoder(str(base.path), num_labels=1, max_length=config.max_length, device=device)
    network = model.model
    network.train()
    optimizer = torch.optim.AdamW(network.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    steps = config.epochs * -(-len(groups) // config.batch_size)
    scheduler = build_scheduler(optimizer, steps, config.warmup_ratio)
    amp = resolve_amp(config.amp, torch.device(device))
    scaler = torch.amp.GradScaler(torch.device(device).type, enabled=amp.use_scaler)
    losses: list[tuple[int, float]] = []
    history: list[dict[str, Any]] = []
    step = 0
    with tqdm(total=steps, desc="cross-encoder", unit="step", disable=not progress) as bar:
        for epoch in range(1, config.epochs + 1):
            order = list(range(len(groups)))
            random.Random(config.seed + epoch).shuffle(order)
            epoch_losses = []
            for start in range(0, len(order), config.batch_size):
                batch = [groups[i] for i in order[start : start + config.batch_size]]
                loss = _group_loss(model, batch, amp, device)
                optimizer.zero_grad(set_to_none=True)
                scaler.scale(loss).backward()
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(network.parameters(), 1.0)
                scaler.step(optimizer)
                scaler.update()
                scheduler.step()
                step += 1
                losses.append((step, float(loss.detach())))
                epoch_losses.append(float(loss.detach()))
                bar.update(1)
            history.append({"seed_run": 0, "stage": 0, "epoch": epoch, "epoch_index": epoch, "step": step,
                            "train_loss": float(np.mean(epoch_losses)), "dev_metric": None})  # fmt: skip
    network.eval()
    run.save_model(lambda path: _save(model, path, base))
    run.write_metrics({"primary_metric": None, "history": history, "losses": losses})
    plot_training_curves(run.root / "training_curves.png", {0: losses}, history, "(no dev set)",
                         title=f"cross-encoder re-ranker on {base.model_id}", best=history[-1])  # fmt: skip
    manifest = {
        "kind": RERANKER_KIND,
        "model_id": f"pairank-reranker-{utc_timestamp()}",
        "model_path": MODEL_DIR,
        "base_model": base.model_id,
        "groups": len(groups),
        "negatives": config.negatives,
        "steps": step,
        "seconds": round(time.perf_counter() - started, 1),
        "weights_sha256": folder_weights_sha256(run.model_dir),
        "config_sha256": file_sha256(run.root / "config.yaml"),
    }
    run.write_manifest(manifest)
    return manifest


def _group_loss(model: Any, batch: Sequence[Group], amp: Any, device: str) -> torch.Tensor:
    """Softmax cross-entropy of each group's positive against its negatives (groups padded by -inf)."""
    width = 1 + max(len(g.negatives) for g in batch)
    queries, documents, where = [], [], []
    for row, group in enumerate(batch):
        for column, document in enumerate((group.positive, *group.negatives)):
            queries.append(group.query)
            documents.append(document)
            where.append(row * width + column)
    features = model.tokenizer(queries, documents, padding=True, truncation="longest_first",
                               max_length=model.max_length, return_tensors="pt").to(device)  # fmt: skip
    with amp.autocast(torch.device(device)):
        logits = model.model(**features).logits.view(-1).float()
    table = torch.full((len(batch) * width,), float("-inf"), device=logits.device)
    table[torch.tensor(where, device=logits.device)] = logits
    target = torch.zeros(len(batch), dtype=torch.long, device=logits.device)
    return torch.nn.functional.cross_entropy(table.view(len(batch), width), target)


def _save(model: Any, path: str, base: ModelSpec) -> None:
    model.save(path)
    info = {"kind": RERANKER_KIND, "base_model": base.model_id, "base_model_version": base.version}
    (Path(path) / "pairank_model.json").write_text(json.dumps(info, indent=2) + "\n")


def load_reranker(path: Path | str, device: str = "cpu", max_length: int | None = None) -> Any:
    """A trained re-ranker (its run folder or model folder) as a sentence-transformers CrossEncoder."""
    from sentence_transformers import CrossEncoder

    folder = Path(path)
    if (folder / MODEL_DIR / "config.json").exists():
        folder = folder / MODEL_DIR
    return CrossEncoder(str(folder), device=device, max_length=max_length)


# `pairank train --reranker` (training/cli.py): the same inputs as a bi-encoder's, plus
# `--set reranker.<field>=<value>` for RerankerConfig and `--negatives-from` a corpus export (JSON lines
# with a `text`) to mine hard negatives from too.
PREFIX = "reranker."


def split_overrides(overrides: list[str]) -> tuple[list[str], RerankerConfig]:
    """The overrides for the shared config, and the RerankerConfig the `reranker.` ones describe."""
    shared, fields = [], {}
    known = {f.name: f for f in dataclasses.fields(RerankerConfig)}
    for override in overrides:
        key, _, value = override.partition("=")
        if not key.startswith(PREFIX):
            shared.append(override)
            continue
        name = key[len(PREFIX) :]
        if name not in known:
            raise ConfigError(f"unknown re-ranker setting {name!r} (one of {', '.join(known)})")
        fields[name] = yaml.safe_load(value)
    try:
        return shared, RerankerConfig(**fields)
    except TypeError as error:
        raise ConfigError(str(error)) from error


def corpus_texts(path: str | None) -> list[str]:
    """The `text` of each JSON line of a corpus export (empty without a path)."""
    if not path:
        return []
    with open(path, encoding="utf-8") as handle:
        return [str(json.loads(line)["text"]) for line in handle if line.strip()]


def train_reranker_run(
    config: Any, reranker: RerankerConfig, args: argparse.Namespace, events: TextIO
) -> Path:
    """Train the re-ranker the resolved config and options describe; returns its run folder."""
    from evaluation.datasets import LabeledPair, load_pairs
    from pairank.models import load_sentence_transformer, pick_device, resolve_model
    from training.data import PairSet
    from training.evaluators import model_encoder
    from training.reranker import train_reranker
    from training.runs.folder import default_run_dir, utc_timestamp

    output = args.output or default_run_dir(f"{config.name}-reranker", utc_timestamp())
    device = pick_device(None if config.device == "auto" else config.device)
    pairs = PairSet.from_pairs(
        [LabeledPair(p.query, p.document, p.label) for p in load_pairs(config.data.train_pairs)],
        config.data.label_range,
    )
    base = resolve_model(config.base_model)
    encode = model_encoder(load_sentence_transformer(base, device=device))
    pool = corpus_texts(args.negatives_from)
    manifest = train_reranker(pairs, base, encode, Path(output), reranker, pool, device, config.progress_bar)
    events.write(json.dumps({"event": "done", "run_dir": str(output), "manifest": manifest}) + "\n")
    return Path(output)
