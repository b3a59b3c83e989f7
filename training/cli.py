"""`pairank train`: fine-tune a bi-encoder from a YAML config, with command-line overrides.

    pairank train --config training/configs/pfcc_snopes.yaml [--output DIR] [--set stages.0.lr=3e-5 ...]
    pairank train --train-pairs exported.jsonl [--dev-pairs dev.jsonl | --dev-beir DIR] [--output DIR]
    pairank train --reranker --train-pairs exported.jsonl [--set reranker.epochs=3]   (a re-ranker)

stdout carries only JSON-lines progress events (see training/README.md); logs and progress bars go
to stderr, so a parent process (the service) can parse stdout line by line.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

import yaml

from training.config import (
    ConfigError,
    CVConfig,
    apply_overrides,
    config_from_dict,
    config_to_dict,
    load_raw_config,
    resolve_paths,
)

_METRIC_FOR_TASK = {"retrieval": "MRR", "rerank": "MRR", "f1": "f1", "spearman": "spearman"}


def build_parser() -> argparse.ArgumentParser:
    """Arguments of `pairank train`."""
    parser = argparse.ArgumentParser(prog="pairank train", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--config", help="YAML config: a path or a name in training/configs/ (e.g. pfcc_snopes)"
    )
    parser.add_argument("--output", type=Path, help="run folder (default: ./data/runs/<ts>-<name>)")
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config value, e.g. stages.0.lr=3e-5, stages.*.epochs=2, dev.metric=MAP",
    )
    parser.add_argument("--name", help="config name (used in the run folder and model id)")
    parser.add_argument("--base-model", help="'default', a local model folder or a hub name")
    parser.add_argument("--train-pairs", help="training pairs JSONL ({query, document, label} per line)")
    parser.add_argument("--dev-pairs", help="dev pairs JSONL (ranking by MRR for 0/1 labels, else Spearman)")
    parser.add_argument("--dev-beir", help="dev set as a BEIR folder (corpus, queries, qrels/<split>.tsv)")
    parser.add_argument("--dev-split", default=None, help="qrels split of --dev-beir (default: dev)")
    parser.add_argument("--dev-task", choices=sorted(_METRIC_FOR_TASK), help="how the dev set is scored")
    parser.add_argument("--dev-metric", help="selection metric (e.g. MRR, MAP, HasPositive@1, f1, spearman)")
    parser.add_argument("--epochs", type=int, help="epochs of every stage")
    parser.add_argument(
        "--cv",
        type=_cv_argument,
        metavar="K|forward[:K]",
        help="choose settings (the config's cv.grid) and epochs by cross-validation over train + dev pairs, "
        "then train the final model on all of them (cv.json, final/): K grouped folds, or 'forward' "
        "(train on earlier queries, validate on later ones at K cut points, default 3)",
    )
    parser.add_argument("--device", help="auto, cpu, cuda or cuda:N")
    parser.add_argument(
        "--reranker",
        action="store_true",
        help="train a cross-encoder re-ranker from the base model on the training pairs instead "
        "(--set reranker.epochs=2, reranker.lr, reranker.negatives, reranker.max_length, ...)",
    )
    parser.add_argument(
        "--negatives-from",
        metavar="JSONL",
        help="--reranker: also mine hard negatives from these documents (a corpus export, `text` per line)",
    )
    parser.add_argument("--no-progress-bar", action="store_true", help="no tqdm bars on stderr")
    parser.add_argument(
        "--print-config", action="store_true", help="print the resolved config as YAML and exit"
    )
    return parser


def _cv_argument(text: str) -> tuple[str, int]:
    """`--cv` as (scheme, K): `5` is 5 grouped folds, `forward` 3 forward cut points, `forward:4` four."""
    scheme, _, count = text.partition(":")
    if scheme.isdigit() and not count:
        scheme, count = "grouped", scheme
    if scheme not in ("grouped", "forward") or (count and not count.isdigit()):
        raise argparse.ArgumentTypeError(f"expected K, forward or forward:K, got {text!r}")
    folds = int(count) if count else 3
    if folds < (2 if scheme == "grouped" else 1):
        raise argparse.ArgumentTypeError(
            f"{text!r}: grouped needs at least 2 folds, forward at least 1 cut point"
        )
    return scheme, folds


def _pair_labels_are_binary(path: str) -> bool:
    """True when every label of a pairs file is 0 or 1."""
    from evaluation.datasets import load_pairs

    return all(p.label in (0.0, 1.0) for p in load_pairs(path))


def _dev_from_args(args: argparse.Namespace, dev: dict[str, Any]) -> dict[str, Any]:
    """Turn --dev-pairs / --dev-beir (+ task/metric/split) into the `dev` section."""
    if args.dev_pairs and args.dev_beir:
        raise ConfigError("give --dev-pairs or --dev-beir, not both")
    dev = dict(dev or {})
    if args.dev_pairs:
        dev.update(kind="pairs", path=args.dev_pairs)
        dev["task"] = args.dev_task or (
            "retrieval" if _pair_labels_are_binary(args.dev_pairs) else "spearman"
        )
    elif args.dev_beir:
        from evaluation.datasets import default_relevance_level, infer_task, pairs_path

        split = args.dev_split or "dev"
        task = args.dev_task or infer_task(args.dev_beir, split)
        if task == "pairs":  # classification/similarity pairs (MRPC, STS-b) live next to the qrels
            found = pairs_path(args.dev_beir, split)
            dev.update(
                kind="pairs",
                path=str(found),
                task="f1" if _pair_labels_are_binary(str(found)) else "spearman",
            )
        else:
            dev.update(
                kind="beir",
                path=args.dev_beir,
                split=split,
                task=task,
                relevance_level=default_relevance_level(args.dev_beir),
            )
    elif args.dev_task:
        dev["task"] = args.dev_task
    if args.dev_pairs or args.dev_beir or args.dev_task:
        dev["metric"] = args.dev_metric or _METRIC_FOR_TASK[dev["task"]]
    elif args.dev_metric:
        dev["metric"] = args.dev_metric
    return dev


def resolve_config(args: argparse.Namespace) -> Any:
    """The TrainConfig that the arguments describe: file, then shortcut options, then --set overrides."""
    raw: dict[str, Any] = load_raw_config(args.config) if args.config else {"name": "pairs"}
    if args.name:
        raw["name"] = args.name
    if args.base_model:
        raw["base_model"] = args.base_model
    if args.device:
        raw["device"] = args.device
    if args.no_progress_bar:
        raw["progress_bar"] = False
    if args.train_pairs:
        raw["data"] = {**(raw.get("data") or {}), "train_pairs": args.train_pairs}
    raw["dev"] = _dev_from_args(args, raw.get("dev") or {})
    if args.epochs is not None:
        raw.setdefault("stages", [{}])
        for stage in raw["stages"]:
            stage["epochs"] = args.epochs
    return config_from_dict(apply_overrides(raw, args.overrides))


@contextmanager
def events_only_stdout() -> Iterator[TextIO]:
    """Yield a stream on the real stdout and point file descriptor 1 at stderr meanwhile.

    Libraries print to stdout now and then (the Rust tokenizers trainer writes blank lines at the
    C level); redirecting the descriptor keeps stdout a clean JSON-lines channel for the service.
    """
    sys.stdout.flush()
    saved = os.dup(1)
    stream = os.fdopen(os.dup(saved), "w", buffering=1, encoding="utf-8")
    os.dup2(2, 1)
    try:
        yield stream
    finally:
        sys.stdout.flush()
        stream.close()
        os.dup2(saved, 1)
        os.close(saved)


def train(argv: list[str]) -> int:
    """Entry point of `pairank train`; returns the process exit code."""
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    reranker = None
    try:
        if args.reranker:
            from training.reranker import split_overrides

            args.overrides, reranker = split_overrides(args.overrides)
        config = resolve_config(args)
    except (ConfigError, OSError, ValueError) as error:
        print(f"pairank train: {error}", file=sys.stderr)
        return 2
    if args.print_config:
        print(yaml.safe_dump(config_to_dict(resolve_paths(config)), sort_keys=False), end="")
        return 0
    if not config.data.train_pairs:
        print("pairank train: no training pairs (set data.train_pairs or --train-pairs)", file=sys.stderr)
        return 2
    from training.runs.folder import EventWriter, default_run_dir, utc_timestamp
    from training.trainer import train as run_training

    if reranker is not None:
        return _train_reranker(config, reranker, args)
    if args.cv is not None:
        scheme, folds = args.cv
        config.cv = dataclasses.replace(config.cv or CVConfig(), scheme=scheme, folds=folds)
    try:
        with events_only_stdout() as stream:
            if config.cv is not None:
                from training.cross_validation import run_cv

                output = args.output or default_run_dir(f"{config.name}-cv", utc_timestamp())
                run_cv(config, config.cv, output, EventWriter(stream=stream))
            else:
                run_training(config, output=args.output, events=EventWriter(stream=stream))
    except KeyboardInterrupt:
        print("pairank train: interrupted", file=sys.stderr)
        return 130
    except Exception as error:  # the error event is already on stdout; a short message for humans here
        logging.getLogger("pairank.train").exception("training failed")
        print(f"pairank train: {type(error).__name__}: {error}", file=sys.stderr)
        return 1
    return 0


def _train_reranker(config: Any, reranker: Any, args: argparse.Namespace) -> int:
    from training.reranker import train_reranker_run

    try:
        with events_only_stdout() as stream:
            train_reranker_run(config, reranker, args, stream)
    except KeyboardInterrupt:
        print("pairank train: interrupted", file=sys.stderr)
        return 130
    except Exception as error:  # noqa: BLE001 - a short message for humans; the traceback is logged
        logging.getLogger("pairank.train").exception("re-ranker training failed")
        print(f"pairank train: {type(error).__name__}: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(train(sys.argv[1:]))
