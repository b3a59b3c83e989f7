"""The retraining loop itself, forward in time: does the product's own loop gain, and is it ever worse?

Issue 42's "never worse" target (PFCC-S claims) and its answer-corpus targets (CQA-A: the job with the
defaults within 60 minutes on 2 CPU cores, +7 MAP over zero-shot on later questions). At each forward cut
point of the shared PFCC-S train + dev pairs (the cuts of `forward_quality.py`: `evaluation.forward_splits`,
3 cuts after the first 40% of the queries, time order), a fresh `pairank serve` (SQLite, the default model
and encoder backend, everything as shipped) gets all 10,369 claims in a `claim` corpus (its default ranking,
hybrid a=0.2) and the judged pairs of every query before the cut, in time order. The later block's tweets
are ranked through `POST /v1/corpora/claims/rank` (k=100, the corpus's default: what the desk is served),
then `POST /admin/retrain` runs with **no options** (the defaults table, the forward cross-validated gate
through the served pipeline, auto-activation), the activation it may queue is awaited, and the same tweets
are ranked again. HasPositive@1 and MRR of the whole block and of its unseen queries (claims no earlier pair
mentions), before and after, with the gate's report. "Never worse": after >= before at every cut (a refused
model leaves the ranking as it was; an activated one must not lower it).

`--dataset cqa_a`: the same loop on an `answer` corpus of the 9,500 SemEval-2016 CQA subtask A comments,
with the judged pairs (good = 1, bad and potentially useful = 0) of the questions before the cut; each
later question is ranked among its own comments (`candidates`, the task's re-ranking), scored by MAP,
MRR and HasPositive@1; the job's wall time is the 60-minute target's measurement.

    nice -n 10 .venv/bin/python benchmarks/quality/loop_forward.py [--dataset pfcc|cqa_a] [--only-cuts 0,1,2]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from tqdm import tqdm

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent / "serving"))
from bench_common import command_line, machine, machine_name  # noqa: E402
from serving import start  # noqa: E402

from evaluation.datasets import BeirDataset  # noqa: E402
from evaluation.forward_splits import ForwardSplit, forward_splits, unseen_queries  # noqa: E402
from evaluation.judgements import judge_pairs  # noqa: E402
from evaluation.metrics import evaluate_ranking  # noqa: E402
from training.config import config_from_dict, load_raw_config  # noqa: E402
from training.cross_validation import labelled_pairs  # noqa: E402

sys.path.insert(0, str(HERE))
from forward_cuts import rebased  # noqa: E402

REPO = HERE.parents[1]
ADMIN = {"X-API-Key": "bench-admin"}
CORPUS = "claims"


@dataclass(frozen=True)
class LoopData:
    """One dataset the loop runs on: its training config, corpus kind, metrics and how queries rank."""

    config: str
    kind: str
    metrics: tuple[str, ...]
    rerank: bool  # each query ranked among its own judged documents (`candidates`), not the corpus
    output: str
    title: str


DATASETS = {
    "pfcc": LoopData("pfcc_snopes", "claim", ("HasPositive@1", "MRR"), False, "loop_forward",
                     "PFCC-S, forward: never worse?"),
    "cqa_a": LoopData(
        "semeval_cqa_a", "answer", ("MAP", "MRR", "HasPositive@1"), True, "loop_forward_cqa_a",
        "SemEval-2016 CQA-A (an answer corpus), forward: the gain and the job's time",
    ),
}  # fmt: skip


def dataset(data: Path, config: str = "pfcc_snopes") -> tuple[BeirDataset, list[str]]:
    """Every judged pair of a config (train + dev), its whole corpus; query ids in time order."""
    raw = rebased(load_raw_config(str(REPO / "training" / "configs" / f"{config}.yaml")), data)
    pairs, corpus = labelled_pairs(config_from_dict(raw))
    judged = judge_pairs(pairs, corpus)
    id_of = {text: qid for qid, text in judged.queries.items()}
    return judged, [id_of[q] for q in dict.fromkeys(p.query for p in pairs)]


def load(http: httpx.Client, judged: BeirDataset, split: ForwardSplit, kind: str = "claim") -> int:
    """The corpus with every document, and the judged pairs (negatives too) of the queries before the cut,
    in time order."""
    http.post("/v1/corpora", json={"name": CORPUS, "kind": kind}).raise_for_status()
    documents = [{"id": doc_id, "text": text[:2000]} for doc_id, text in judged.corpus.items()]
    for offset in tqdm(range(0, len(documents), 500), desc="documents", unit="batch"):
        batch = {"documents": documents[offset : offset + 500]}
        http.post(f"/v1/corpora/{CORPUS}/documents", json=batch).raise_for_status()
    pairs = [
        {"query": judged.queries[q], "document_id": doc, "label": 1 if grade >= 1 else 0}
        for q in split.train
        for doc, grade in judged.qrels[q].items()
    ]
    for offset in range(0, len(pairs), 100):  # one request per 100: created_at keeps the time order
        http.post(
            f"/v1/corpora/{CORPUS}/pairs", json={"pairs": pairs[offset : offset + 100]}
        ).raise_for_status()
    return len(pairs)


def served(
    http: httpx.Client,
    judged: BeirDataset,
    queries: list[str],
    unseen: list[str],
    loop: LoopData = DATASETS["pfcc"],
) -> dict[str, Any]:
    """The block ranked as the corpus serves it: metrics of all and of the unseen queries, the model."""
    run: dict[str, dict[str, float]] = {}
    answer: dict[str, Any] = {}
    for query in tqdm(queries, desc="rank", unit="query"):
        body: dict[str, Any] = {"query": judged.queries[query], "k": 100}
        if loop.rerank:
            body["candidates"] = list(judged.qrels[query])
        response = http.post(f"/v1/corpora/{CORPUS}/rank", json=body)
        response.raise_for_status()
        answer = response.json()
        run[query] = {hit["id"]: float(hit["score"]) for hit in answer["results"]}
    scores = {}
    for part, ids in (("all", queries), ("unseen", unseen)):
        qrels = {q: judged.qrels[q] for q in ids}
        report = evaluate_ranking(qrels, {q: run[q] for q in ids}, metrics=list(loop.metrics))
        scores[part] = {name: round(value, 4) for name, value in report.means.items()}
    return {**scores, "model": answer["model"], "ranking": answer.get("ranking")}


def wait(http: httpx.Client, job_id: str, label: str, timeout: float) -> dict[str, Any]:
    """Poll a job until it ends, printing its stage as it moves; the finished job."""
    deadline, last = time.monotonic() + timeout, None
    while time.monotonic() < deadline:
        job: dict[str, Any] = http.get(f"/admin/jobs/{job_id}", headers=ADMIN).json()
        progress = job.get("progress") or {}
        seen = (job["status"], progress.get("stage"), progress.get("event"), progress.get("fold"))
        if seen != last:
            print(f"  {label}: {job['status']} {json.dumps(progress)[:160]}", flush=True)
            last = seen
        if job["status"] not in ("queued", "running"):
            return job
        time.sleep(5)
    raise TimeoutError(f"{label} job {job_id} did not end in {timeout} s")


def retrain(http: httpx.Client, options: dict[str, Any], timeout: float) -> dict[str, Any]:
    """`POST /admin/retrain` with the corpus alone (every default unless `options`), then its activation."""
    started = time.monotonic()
    created = http.post("/admin/retrain", json={"corpus": CORPUS, **options}, headers=ADMIN)
    created.raise_for_status()
    job = wait(http, created.json()["job_id"], "retrain", timeout)
    result = {"status": job["status"], "error": job.get("error"), "gate": job.get("gate"),
              "params": job.get("params"), "model_version": job.get("model_version"),
              "minutes": round((time.monotonic() - started) / 60, 1)}  # fmt: skip
    if (job.get("gate") or {}).get("activation") == "queued":
        jobs = http.get("/admin/jobs", headers=ADMIN).json()["jobs"]
        activation = next(
            j for j in jobs if j["kind"] == "activate" and j["params"].get("requested_by") == job["id"]
        )
        result["activation"] = wait(http, activation["id"], "activate", timeout)["status"]
    return result


def cut_row(
    args: argparse.Namespace, judged: BeirDataset, number: int, split: ForwardSplit
) -> dict[str, Any]:
    """One cut point through a fresh server: before, the loop, after."""
    loop = DATASETS[args.dataset]
    unseen = unseen_queries(split, judged.qrels)
    with tempfile.TemporaryDirectory(prefix=f"loop-cut{number}-") as folder:
        port = 18700 + number
        env = {"PAIRANK_ADMIN_API_KEY": ADMIN["X-API-Key"]}
        process = start(env, Path(folder), port)
        try:
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=600) as http:
                pairs = load(http, judged, split, loop.kind)
                before = served(http, judged, list(split.validate), unseen, loop)
                job = retrain(http, json.loads(args.options), args.timeout)
                after = served(http, judged, list(split.validate), unseen, loop)
        finally:
            process.terminate()
            process.wait(60)
    return {"cut": number, "first_validated": split.cut, "train_queries": len(split.train),
            "train_pairs": pairs, "validate_queries": len(split.validate), "unseen_queries": len(unseen),
            "before": before, "loop": job, "after": after}  # fmt: skip


def report(result: dict[str, Any], loop: LoopData = DATASETS["pfcc"]) -> str:
    """The markdown page: one row per cut, before and after the loop, and the verdict."""
    box, metrics = result["machine"], loop.metrics
    lines = [
        f"# The retraining loop on {loop.title}",
        "",
        "Generated by `benchmarks/quality/loop_forward.py` (its docstring says what it does).",
        f"Last command: `{result['command']}` (each row's, and its box, in the JSON). Machine: "
        f"{machine_name(box)}, {box['nproc']} cores, {box['memory_gib']} GiB, torch {box['torch']}, "
        f"{box['date'][:10]}; rows run on another box say so.",
        "",
        "| cut (train -> block) | pairs | gate (served ranking) | gate delta | activated | "
        + " | ".join(f"{m} before -> after" for m in metrics)
        + f" | unseen {metrics[0]} | job min |",
        "|---|---|---|---|---|" + "---|" * len(metrics) + "---|---|",
    ]
    for row in result["rows"]:
        gate, b, a = row["loop"].get("gate") or {}, row["before"], row["after"]
        moved = " | ".join(f"{b['all'][m]:.4f} -> {a['all'][m]:.4f}" for m in metrics)
        row_box = row.get("box", machine_name(box))
        elsewhere = "" if row_box == machine_name(box) else f" ({row_box})"
        lines.append(
            f"| {row['cut']} ({row['train_queries']} -> {row['validate_queries']}) | {row['train_pairs']} "
            f"| {gate.get('protocol')} on {gate.get('ranking') or gate.get('active_ranking')} "
            f"| {gate.get('delta', 0):+.4f} "
            f"| {gate.get('activation')} | {moved} "
            f"| {b['unseen'][metrics[0]]:.4f} -> {a['unseen'][metrics[0]]:.4f} "
            f"| {row['loop']['minutes']}{elsewhere} |"
        )
    never_worse = all(r["after"]["all"][m] >= r["before"]["all"][m] for r in result["rows"] for m in metrics)
    lines += [
        "",
        f"**Never worse** (after >= before on {', '.join(metrics)} at every cut): **{never_worse}**.",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the cuts asked for, merge their rows into the JSON and write the page."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--dataset", choices=sorted(DATASETS), default="pfcc")
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--cuts", type=int, default=3)
    parser.add_argument("--min-train", type=float, default=0.4)
    parser.add_argument("--only-cuts", default="", help="comma-separated cut numbers (default: all)")
    parser.add_argument("--timeout", type=float, default=3 * 3600, help="seconds per job")
    parser.add_argument(
        "--options", default="{}", help="retrain request options (JSON; the measurement: none)"
    )
    parser.add_argument("--output", type=Path, help="default: benchmarks/loop_forward[_DATASET]")
    args = parser.parse_args(argv)
    loop = DATASETS[args.dataset]
    output = args.output or REPO / "benchmarks" / loop.output
    judged, ordered = dataset(args.data, loop.config)
    splits = forward_splits(ordered, args.cuts, args.min_train)
    chosen = [int(c) for c in args.only_cuts.split(",") if c] or list(range(len(splits)))
    path = output.with_suffix(".json")
    result = json.loads(path.read_text()) if path.is_file() else {"rows": []}
    for number in chosen:
        row = cut_row(args, judged, number, splits[number])
        row.update(box=machine_name(machine()), command=command_line("quality/loop_forward.py", argv))
        rows = [r for r in result["rows"] if r["cut"] != number] + [row]
        result.update(rows=sorted(rows, key=lambda r: r["cut"]), machine=machine(),
                      command=command_line("quality/loop_forward.py", argv))  # fmt: skip
        path.write_text(json.dumps(result, indent=1) + "\n")
        output.with_suffix(".md").write_text(report(result, loop))
        print(json.dumps({k: row[k] for k in ("cut", "before", "after")}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
