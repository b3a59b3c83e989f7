"""Issue 29's forward tables: does fine-tuning help on *later* queries? Each lever trained on earlier
queries and scored on the block after them, at several cut points and seeds.

The labelled pairs (train, then dev: the datasets' file order, which is time order for PFCC-S) are cut
by `evaluation.forward_splits`: with 3 cut points and min_train 0.4, PFCC-S's 800 queries give blocks
q320-479, q480-639 and q640-799, each validated by models trained on every query before it. Each block
is ranked against all 10,369 claims (CQA: each question's own candidates) by the zero-shot model and by
every lever's model, dense, lexical and hybrid (each side's top 100, as the service ranks), and scored
on the whole block and on its *unseen* part (queries whose relevant documents no training pair
mentions: what the withheld PFCC-S test split is made of). Gains are paired per cut and seed against
the product default (PFCC-S: zero-shot hybrid a=0.2; CQA: zero-shot dense).

Levers: the config as committed; fewer steps at a lower learning rate; the lower 4 of 6 layers frozen;
self-supervised (title, text) pairs over the corpus (titled corpora only); WiSE-FT interpolations of the
committed config's model with the base model (no extra training). `--jobs N` trains (cut, seed) units
in N processes (a GPU has room for several of these small models). A rerun with the same --work resumes
finished models.

    nice -n 10 .venv/bin/python benchmarks/quality/forward_quality.py [--dataset pfcc|cqa_a|cqa_b] [--seeds 3]
        [--cuts 3] [--levers "a;b"] [--add] [--device auto|cpu|cuda] [--jobs 1]

ANTIQUE (`--dataset antique`): its 300 train queries with answer texts, in file order (no time stamps:
an order, not time), each ranked against its own judged answers; grades 3-4 relevant.
"""

from __future__ import annotations

import json
import multiprocessing
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench_common import command_line, machine, machine_name  # noqa: E402
from cv_quality import FORWARD_DATASETS, SETTINGS, Dataset, dataset_arguments, spread_table  # noqa: E402
from forward_rerank import reranked_scores, split_means  # noqa: E402

from evaluation.datasets import LabeledPair, load_beir  # noqa: E402
from evaluation.forward_splits import forward_splits, unseen_queries  # noqa: E402
from evaluation.hybrid_eval import candidate_scores, fused_run  # noqa: E402
from evaluation.judgements import judge_pairs, write_beir  # noqa: E402
from evaluation.metrics import evaluate_ranking  # noqa: E402
from evaluation.runner import make_encoder  # noqa: E402
from indexes.fusion import RankingSetting  # noqa: E402
from training.config import apply_overrides, config_from_dict, load_raw_config  # noqa: E402
from training.cross_validation import labelled_pairs  # noqa: E402
from training.data import scale_labels  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
SHARED_DATA = "../shared/data"
LEVERS: dict[str, list[str]] = {
    "fine-tuned (config)": [],
    "6 epochs": ["stages.0.epochs=6"],
    "lr 1e-5, 1 epoch": ["stages.0.lr=1e-5", "stages.0.epochs=1"],
    "freeze 4 of 6 layers": ["stages.0.freeze_layers=4"],
    "+ title/text views": ["data.view_pairs={data}/{corpus}", "data.view_pairs_limit=2000"],
    "cross-encoder re-ranker": [],  # trained by forward_rerank.py, not by the bi-encoder trainer
}
CROSS_ENCODER = "cross-encoder re-ranker"
WISE = (0.3, 0.5, 0.7)  # share of the fine-tuned weights, interpolated from the config's model
TITLED = {"pfcc": "pfcc_snopes/corpus.jsonl"}  # datasets whose documents have titles (view pairs)
# The cross-validated settings plus heavier lexical weights: a fine-tuned model may want another blend.
FORWARD_SETTINGS = {
    **SETTINGS,
    "hybrid a=0.3": RankingSetting("hybrid", 0.3),
    "hybrid a=0.5": RankingSetting("hybrid", 0.5),
}
DEFAULT_SETTING = {"pfcc": "hybrid a=0.2", "cqa_a": "dense", "cqa_b": "dense", "antique": "dense"}


def rebased(raw: Any, data: Path) -> Any:
    """The config with its `../shared/data` paths pointing into `data` (a copy travels to a GPU box)."""
    if isinstance(raw, dict):
        return {k: rebased(v, data) for k, v in raw.items()}
    if isinstance(raw, list):
        return [rebased(v, data) for v in raw]
    return (
        str(data) + raw[len(SHARED_DATA) :] if isinstance(raw, str) and raw.startswith(SHARED_DATA) else raw
    )


def write_cuts(raw: dict[str, Any], work: Path, cuts: int, min_train: float) -> list[dict[str, Any]]:
    """Each cut point's training pairs, validation block (BEIR) and unseen query ids, in `work/cutN`."""
    pairs, corpus = labelled_pairs(config_from_dict(raw))
    label_range = raw["data"].get("label_range")
    if label_range:  # ANTIQUE's grades 1-4: 3-4 relevant, as the loss, the judging and the re-ranker count
        scaled = scale_labels(np.array([p.label for p in pairs], dtype=np.float64), label_range)
        pairs = [LabeledPair(p.query, p.document, float(y)) for p, y in zip(pairs, scaled, strict=True)]
    everything = judge_pairs(pairs, corpus)
    text_of = everything.queries
    id_of = {text: qid for qid, text in text_of.items()}
    ordered = [id_of[q] for q in dict.fromkeys(p.query for p in pairs) if q in id_of]
    described = []
    for number, split in enumerate(forward_splits(ordered, cuts, min_train)):
        folder = work / f"cut{number}"
        folder.mkdir(parents=True, exist_ok=True)
        trained = {text_of[q] for q in split.train}
        validated = {text_of[q] for q in split.validate}
        rows = [json.dumps({"query": p.query, "document": p.document, "label": p.label}) for p in pairs
                if p.query in trained]  # fmt: skip
        (folder / "train.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
        write_beir(
            judge_pairs([p for p in pairs if p.query in validated], corpus, split="dev"), folder / "dev"
        )
        dev_id_of = {text: qid for qid, text in load_beir(folder / "dev", "dev").queries.items()}
        unseen = [dev_id_of[text_of[q]] for q in unseen_queries(split, everything.qrels)]
        (folder / "unseen.json").write_text(json.dumps(unseen))
        sizes = {"train_queries": len(split.train), "validate_queries": len(split.validate)}
        described.append({"cut": split.cut, **sizes, "unseen_queries": len(unseen)})
    return described


def score(encode: Any, folder: Path, dataset: Dataset) -> dict[str, dict[str, dict[str, float]]]:
    """Each ranking setting's metric means on a block, over all its queries and over the unseen ones."""
    data = load_beir(folder / "dev", "dev")
    unseen = set(json.loads((folder / "unseen.json").read_text()))
    candidates = candidate_scores(encode, data, dataset.task, depth=100)  # type: ignore[arg-type]
    return {
        label: split_means(
            evaluate_ranking(data.qrels, fused_run(candidates, setting), metrics=list(dataset.metrics)),
            unseen,
            dataset.metrics,
        )
        for label, setting in FORWARD_SETTINGS.items()
    }


def train_lever(raw: dict[str, Any], folder: Path, overrides: list[str], seed: int) -> Path:
    """Train one lever's model on a cut's earlier pairs (resumes a finished one); its model folder."""
    from training.trainer import train

    run = folder / "run"
    if (run / "manifest.json").exists():
        return run
    config = apply_overrides(raw, overrides)
    config["data"] = {
        **config["data"],
        "train_pairs": str(folder.parents[1] / "train.jsonl"),
        "document_titles": None,
        "limit": None,
        "label_range": None,
    }  # fmt: skip (scaled)
    config.update(seed=seed, seeds=1, keep="last", eval_before_training=False, dev={"kind": "none"})
    train(config_from_dict(config), output=run)
    return run


def wise_model(base: Path | str, tuned: Path, alpha: float, folder: Path) -> Path:
    """Save base + alpha * (tuned - base) as a model folder (WiSE-FT), once."""
    if (folder / "modules.json").exists():
        return folder
    from pairank.models import load_sentence_transformer, resolve_model
    from training.regularize import interpolate_state

    model = load_sentence_transformer(resolve_model(str(base)), device="cpu")
    start = model.state_dict()
    tuned_model = load_sentence_transformer(resolve_model(str(tuned)), device="cpu")
    model.load_state_dict(interpolate_state(start, tuned_model.state_dict(), alpha))
    model.save(str(folder))
    return folder


def unit(job: dict[str, Any]) -> list[dict[str, Any]]:
    """One (cut, seed): every lever trained and scored (the zero-shot model when seed is None)."""
    dataset, cut_dir, device = FORWARD_DATASETS[job["dataset"]], Path(job["cut_dir"]), job["device"]
    rows = []

    def scored(model: str, path: str, cache: Path) -> None:
        """Score a model once: its scores are kept beside it, so a rerun resumes."""
        if not cache.exists():
            encode, _ = make_encoder(path, backend="torch", precision="fp32", device=device, progress=False)
            cache.write_text(json.dumps(score(encode, cut_dir, dataset)))
        rows.append(
            {"cut": job["cut"], "seed": job["seed"], "model": model, "scores": json.loads(cache.read_text())}
        )

    if job["seed"] is None:
        scored("zero-shot", "default", cut_dir / "zero_shot_scores.json")
        return rows
    for lever in job["levers"]:
        if lever == CROSS_ENCODER:
            folder = cut_dir / f"s{job['seed']}" / "cross_encoder"
            cache = folder.parent / "cross_encoder_scores.json"
            if not cache.exists():
                default = DEFAULT_SETTING[job["dataset"]]
                scores = reranked_scores(cut_dir, folder, FORWARD_SETTINGS[default], f"zero-shot {default}",
                                         dataset.task, dataset.metrics, job["seed"], device)  # fmt: skip
                cache.write_text(json.dumps(scores))
            rows.append({"cut": job["cut"], "seed": job["seed"], "model": CROSS_ENCODER,
                         "scores": json.loads(cache.read_text())})  # fmt: skip
            print(f"cut {job['cut']} seed {job['seed']} {lever}: done", flush=True)
            continue
        overrides = [o.format(data=job["data"], corpus=TITLED.get(job["dataset"], "")) for o in LEVERS[lever]]
        folder = cut_dir / f"s{job['seed']}" / lever.replace(" ", "_").replace(",", "").replace("/", "-")
        run = train_lever(job["raw"], folder, overrides + [f"device={device or 'auto'}"], job["seed"])
        scored(lever, str(run), folder / "scores.json")
        if lever == "fine-tuned (config)":
            for alpha in job["wise"]:
                mixed = wise_model("default", run / "model", alpha, folder / f"wise{alpha}")
                scored(f"WiSE-FT {alpha}", str(mixed), folder / f"wise{alpha}_scores.json")
        print(f"cut {job['cut']} seed {job['seed']} {lever}: done", flush=True)
    return rows


def summarise(rows: list[dict[str, Any]], metrics: tuple[str, ...], default: str) -> dict[str, Any]:
    """Mean +- sd over cuts x seeds per (model, setting, subset), with paired gains over the default."""
    base = {(r["cut"], part): r["scores"][default][part] for r in rows if r["model"] == "zero-shot"
            for part in ("all", "unseen")}  # fmt: skip
    table: dict[str, Any] = {}
    for row in rows:
        for setting, parts in row["scores"].items():
            for part, values in parts.items():
                if not values:
                    continue
                entry = table.setdefault(f"{row['model']} / {setting} / {part}", {"values": [], "gains": []})
                entry["values"].append(values)
                entry["gains"].append({m: values[m] - base[(row["cut"], part)][m] for m in metrics})

    return spread_table(table, metrics)


def machine_with_gpu() -> dict[str, Any]:
    """bench_common's machine facts plus the GPU's name where one was used."""
    import torch

    facts = machine()
    if torch.cuda.is_available():
        facts["gpu"] = torch.cuda.get_device_name(0)
    return facts


def main(argv: list[str] | None = None) -> int:
    """Train every lever at every cut point and seed, score them, write the dataset's forward JSON."""
    parser = dataset_arguments(__doc__, "forward_quality_DATASET", seeds=3, forward=True)
    parser.add_argument("--cuts", type=int, default=3)
    parser.add_argument("--min-train", type=float, default=0.4)
    parser.add_argument("--epochs", type=int, help="default: the config's")
    parser.add_argument("--levers", help=f"a ;-separated subset of: {'; '.join(LEVERS)}")
    parser.add_argument("--wise", default=",".join(map(str, WISE)), help="WiSE-FT alphas ('' for none)")
    parser.add_argument("--limit-train", type=int, help="smoke runs: at most N training pairs per cut")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--add", action="store_true", help="keep --output's rows of models this run skips")
    parser.add_argument("--first-seed", type=int, help="default: the config's seed (with --add: more seeds)")
    args = parser.parse_args(argv)
    dataset = FORWARD_DATASETS[args.dataset]
    work = (args.work or REPO / "data" / "bench" / f"forward_{args.dataset}").resolve()
    output = args.output or REPO / "benchmarks" / f"forward_quality_{args.dataset}.json"
    device = None if args.device == "auto" else args.device
    levers = [lever for lever in (args.levers.split(";") if args.levers else LEVERS)
              if args.dataset in TITLED or "views" not in lever]  # fmt: skip
    started = time.perf_counter()
    raw = rebased(load_raw_config(dataset.config), args.data.resolve())
    raw = apply_overrides(raw, ["progress_bar=false", "eval_epochs=last"])
    if args.epochs:
        raw["stages"][0]["epochs"] = args.epochs
    if args.limit_train:
        raw["data"]["limit"] = args.limit_train
    cuts = write_cuts(raw, work, args.cuts, args.min_train)
    raw["data"]["limit"] = args.limit_train
    first_seed = args.first_seed if args.first_seed is not None else int(raw.get("seed", 42))
    wise = [float(a) for a in args.wise.split(",") if a]
    common = {"dataset": args.dataset, "levers": levers, "wise": wise, "raw": raw, "device": device}
    seeds = [None, *range(first_seed, first_seed + args.seeds)]  # None: the zero-shot model
    jobs = [
        {
            **common,
            "cut": c["cut"],
            "cut_dir": str(work / f"cut{n}"),
            "seed": seed,
            "data": str(args.data.resolve()),
        }
        for n, c in enumerate(cuts)
        for seed in seeds
    ]
    if args.jobs > 1:
        with ProcessPoolExecutor(args.jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
            rows = [row for result in pool.map(unit, jobs) for row in result]
    else:
        rows = [row for job in jobs for row in unit(job)]
    runs: list[dict[str, Any]] = []
    this_machine = machine_with_gpu()  # its name goes on this run's entry too
    levers_run = list(levers)
    if args.add and output.exists():  # a later run adds levers or settings: its rows replace the same ones
        fresh = {(r["cut"], r["seed"], r["model"]) for r in rows}
        earlier = json.loads(output.read_text())
        rows = [r for r in earlier["rows"] if (r["cut"], r["seed"], r["model"]) not in fresh] + rows
        levers = list(dict.fromkeys([*earlier["levers"], *levers]))
        # Runs before --add kept the machine only at the top: carry it onto each, as this run's replaces it.
        runs = [{"machine": machine_name(earlier["machine"]), **run} for run in earlier.get("runs", [])]
        wise = sorted({*earlier["wise"], *wise})
    document = {
        "dataset": args.dataset, "config": dataset.config, "metrics": list(dataset.metrics),
        "gains": list(dataset.gains), "default": DEFAULT_SETTING[args.dataset],
        "ranked_against": dataset.ranked_against, "cuts": cuts,
        "seeds": len({r["seed"] for r in rows if r["seed"] is not None}),
        "min_train": args.min_train, "levers": {lever: LEVERS[lever] for lever in levers}, "wise": wise,
        "epochs": raw["stages"][0]["epochs"], "machine": this_machine,
        "command": command_line("quality/forward_quality.py", argv),
        "seconds": round(time.perf_counter() - started, 1), "rows": rows,
        "runs": [*runs, {"command": command_line("quality/forward_quality.py", argv), "levers": levers_run,
                         "seconds": round(time.perf_counter() - started, 1),
                         "machine": machine_name(this_machine)}],
        "table": summarise(rows, dataset.metrics, DEFAULT_SETTING[args.dataset]),
    }  # fmt: skip
    output.write_text(json.dumps(document, indent=2) + "\n")
    print(f"wrote {output} in {document['seconds']:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
