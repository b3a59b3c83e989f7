"""The inbox benchmark's scoring and report: B-cubed, a plain online clustering, the synthetic stream,
and the markdown between inbox.md's GENERATED markers (benchmarks/inbox.py runs them)."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from app.usecases.inbox.centroids import CentroidIndex, unit

HERE = Path(__file__).resolve().parent
START, END = "<!-- GENERATED:START -->", "<!-- GENERATED:END -->"
PHRASINGS = (
    "Is it true that {}?",
    "I heard {}",
    "{} - please check",
    "Forwarded: {}",
    "someone said {}!!",
    "Can you verify: {}",
    "{}. Real or fake?",
    "my uncle says {}",
)


def bcubed(clusters: Sequence[Any], gold: Sequence[Any]) -> tuple[float, float]:
    """B-cubed precision and recall of a clustering against a gold grouping (one label per item)."""
    precision = recall = 0.0
    for i in range(len(clusters)):
        same = [j for j in range(len(clusters)) if clusters[j] == clusters[i]]
        right = sum(1 for j in same if gold[j] == gold[i])
        precision += right / len(same)
        recall += right / sum(1 for g in gold if g == gold[i])
    return precision / len(clusters), recall / len(clusters)


def online(vectors: np.ndarray, threshold: float) -> list[int]:
    """Plain online clustering: each vector joins the nearest centroid within `threshold`, else starts one."""
    index, sums, labels = CentroidIndex("plain"), [], []
    for vector in vectors:
        cluster, cosine = index.nearest(unit(vector))
        if cluster is None or cosine < threshold:
            cluster = len(sums)
            sums.append(np.zeros_like(vector))
        sums[cluster] = sums[cluster] + unit(vector)
        index.put(cluster, unit(sums[cluster]), True, None)
        labels.append(cluster)
    return labels


def stream(claims: list[str], groups: int, items: int, seed: int) -> list[tuple[str, str, int]]:
    """(id, text, group) of a synthetic tipline stream: `groups` claims, each tipped in several phrasings,
    interleaved at random."""
    rng = random.Random(seed)
    sizes = [1 + int(rng.paretovariate(1.2)) for _ in range(groups)]
    order = [g for g, size in enumerate(sizes) for _ in range(size)]
    while len(order) < items:
        order += order
    order = order[:items]
    rng.shuffle(order)
    out = []
    for position, group in enumerate(order):
        words = claims[group].rstrip(".").split()
        if len(words) > 6 and rng.random() < 0.5:
            words.pop(rng.randrange(len(words)))
        out.append((f"s{position}", rng.choice(PHRASINGS).format(" ".join(words)), group))
    return out


def bcubed_fast(clusters: Sequence[int], gold: Sequence[int]) -> tuple[float, float]:
    """B-cubed precision and recall through counts (for long streams)."""
    both = Counter(zip(clusters, gold, strict=True))
    sizes, golds = Counter(clusters), Counter(gold)
    precision = sum(n * n / sizes[c] for (c, _), n in both.items()) / len(clusters)
    recall = sum(n * n / golds[g] for (_, g), n in both.items()) / len(clusters)
    return precision, recall


def report(result: dict[str, Any]) -> str:
    """The markdown between the GENERATED markers."""
    q = result["quality"]
    lines = [
        f"Forward on PFCC-S: calibrated on the first {q['calibrated_on']} tweets, "
        f"{q['tweets_streamed']} later tweets streamed in time order.",
        "",
        "| method | joining cosine | shared check from p | B-cubed precision | B-cubed recall | clusters "
        "| auto-matched: right (right or a twin) |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for row in q["rows"]:
        auto = ""
        if row.get("auto_matched"):
            n = row["auto_matched"]
            auto = (
                f"{row['auto_matched_right']} of {n} ({100 * row['auto_matched_right'] / n:.1f}%; "
                f"{100 * row['auto_matched_right_or_twin'] / n:.1f}%)"
            )
        threshold = "" if row["threshold"] is None else f"{row['threshold']:.2f}"
        join = row.get("join")
        shared = "" if join is None else ("auto-matches only" if join >= 1 else f"{join:.1f}")
        lines.append(
            f"| {row['method']} | {threshold} | {shared} | {row['precision']:.3f} | {row['recall']:.3f} "
            f"| {row.get('clusters', '')} | {auto} |"
        )
    s = result["speed"]
    batch, matched = s["batch_of_100"], s["match_batch_of_100"]
    lines += [
        "",
        "| intake | value |",
        "| --- | ---: |",
        f"| items (synthetic groups of paraphrases) | {s['items']:,} in {s['groups']:,} groups |",
        f"| items/s into the inbox (batches of 100) | {s['items_per_s']} |",
        f"| `/match` alone, items/s (same batches) | {s['match_items_per_s']} |",
        f"| encoding alone, items/s (same batches: the limit) | {s.get('encode_items_per_s', '')} |",
        f"| per batch of 100: p50 / p99 ms | {batch['p50_ms']} / {batch['p99_ms']} |",
        f"| `/match` per batch of 100: p50 / p99 ms | {matched['p50_ms']} / {matched['p99_ms']} |",
        f"| clusters | {s['clusters']:,} |",
        f"| B-cubed precision / recall on the stream | {s['bcubed']['precision']} / "
        f"{s['bcubed']['recall']} |",
        f"| peak memory of the process (MiB) | {s['peak_rss_mib']} |",
        f"| documents published; one re-match pass (s) | {s['published_documents']:,}; {s['rematch_s']} |",
        "| clusters about a published claim listing it after that pass | "
        f"{s['held_out_clusters_listing_their_claim']} of {s['held_out_clusters']} |",
    ]
    m = result["machine"]
    lines += [
        "",
        f"Machine: {m['cpu_model']}, {m['nproc']} CPUs, shared with other jobs ({result['database']}). "
        f"Command: `{result['command']}`. Took {result['seconds']} s.",
    ]
    return "\n".join(lines)


def write_report(result: dict[str, Any]) -> None:
    """Put the report between inbox.md's GENERATED markers."""
    markdown = HERE / "inbox.md"
    text = markdown.read_text()
    head, rest = text.split(START, 1)
    markdown.write_text(head + START + "\n" + report(result) + "\n" + END + rest.split(END, 1)[1])
