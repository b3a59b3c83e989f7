"""The tips inbox: forward clustering quality on PFCC-S, intake speed, re-match on publish.

Quality: the 800 judged PFCC-S tweets (train + dev, file order = time order) and the 10,369 Snopes
claims as a claim corpus served by the default model. The corpus's match decisions are calibrated on
the first `--cut` tweets' judged pairs only; the later tweets are streamed into an inbox in time order
(batches of 20) and never trained or chose anything. Their clusters are scored against the grouping
"tweets about the same fact-check belong together" with B-cubed precision and recall, beside every
tweet alone (singletons) and a plain online clustering of the same embeddings (nearest centroid, no
matches), at several joining thresholds. "auto-matched right": clusters decided `match` whose match is
the gold claim of their first tweet.

Speed: a synthetic stream of paraphrase groups (a claim's words behind tipline phrasings) into one
inbox in batches of 100: items/s, p99 per batch, peak memory and clusters, beside `/match` of the same
batches (the decisions alone: no clustering, nothing stored). Re-match: `--held-out` claims are left
out of the corpus while the stream runs (a fifth of the groups are about them), then published with the
rest of 1,000 new documents; how long one re-match pass takes, and the share of those groups' clusters
that list their claim after it. Everything runs in-process on the use cases (no HTTP), on SQLite unless
`--database-url` names another database.

    nice -n 5 .venv/bin/python benchmarks/inbox.py [--items 100000] [--database-url URL]
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench_common import command_line, latency_ms, machine  # noqa: E402
from inbox_parts import bcubed, bcubed_fast, online, stream, write_report  # noqa: E402

from app.config import Settings  # noqa: E402
from app.db.engine import transaction  # noqa: E402
from app.db.migrate import upgrade_to_head  # noqa: E402
from app.db.repositories.inbox import require_inbox  # noqa: E402
from app.serving.runtime import Runtime  # noqa: E402
from app.usecases.calibration.match import calibrate_corpus  # noqa: E402
from app.usecases.corpora import CorpusService  # noqa: E402
from app.usecases.inbox.inboxes import InboxInput, InboxService  # noqa: E402
from app.usecases.inbox.intake import IntakeService, ItemInput  # noqa: E402
from app.usecases.inbox.rematch import rematch_once  # noqa: E402
from app.usecases.matching import MatchService  # noqa: E402
from app.usecases.pairs import PairInput, PairService  # noqa: E402
from evaluation.datasets import read_qrels, read_texts  # noqa: E402

HERE = Path(__file__).resolve().parent
PLAIN_THRESHOLDS = (0.55, 0.6, 0.65, 0.7, 0.75, 0.8)
# (joining cosine, joining probability of a shared leading check; 1.0: auto-matches only)
SETTINGS = ((0.8, 1.0), (0.7, 1.0), (0.7, 0.5), (0.65, 0.5), (0.6, 0.5), (0.55, 0.5), (0.6, 0.3), (0.5, 0.5))


def runtime_on(folder: Path, database_url: str | None) -> Runtime:
    """A serving runtime with the default model on a fresh database, no background threads."""
    settings = Settings(
        data_dir=folder / "data",
        database_url=database_url,
        sync_seconds=0,
        embedded_worker=False,
        auth="disabled",
        rate_limit=0,
        inbox_rematch_seconds=0,
        webhook_poll_seconds=0,
        max_inbox_items_per_request=1000,
    )
    upgrade_to_head(settings.resolved_database_url)
    runtime = Runtime(settings)
    spec = runtime.serving.registry.active_at_start(settings.model)
    runtime.serving.start(runtime.serving.build_state(spec))
    return runtime


def load(runtime: Runtime, claims: dict[str, str], leave_out: set[str]) -> None:
    """Corpus `checks` of the claims but `leave_out`."""
    CorpusService(runtime).create_corpus("checks", "claim", None)
    docs = [(i, t, None, True) for i, t in claims.items() if i not in leave_out]
    for start in range(0, len(docs), 1000):
        CorpusService(runtime).upsert_documents("checks", docs[start : start + 1000])
    runtime.serving.write_due_checkpoints(1, 0.0, force=True)  # what the checkpoint thread does


def set_threshold(context: Any, inbox: str, threshold: float) -> None:
    """Give the inbox its own joining threshold (as a calibration from the desk's moves would)."""
    with transaction(context.sessions) as session:
        row = require_inbox(session, inbox)
        row.threshold, row.threshold_model = threshold, context.serving.version()


@dataclass(frozen=True)
class Context:
    """The runtime with other settings (a `ServiceContext`): one inbox setting swept at a time."""

    settings: Settings
    sessions: Any
    serving: Any


def with_settings(runtime: Runtime, **changes: Any) -> Context:
    """The runtime as use cases see it, with `changes` to its settings."""
    return Context(runtime.settings.model_copy(update=changes), runtime.sessions, runtime.serving)


def run_inbox(
    context: Context, name: str, later: list[tuple[str, str, str]]
) -> tuple[dict[str, int], list[dict]]:
    """Stream the tweets into a new inbox in batches of 20; each tweet's cluster, and the clusters."""
    InboxService(context).create(InboxInput(name, ["checks"], "en"))
    set_threshold(context, name, context.settings.inbox_cluster_threshold)
    start, intake, assigned = datetime(2020, 1, 1, tzinfo=UTC), IntakeService(context), {}
    for begin in range(0, len(later), 20):
        batch = [
            ItemInput(q, t, start + timedelta(hours=begin + k))
            for k, (q, t, _) in enumerate(later[begin : begin + 20])
        ]
        assigned.update(intake.add_items(name, batch).clusters)
    clusters: list[dict] = []
    cursor = None
    while True:
        page, cursor = InboxService(context).clusters(name, limit=100, cursor=cursor, items=1)
        clusters += page
        if cursor is None:
            return assigned, clusters


def quality(
    runtime: Runtime, tweets: list[tuple[str, str, str]], cut: int, sweep: Sequence[tuple[float, float]]
) -> dict[str, Any]:
    """Calibrate on the first `cut` tweets, stream the rest into inboxes at each setting, score them."""
    twins = {doc: set(group) for group in MatchService(runtime).twins("checks")["groups"] for doc in group}
    later = tweets[cut:]
    gold = [c for _, _, c in later]
    first_gold = {q: c for q, _, c in later}
    vectors = runtime.serving.state().encoder.encode_bulk([t for _, t, _ in later])
    alone = bcubed(list(range(len(later))), gold)
    rows: list[dict[str, Any]] = [
        {"method": "singletons", "threshold": None, "join": None, "precision": alone[0], "recall": alone[1]}
    ]
    for threshold in PLAIN_THRESHOLDS:
        precision, recall = bcubed(online(vectors, threshold), gold)
        rows.append(
            {
                "method": "plain online (cosine)",
                "threshold": threshold,
                "join": None,
                "precision": precision,
                "recall": recall,
            }
        )
    for threshold, join in sweep:
        context = with_settings(runtime, inbox_cluster_threshold=threshold, inbox_join_probability=join)
        assigned, clusters = run_inbox(context, f"pfcc-{int(threshold * 100)}-{int(join * 100)}", later)
        precision, recall = bcubed([assigned[q] for q, _, _ in later], gold)
        matched = [c for c in clusters if c["decision"] == "match"]
        right = sum(c["match"]["id"] == first_gold[c["items"][0]["id"]] for c in matched)
        right_twins = sum(
            c["match"]["id"] in twins.get(first_gold[c["items"][0]["id"]], set())
            or c["match"]["id"] == first_gold[c["items"][0]["id"]]
            for c in matched
        )
        rows.append(
            {
                "method": "inbox (cosine + matches)",
                "threshold": threshold,
                "join": join,
                "precision": precision,
                "recall": recall,
                "clusters": len(clusters),
                "auto_matched": len(matched),
                "auto_matched_right": right,
                "auto_matched_right_or_twin": right_twins,
            }
        )
        print(json.dumps(rows[-1]), flush=True)
    return {"tweets_streamed": len(later), "calibrated_on": cut, "rows": rows}


def speed(runtime: Runtime, claims: dict[str, str], held_out: list[str], items: int) -> dict[str, Any]:
    """Intake of a synthetic stream in batches of 100 beside `/match` of the same batches; then publish
    the held-out claims (and filler up to 1,000 documents) and re-match."""
    ids = list(claims)
    present = [i for i in ids if i not in set(held_out)]
    rng = random.Random(7)
    seeds = held_out[: max(1, items // 50)] + rng.sample(present, max(4, items // 12))
    rng.shuffle(seeds)
    tips = stream([claims[s] for s in seeds], len(seeds), items, 11)
    InboxService(runtime).create(InboxInput("stream", ["checks"], "en"))
    intake, batches, assigned = IntakeService(runtime), [], {}
    started = time.perf_counter()
    for begin in range(0, len(tips), 100):
        batch = [ItemInput(i, t) for i, t, _ in tips[begin : begin + 100]]
        t0 = time.perf_counter()
        assigned.update(intake.add_items("stream", batch).clusters)
        batches.append((time.perf_counter() - t0) * 1000)
    elapsed = time.perf_counter() - started
    sample = tips[: min(len(tips), 2000)]
    match_times = []
    for begin in range(0, len(sample), 100):
        t0 = time.perf_counter()
        MatchService(runtime).match("checks", [t for _, t, _ in sample[begin : begin + 100]])
        match_times.append((time.perf_counter() - t0) * 1000)
    encode_times = []
    for begin in range(0, len(sample), 100):
        t0 = time.perf_counter()
        runtime.serving.state().encoder.encode([t for _, t, _ in sample[begin : begin + 100]])
        encode_times.append(time.perf_counter() - t0)
    clusters = InboxService(runtime).get("stream")["clusters"]
    precision, recall = bcubed_fast([assigned[i] for i, _, _ in tips], [g for _, _, g in tips])
    held = {s for s in held_out if s in set(seeds)}
    about = {assigned[i] for i, _, g in tips if seeds[g] in held}
    filler = [
        (f"new-{k}", f"Fact check {k}: {claims[present[k]]}", None, True)
        for k in range(max(0, 1000 - len(held_out)))
    ]
    documents = [(i, claims[i], None, True) for i in held_out] + filler
    t0 = time.perf_counter()
    for begin in range(0, len(documents), 1000):
        CorpusService(runtime).upsert_documents("checks", documents[begin : begin + 1000])
    published = time.perf_counter() - t0
    t0 = time.perf_counter()
    changed = rematch_once(runtime)
    rematch = time.perf_counter() - t0
    listing = 0
    for cluster_id in about:
        cluster = InboxService(runtime).cluster("stream", cluster_id)
        shown = {c["id"] for c in cluster["candidates"]}
        shown |= {cluster["match"]["id"]} if cluster["match"] else set()
        first = next(g for i, _, g in tips if assigned[i] == cluster_id)
        listing += seeds[first] in shown
    return {
        "items": len(tips),
        "groups": len(seeds),
        "clusters": clusters,
        "items_per_s": round(len(tips) / elapsed, 1),
        "batch_of_100": latency_ms(batches),
        "match_batch_of_100": latency_ms(match_times),
        "match_items_per_s": round(len(sample) / sum(match_times) * 1000, 1),
        "encode_items_per_s": round(len(sample) / sum(encode_times), 1),
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "bcubed": {"precision": round(precision, 4), "recall": round(recall, 4)},
        "published_documents": len(documents),
        "publish_s": round(published, 2),
        "rematch_s": round(rematch, 2),
        "clusters_changed": changed,
        "held_out_clusters": len(about),
        "held_out_clusters_listing_their_claim": listing,
    }


def main(argv: Sequence[str] | None = None) -> None:
    """Run the benchmark; write benchmarks/inbox.json and the generated part of inbox.md."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(HERE.parents[1] / "shared" / "data" / "pfcc_snopes"))
    parser.add_argument("--cut", type=int, default=320)
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--held-out", type=int, default=200)
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--skip-quality", action="store_true")
    parser.add_argument("--skip-speed", action="store_true")
    parser.add_argument(
        "--settings", default=None, help="cosine:probability pairs to sweep, e.g. 0.6:0.5,0.65:1.0"
    )
    parser.add_argument("--output", default=str(HERE / "inbox.json"))
    parser.add_argument("--report-only", action="store_true", help="rewrite inbox.md from --output's JSON")
    args = parser.parse_args(argv)
    if args.report_only:
        write_report(json.loads(Path(args.output).read_text()))
        return
    began = time.perf_counter()
    folder = Path(args.data)
    claims = read_texts(folder / "corpus.jsonl")
    queries = read_texts(folder / "queries.jsonl")
    tweets = []
    for split in ("train", "dev"):
        for query, judged in read_qrels(folder / "qrels" / f"{split}.tsv").items():
            tweets.append((query, queries[query], next(d for d, s in judged.items() if s > 0)))
    held_out = random.Random(3).sample(sorted(set(claims) - {c for _, _, c in tweets}), args.held_out)
    database = "SQLite" if not args.database_url else args.database_url.split(":")[0]
    result: dict[str, Any] = {"database": database}
    with tempfile.TemporaryDirectory() as tmp:
        url = args.database_url or f"sqlite:///{tmp}/inbox.db"
        runtime = runtime_on(Path(tmp), url)
        try:
            load(runtime, claims, set(held_out))
            # The corpus's match decisions learn from the first `cut` tweets only (what both parts use).
            pairs = [PairInput(t, c, None, 1.0) for _, t, c in tweets[: args.cut]]
            PairService(runtime).add_pairs("checks", pairs)
            calibrate_corpus(runtime, "checks")
            if not args.skip_quality:
                sweep = SETTINGS
                if args.settings:
                    sweep = tuple(tuple(map(float, pair.split(":"))) for pair in args.settings.split(","))  # type: ignore[misc]
                result["quality"] = quality(runtime, tweets, args.cut, sweep)
                print(json.dumps(result["quality"], indent=1), flush=True)
            if not args.skip_speed:
                result["speed"] = speed(runtime, claims, held_out, args.items)
                print(json.dumps(result["speed"], indent=1), flush=True)
        finally:
            runtime.close()
    result.update(
        machine=machine(),
        command=command_line("inbox.py", argv),
        seconds=round(time.perf_counter() - began, 1),
    )
    Path(args.output).write_text(json.dumps(result, indent=1) + "\n")
    if "quality" in result and "speed" in result:
        write_report(result)


if __name__ == "__main__":
    main()
