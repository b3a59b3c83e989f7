"""The "Compact indexes" section of benchmarks/index_scale.md, from what benchmarks/index/index_compact.py
measured."""

from __future__ import annotations

from typing import Any

TODAY = "ivf nprobe="  # today's kind: float32 vectors in the lists (compared at the same nprobe)


def _mib(row: dict[str, Any], *parts: str) -> float:
    return round(sum(row["resident_mib"].get(part, 0.0) for part in parts), 1)


def _order(name: str) -> tuple[str, int]:
    """Rows by kind, then by probed lists."""
    kind, _, rest = name.partition(" nprobe=")
    return kind, int(rest.split()[0])


def compact_markdown(compact: dict[str, Any]) -> list[str]:
    """The table of each kind's speed, recall and memory, and the verdict on issue 41's target."""
    info = compact["machine"]
    kinds = dict(sorted(compact["kinds"].items(), key=lambda item: _order(item[0])))
    lines = [
        "",
        "## Compact indexes: IVF-sq8 and IVF-PQ refined from float16 rows",
        "",
        f"- Command: `{compact['command']}`",
        f"- Machine: {info['nproc']} CPUs, {info['cpu_model']}, {info['memory_gib']} GiB; {info['date']}",
        f"- {compact['size']:,} clustered 384-d unit vectors (as above), {compact['lists']} lists; each kind "
        "built by the "
        "store's checkpoint and searched from its memory-mapped snapshot in a fresh process after 500 "
        "warm-up queries; recall@10 against exact float32 search for 200 perturbed stored vectors.",
        "- build (s): the checkpoint that wrote the snapshot, in the run that built it (a `--reuse` run "
        "measures snapshots built before and keeps their build time).",
        "",
        "| setting | p50 (ms) | p50, float16 rows evicted (ms) | recall@10 | resident: lists / float16 rows "
        "/ private (MiB) | resident without float16 rows (MiB) | on disk: lists / float16 rows (MiB) "
        "| build (s) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for label, row in kinds.items():
        disk = row["disk_mib"]
        lines.append(
            f"| {label} | {row['p50_ms']} | {row.get('cold_refine_p50_ms', '')} | {row['recall_at_10']} "
            f"| {_mib(row, 'ivf_lists')} / {_mib(row, 'float16_rows')} / {_mib(row, 'private')} "
            f"| {_mib(row, 'ivf_lists', 'private')} | {disk.get('ann.faiss', 0)} / "
            f"{disk.get('vectors.f16', disk.get('vectors.f16.npy', ''))} | {row['build_seconds']} |"
        )
    lines += ["", "Against the target (recall@10 >= 0.98 at <= half today's memory, at the same nprobe):", ""]
    for name, row in kinds.items():
        today = kinds.get(f"{TODAY}{_order(name)[1]}")
        if today is None or row is today:
            continue
        baseline = _mib(today, "ivf_lists", "private")
        hot = _mib(row, "ivf_lists", "private") / baseline
        total = _mib(row, "ivf_lists", "float16_rows", "private") / baseline
        met = row["recall_at_10"] >= 0.98 and hot <= 0.5
        lines.append(
            f"- {name}: recall@10 {row['recall_at_10']} ({today['recall_at_10']} for float32 lists), "
            f"{hot:.2f}x their resident memory without the float16 rows the page cache holds "
            f"({total:.2f}x with them): {'met' if met else 'not met'}."
        )
    return lines
