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
committed config's model with the base model (no extra training); a cross-encoder re-ranking the
zero-shot first stage (forward_rerank.py); and the stack, "fine-tuned + cross-encoder": the config
lever's model as the first stage, its top 20 re-ranked by that (cut, seed)'s cross-encoder, alone and
blended half and half (each trained once, whichever lever comes first). `--jobs N` trains (cut, seed) units
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
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench_common import command_line, machine, machine_name  # noqa: E402
from cv_quality import FORWARD_DATASETS, SETTINGS, Dataset, dataset_arguments, spread_table  # noqa: E402
from forward_cuts import rebased, write_cuts  # noqa: E402
from forward_rerank import RERANK_DEPTHS, reranked_scores, split_means  # noqa: E402

from evaluation.datasets import load_beir  # noqa: E402
from evaluation.hybrid_eval import candidate_scores, fused_run  # noqa: E402
from evaluation.metrics import evaluate_ranking  # noqa: E402
from evaluation.runner import make_encoder  # noqa: E402
from indexes.fusion import RankingSetting  # noqa: E402
from training.config import apply_overrides, config_from_dict, load_raw_config  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
LEVERS: dict[str, list[str]] = {
    "fine-tuned (config)": [],
    "6 epochs": ["stages.0.epochs=6"],
    "lr 1e-5, 1 epoch": ["stages.0.lr=1e-5", "stages.0.epochs=1"],
    "freeze 4 of 6 layers": ["stages.0.freeze_layers=4"],
    "+ title/text views": ["data.view_pairs={data}/{corpus}", "data.view_pairs_limit=2000"],
    "cross-encoder re-ranker": [],  # trained by forward_rerank.py, not by the bi-encoder trainer
    "fine-tuned + cross-encoder": [],  # the config lever's model re-ranked by the cross-encoder lever's
}
FINE_TUNED, CROSS_ENCODER = "fine-tuned (config)", "cross-encoder re-ranker"
STACK = "fine-tuned + cross-encoder"
STACK_DEPTHS: tuple[int, ...] = (20,)  # the stack re-ranks the fine-tuned first stage's top 20
WISE = (0.3, 0.5, 0.7)  # share of the fine-tuned weights, interpolated from the config's model
TITLED = {"pfcc": "pfcc_snopes/corpus.jsonl"}  # datasets whose documents have titles (view pairs)
# The cross-validated settings plus heavier lexical weights: a fine-tuned model may want another blend.
FORWARD_SETTINGS = {
    **SETTINGS,
    "hybrid a=0.3": RankingSetting("hybrid", 0.3),
    "hybrid a=0.5": RankingSetting("hybrid", 0.5),
}
DEFAULT_SETTING = {"pfcc": "hybrid a=0.2", "cqa_a": "dense", "cqa_b": "dense", "antique": "dense"}


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


def trained(job: dict[str, Any], lever: str) -> tuple[Path, Path]:
    """A bi-encoder lever's folder and model run for a (cut, seed): trained once, then reused."""
    overrides = [o.format(data=job["data"], corpus=TITLED.get(job["dataset"], "")) for o in LEVERS[lever]]
    name = lever.replace(" ", "_").replace(",", "").replace("/", "-")
    folder = Path(job["cut_dir"]) / f"s{job['seed']}" / name
    device = f"device={job['device'] or 'auto'}"
    return folder, train_lever(job["raw"], folder, [*overrides, device], job["seed"])


def reranked_row(job: dict[str, Any], lever: str, first_model: Path | None) -> dict[str, Any]:
    """A re-ranking lever's row: the (cut, seed)'s cross-encoder over the default ranking of the zero-shot
    model (first_model None) or of a fine-tuned one (the stack, top 20 only); scored once, then reused."""
    dataset, default = FORWARD_DATASETS[job["dataset"]], DEFAULT_SETTING[job["dataset"]]
    cut_dir = Path(job["cut_dir"])
    seed_dir = cut_dir / f"s{job['seed']}"
    cache = seed_dir / ("cross_encoder_scores.json" if first_model is None else "stack_scores.json")
    if not cache.exists():
        depths: Sequence[int] = RERANK_DEPTHS
        first_encode, label = None, f"zero-shot {default}"
        if first_model is not None:
            options = {"backend": "torch", "precision": "fp32", "device": job["device"], "progress": False}
            first_encode = make_encoder(str(first_model), **options)[0]
            label, depths = f"fine-tuned {default}", STACK_DEPTHS
        scores = reranked_scores(cut_dir, seed_dir / "cross_encoder", FORWARD_SETTINGS[default], label,
                                 dataset.task, dataset.metrics, job["seed"], job["device"],
                                 first_encode, depths, job["progress"])  # fmt: skip
        cache.write_text(json.dumps(scores))
    return {"cut": job["cut"], "seed": job["seed"], "model": lever, "scores": json.loads(cache.read_text())}


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
        if lever in (CROSS_ENCODER, STACK):  # the stack re-ranks the config lever's model: trained first
            first = None if lever == CROSS_ENCODER else trained(job, FINE_TUNED)[1]
            rows.append(reranked_row(job, lever, first))
        else:
            folder, run = trained(job, lever)
            scored(lever, str(run), folder / "scores.json")
            if lever == FINE_TUNED:
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
    parser.add_argument("--only-cuts", help="a partial run: these cut points only (0-based, e.g. 0,1)")
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
    # One job at a time shows the cross-encoder's progress bar (about 110 minutes at CQA-A's last cut on 2
    # CPU cores); jobs in parallel would interleave theirs.
    common = {"dataset": args.dataset, "levers": levers, "wise": wise, "raw": raw, "device": device,
              "progress": args.jobs == 1}  # fmt: skip
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
        if not args.only_cuts or str(n) in args.only_cuts.split(",")
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
        "ranked_against": dataset.ranked_against,
        "cuts": [c for c in cuts if c["cut"] in {r["cut"] for r in rows}],  # those run (--only-cuts)
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
