"""`pairank eval-run` (trec_eval-style scoring of a run file) and `pairank evaluate` (score a model).

`eval-run` imports numpy only, never torch, so scoring a run file is instant.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from pathlib import Path

from evaluation.metrics import evaluate_ranking
from indexes.fusion import DEFAULT_ALPHA

EVAL_RUN_CUTOFFS = (1, 3, 5, 10, 20, 50)
# The eval-run contract: exactly these keys, in this order.
EVAL_RUN_METRICS = [
    "MAP",
    "MRR",
    *[f"{family}@{k}" for family in ("MAP", "HasPositive", "P", "nDCG", "Recall") for k in EVAL_RUN_CUTOFFS],
    "SemEval-MAP@10",
]


def _eval_run_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pairank eval-run",
        description="Score a run against qrels with trec_eval's conventions and print one JSON object. "
        "Both files are TSV with the header query-id<TAB>corpus-id<TAB>score, or TREC format "
        "(qrels: qid 0 docid rel; run: qid Q0 docid rank score tag), detected from the content.",
    )
    parser.add_argument("qrels", type=Path, help="relevance judgments (grades)")
    parser.add_argument("run", type=Path, help="system scores; higher ranks first, file order is ignored")
    parser.add_argument("--per-query", action="store_true", help="add a per_query object")
    parser.add_argument(
        "--relevance-level", type=int, default=1, help="minimum grade counted relevant (default 1)"
    )
    return parser


def eval_run(argv: list[str]) -> int:
    """`pairank eval-run QRELS RUN [--per-query] [--relevance-level N]`: print the metrics as JSON."""
    args = _eval_run_parser().parse_args(argv)
    from evaluation.trec_io import read_qrels, read_run

    try:
        qrels = read_qrels(args.qrels)
        run = read_run(args.run)
        report = evaluate_ranking(
            qrels,
            run,
            relevance_level=args.relevance_level,
            cutoffs=EVAL_RUN_CUTOFFS,
            metrics=EVAL_RUN_METRICS,
        )
    except (OSError, ValueError) as error:
        print(f"pairank eval-run: {error}", file=sys.stderr)
        return 2
    output: dict[str, object] = dict(report.means)
    if args.per_query:
        output["per_query"] = report.per_query
    print(json.dumps(output))
    return 0


def _evaluate_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pairank evaluate",
        description="Encode a dataset with a model, rank or classify, score, print a table and write a JSON "
        "report. Mode when omitted: `pairs` for a split with a <split>_pairs.jsonl and no rankable qrels "
        "(STS-b, MRPC), `rerank` when queries have 2+ judged candidates on average (CQA, ANTIQUE), else "
        "`retrieval` against the whole corpus (PFCC-S).",
    )
    parser.add_argument(
        "--data", type=Path, required=True, help="dataset folder (BEIR layout and/or pair files)"
    )
    parser.add_argument("--split", default="dev", help="split to evaluate (default dev)")
    parser.add_argument(
        "--mode", choices=("retrieval", "rerank", "pairs"), help="default: decided from the data"
    )
    parser.add_argument(
        "--model", default="default", help="`default` (bundled all-MiniLM-L6-v2), a folder or a hub name"
    )
    parser.add_argument(
        "--relevance-level", type=int, help="minimum relevant grade (default 1; 3 for a folder named antique)"
    )
    parser.add_argument(
        "--output", type=Path, help="report path (default: data/evaluations/<dataset>-<split>-<time>.json)"
    )
    parser.add_argument("--batch-size", type=int, default=64, help="texts per forward pass (default 64)")
    parser.add_argument(
        "--top-k", type=int, default=100, help="documents kept per query in retrieval (default 100)"
    )
    parser.add_argument("--device", help="torch device (default: cuda if available, else cpu)")
    parser.add_argument(
        "--backend",
        choices=("auto", "torch", "onnx", "openvino"),
        default="auto",
        help="encoder runtime (default auto: the fastest variant passing the quality gate, as served)",
    )
    parser.add_argument(
        "--precision", choices=("auto", "fp32", "int8", "fp16"), default="auto", help="default auto"
    )
    parser.add_argument(
        "--cache-dir",
        type=Path,
        default=Path("data") / "models",
        help="exported models (default data/models)",
    )
    parser.add_argument(
        "--pair-task", choices=("f1", "spearman"), help="default: f1 for 0/1 labels, else spearman"
    )
    parser.add_argument(
        "--threshold", type=float, help="pairs f1: score at this threshold instead of the F1-optimal one"
    )
    parser.add_argument(
        "--ranking",
        choices=("dense", "lexical", "hybrid"),
        default="dense",
        help="retrieval/rerank: the bi-encoder (default), BM25, or both fused (docs/concepts/ranking.md)",
    )
    parser.add_argument(
        "--alpha",
        type=float,
        default=DEFAULT_ALPHA,
        help=f"hybrid: the lexical weight, 0-1 (default {DEFAULT_ALPHA:g})",
    )
    parser.add_argument(
        "--fusion", choices=("linear", "rrf"), default="linear", help="hybrid: default linear"
    )
    parser.add_argument(
        "--open-world",
        type=float,
        metavar="SHARE",
        help="score match decisions open-world (docs/guides/checked-before.md): the claims of this share "
        "of the queries left out; calibrated forward on the earlier queries of --split (comma-separated "
        "splits in time order, e.g. train,dev), scored on the later ones",
    )
    parser.add_argument("--cuts", type=int, default=3, help="--open-world: forward cut points (default 3)")
    return parser


def _default_output(report: dict[str, object]) -> Path:
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    return Path("data") / "evaluations" / f"{report['dataset']}-{report['split']}-{stamp}.json"


def evaluate(argv: list[str]) -> int:
    """`pairank evaluate --data DIR --split dev ...`: evaluate a model on a dataset folder."""
    args = _evaluate_parser().parse_args(argv)
    from evaluation.datasets import infer_task
    from evaluation.hybrid_eval import RankingSetting
    from evaluation.runner import evaluate_folder, format_table, make_encoder

    if not args.data.is_dir():
        print(f"pairank evaluate: {args.data} is not a folder", file=sys.stderr)
        return 2
    if args.batch_size < 1 or args.top_k < 1:
        print("pairank evaluate: --batch-size and --top-k must be positive", file=sys.stderr)
        return 2
    if not 0 <= args.alpha <= 1:
        print("pairank evaluate: --alpha must be in [0, 1]", file=sys.stderr)
        return 2
    if args.open_world is not None:
        return _open_world(args, argv)
    try:
        # Decide the task before loading the model, so that a bad folder fails in milliseconds.
        task = args.mode or infer_task(args.data, args.split)
        print(f"pairank evaluate: {args.data} split {args.split}: mode {task}", file=sys.stderr)
        encode, model_info = make_encoder(
            args.model,
            device=args.device,
            batch_size=args.batch_size,
            backend=args.backend,
            precision=args.precision,
            cache_dir=args.cache_dir,
        )
        report = evaluate_folder(
            encode,
            args.data,
            args.split,
            task=task,
            relevance_level=args.relevance_level,
            top_k=args.top_k,
            pair_task=args.pair_task,
            threshold=args.threshold,
            ranking=RankingSetting(args.ranking, args.alpha, args.fusion),
        )
    except (OSError, ValueError) as error:
        print(f"pairank evaluate: {error}", file=sys.stderr)
        return 2
    report = {
        **report,
        "model": model_info,
        "created_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "command": " ".join(["pairank", "evaluate", *argv]),
    }
    output = args.output or _default_output(report)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(format_table(report))
    print(f"model {model_info['version']}; report written to {output}")
    return 0


def _open_world(args: argparse.Namespace, argv: list[str]) -> int:
    """`pairank evaluate --open-world SHARE`: the forward open-world report, printed and written."""
    from evaluation.hybrid_eval import RankingSetting
    from evaluation.open_world_eval import evaluate_open_world
    from evaluation.runner import make_encoder

    if not 0 < args.open_world < 1 or args.cuts < 1:
        print("pairank evaluate: --open-world must be in (0, 1) and --cuts positive", file=sys.stderr)
        return 2
    splits = [s.strip() for s in args.split.split(",") if s.strip()]
    try:
        encode, model_info = make_encoder(args.model, device=args.device, batch_size=args.batch_size,
                                          backend=args.backend, precision=args.precision,
                                          cache_dir=args.cache_dir)  # fmt: skip
        setting = RankingSetting(args.ranking, args.alpha, args.fusion)
        report = evaluate_open_world(encode, args.data, splits, setting, args.open_world, args.cuts)
    except (OSError, ValueError) as error:
        print(f"pairank evaluate: {error}", file=sys.stderr)
        return 2
    report = {
        **report,
        "split": "+".join(splits),
        "model": model_info,
        "command": " ".join(["pairank", "evaluate", *argv]),
    }
    output = args.output or _default_output(report)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(report["models"], indent=1))
    print(f"model {model_info['version']}; report written to {output}")
    return 0
