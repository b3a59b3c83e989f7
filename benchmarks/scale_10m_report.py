"""benchmarks/scale_10m.md and scale_10m.png from the parts measured so far (benchmarks/scale_10m.json).

.venv/bin/python benchmarks/scale_10m_report.py
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TARGETS = (
    "Targets at 10M (issue 41): recall@10 >= .95 against exact float32, single-query p50 <= 20 ms, "
    "RSS <= 8 GB, start-up <= 60 s, 1-doc upsert p50 <= 20 ms, 4 workers' PSS <= 1.5x one."
)


def _size_section(size: str, parts: dict[str, Any]) -> list[str]:
    count, _, codes = size.partition(" ")
    box = next(iter(parts.values()))["machine"]["cpu_model"]
    lines = [f"## {int(count):,} documents, IVF-{(codes or 'sq8').upper()} ({box})", ""]
    for part in ("data", "build", "serve", "search", "workers"):
        row = parts.get(part)
        if row is None and (part == "search" or codes):
            continue  # optional: more nprobe values; a rerun's entry measures what it names
        if row is None:
            lines += [f"- **{part}**: not run yet.", ""]
            continue
        lines += [f"- **{part}** (`{row['command']}`, {row['machine']['date'][:16]} UTC)"]
        if part == "data":
            lines.append(
                f"  SQLite rows {row['sqlite_rows_seconds']} s; vectors and exact answers "
                f"{row['data_seconds']} s in all; {row['real_texts']:,} real texts replicated, "
                f"{row['real_queries']} real queries."
            )
        elif part == "build":
            disk = sum(row["disk_gib"].values())
            lines.append(
                f"  {row['lists']:,} lists; checkpoint {row['build_seconds']} s, peak RSS "
                f"{row['peak_rss_gib']} GiB (the mapped rows' pages included), {disk:.1f} GiB on disk "
                f"({row['disk_gib']}); recall@10 at the "
                f"checkpoint {row['checkpoint_recall_at_10']}."
            )
        elif part == "serve":
            if "first_startup_seconds" in row:
                lines.append(
                    f"  first start-up {row['first_startup_seconds']} s (the BM25 index built from the rows, "
                    f"spilled and saved; peak RSS {row['first_startup_peak_rss_gib']} GiB), then a restart:"
                )
            lines.append(
                f"  start-up {row['startup_seconds']} s (map + replay of 1,000 changes); upsert p50 / p95 "
                f"{row['upsert_ms']['p50']} / {row['upsert_ms']['p95']} ms; checkpoint "
                f"{row['checkpoint_seconds']} s; resident {row['resident_gib']} GiB."
            )
            lines += _search_table(row["search"])
            if row.get("recall_note"):
                lines += ["", f"  Note: {row['recall_note']}."]
        elif part == "search":
            lines.append(
                f"  the build's snapshot mapped as the store maps it, searched in one process (no service, "
                f"no BM25); resident {row['resident_gib']} GiB."
            )
            lines += _search_table(row["search"])
        elif "by_searches" not in row:
            lines.append(
                f"  1 worker RSS {row['1']['rss_gib']} / PSS {row['1']['pss_gib']} GiB; 4 workers RSS "
                f"{row['4']['rss_gib']} / PSS {row['4']['pss_gib']} GiB; PSS ratio {row['pss_ratio_4_to_1']}."
            )
        else:
            lines += [
                "",
                "  | /rank calls per worker | 1 worker PSS GiB | 4 workers PSS GiB | ratio "
                "| index resident per worker, 1 / 4 workers (GiB) |",
                "  |---:|---:|---:|---:|---:|",
            ]
            for step in row["by_searches"]:
                one, four = step["1"], step["4"]
                lines.append(
                    f"  | {step['searches_per_worker']:,} | {one['pss_gib']} | {four['pss_gib']} | "
                    f"{step['pss_ratio_4_to_1']} | {one['index_resident_gib_per_worker']} / "
                    f"{four['index_resident_gib_per_worker']} |"
                )
        lines.append("")
    return lines


def _order(key: str) -> tuple[int, str]:
    """Largest corpus first; at one size the sq8 rows (key: the size alone) before other codes."""
    count, _, codes = key.partition(" ")
    return -int(count), codes


def _label(key: str) -> str:
    count, _, codes = key.partition(" ")
    return f"{int(count):,} IVF-{(codes or 'sq8').upper()}"


def _search_table(search: dict[str, Any]) -> list[str]:
    lines = [
        "",
        "  | nprobe | p50 ms | p99 ms | recall@10 | queries/s, 8 clients |",
        "  |---|---:|---:|---:|---:|",
    ]
    for name, measured in search.items():
        setting = name.removeprefix("nprobe=").replace(",refine=", ", refine ")
        lines.append(
            f"  | {setting} | {measured['p50_ms']} | {measured['p99_ms']} | "
            f"{measured['recall_at_10']} | {measured['queries_per_second_8_clients']} |"
        )
    return lines


# What the 10M re-run (2026-11-29) shows against the first run (2026-11-28), and why: the causes were
# found at 500k rows (`--size 500000 --nlist 1024 --real-texts 2000`, /proc/self/smaps_rollup probed
# around the checkpoint) and fixed; the rows above are the re-run's.
FINDINGS = """## What changed between the two 10M runs, and why

The first run (2026-11-28, on a box shared with other jobs) started in 183.8 s, held 12.95 GiB private
(17.59 resident) and searched at 37 ms p50 (nprobe 128) / 63 ms (256); the re-run (2026-11-29, the idle
2 cores, the same data recipe and index) started in **0.9 s**, holds **0.48 GiB private** (8.07 GiB
resident, of which 7.6 are the mapped IVF lists and float16 rows: file pages of the page cache, shared
between workers and reclaimable) and searches at **13.4 ms p50 (recall@10 .941, nprobe 128) / 23.8 ms
(.956, nprobe 256)**. The recall is the same (the same index); the latency differs with the box's load
and the page cache (the first nprobe measured pays the cold pages: 55 ms at 64). What made the
difference:

- **The BM25 index (most of the memory and nearly all of the start-up).** Held in Python it was about
  1.05 KB a document (about 9.7 GiB at 10M) and rebuilt at every start (about 215 s at 10M, measured at
  500k and extrapolated). A saved generation is now served memory-mapped
  ([lexical_memory.md](lexical_memory.md)), so a restart neither holds nor rebuilds it: 943 MB on disk
  at 10M. A replica's *first* start still
  builds it from the database rows, spilled to mapped generations every 250k documents and merged
  without holding the delta's arrays ([lexical_build.md](lexical_build.md)): at 10M that first start
  took about 8.5 minutes (from the files' times: the runtime started at 06:45:36, the BM25 index was saved
  at 06:54:03; the run that measured it apart then failed on a full disk, see below), and each spill
  re-merges the growing base, so that time grows faster than linearly.
- **The checkpoint's copy of the IVF lists.** An incremental checkpoint reads `ann.faiss` into memory to
  extend it (Faiss 1.15 aborts on `add` to lists mapped with `IO_FLAG_MMAP_IFC`); glibc kept the freed
  copy's pages resident (up to 3.66 GiB at 10M). The checkpoint now calls `malloc_trim`
  (`indexes/checkpoint.py`, `tests/indexes/test_checkpoint_memory.py`).
- **The checkpoint's recall measure** was most of its 223 s: `faiss.knn` takes its BLAS path only from
  128,000 queries. It is now a matrix product and a partial sort ([exact_top_k.md](exact_top_k.md)): the
  re-run's checkpoint took 110 s, and the data part's exact answers 235 s in all instead of 979.
- **Disk.** A checkpoint writes a whole new generation (25.3 GiB at 10M: float32 rows 14.3, float16 rows
  7.2, lists 3.7) before removing the old one, so a 10M corpus needs about 51 GiB free for its vectors.
  The first attempt of this re-run, with the data part's 15 GiB of source vectors still on the disk, hit
  ENOSPC in a checkpoint: the half-written generation was removed and the previous one stayed current
  and served (as `tests/processes/test_full_disk.py` checks on a real full tmpfs).
- **Workers.** 4 `pairank serve` workers on the folder: PSS 1.41 GiB against 0.54 for one (ratio 2.61,
  the target is 1.5). Each worker's own interpreter, torch and encoder (about 0.3 GiB) now dominate,
  because the index's 7.6 GiB are mapped files counted once, and this part's 20 searches per worker
  touch few of their pages; the ratio is above the target because the shared part became small, not
  because anything is copied per worker.
"""


# The third run (2026-11-29, an Intel Xeon box with AVX-512, the same data recipe): PQ codes, sq8 on the
# same box, the BM25 first start built from segments, workers after more searches.
RERUN = """## PQ codes, sq8 on the same box, the BM25 first start from segments (Intel box, 2026-11-29)

A third run, on another 2-core box (Intel Xeon, AVX-512; the rows above marked IVF-PQ and IVF-SQ8), with
the same data recipe (the same vectors, queries and exact answers: sq8's recall here equals the first
box's to the fourth digit). The IVF-PQ data and build rows ran beside a training job (their seconds are
not comparable); every search, serve and workers row, and the sq8 build (1,202 s here against 234 s on
the first box: this box is the slower one at Faiss's int8 work), ran with the box otherwise idle:

- **IVF-PQ (48-byte codes) does not hold its recall at 10M.** Its lists are 0.53 GiB instead of 3.66, so
  the served process is 5.65 GiB resident instead of 8.07 (the float16 rows 4.5 of it): the RSS target is
  met with room. But the PQ candidates miss the true neighbours: with the top 200 re-scored (the setting
  that matched float32 lists at 1M, [index scale](index_scale.md)) recall@10 is 0.62-0.64 at nprobe
  128-256; with 500, 0.80-0.81; with 1,000, 0.90-0.91 (10.9-18.3 ms p50). None of the tried settings
  reaches 0.95; sq8 stays the 10M choice.
- **sq8 on this box** has the first box's recall (0.9405 at nprobe 128, 0.949 at 192, **0.951 at 224**,
  0.956 at 256) at 47-61 ms p50: this box scans int8 lists about 2.5 times slower than the first (13.4 /
  23.8 ms there at 128 / 256), while its PQ scans are the faster kind here. Against the target (p50
  <= 20 ms at recall >= 0.95): the smallest nprobe that reaches 0.95 is 224; on the first box,
  interpolating its measured 128 and 256, about 21 ms. Not met on either box; closer needs more, smaller
  lists (a k-means over 16k+ lists, too slow for these 2 cores) or a GPU build.
- **The BM25 first start** (a replica with no saved BM25 index builds it from the 10M rows) took **300.6 s**
  (peak RSS 3.89 GiB), against about 8.5 minutes in the second run on the first box. The build now spills
  each 250k documents to a segment of its own and merges the segments once at the end
  ([lexical segments](lexical_segments.md)); before, every spill re-merged all the postings written so
  far, so the merge work grew with the square of the corpus. (The boxes differ; the side-by-side ratio
  is the lexical segments page's.) The restart after it: 0.6 s; upsert 7.9 ms p50; checkpoint 107 s.
- **Workers, with more searches.** After 20, 200 and 1,000 varied `/rank` calls per worker, 4 workers'
  PSS stays 1.38-1.39 GiB against 0.51-0.52 for one (ratio 2.67-2.71), and each worker holds only
  0.04-0.07 GiB of the mapped index. The benchmark's tiny model (random weights) maps every text to
  nearly one direction: 1,000 varied queries have a mean cosine of 0.95-0.98 to each other and probe
  181-229 of the 4,096 lists, so traffic through this model cannot warm the index the way real queries,
  spread over the lists, do. What the measure does show: each worker adds about 0.29 GiB of its own
  (interpreter, torch, the encoder) and nothing of the index is copied per worker; the ratio falls as
  workers touch more of the shared index (with 5-8 GiB of it touched by every worker, (1.38 + S) /
  (0.51 + S) is 1.10-1.16), but that state is computed, not measured: the target is not met as measured.
"""


def to_markdown(results: dict[str, Any]) -> str:
    """The page: one section per corpus size, each part with its command, then what was found since."""
    lines = ["# Ten million documents on one machine", "", TARGETS, ""]
    for size in sorted(results, key=_order):
        lines += _size_section(size, results[size])
    return "\n".join(lines).rstrip() + "\n\n" + FINDINGS + "\n" + RERUN


def plot(results: dict[str, Any], path: Path) -> bool:
    """Recall@10 against p50 per nprobe, one line per size; False when nothing is served yet."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    served = {
        f"{_label(size)}{' (' + part + ' part)' if part == 'search' else ''}": parts[part]["search"]
        for size, parts in sorted(results.items(), key=lambda item: _order(item[0]))
        for part in ("serve", "search")
        if part in parts
    }
    if not served:
        return False
    figure, axes = plt.subplots(figsize=(6, 4))
    for label, search in served.items():
        points = list(search.values())
        axes.plot([p["p50_ms"] for p in points], [p["recall_at_10"] for p in points], "o-", label=label)
        for name, point in search.items():
            axes.annotate(name, (point["p50_ms"], point["recall_at_10"]), fontsize=7)
    axes.axhline(0.95, color="grey", linestyle=":")
    axes.axvline(20, color="grey", linestyle=":")
    axes.set(
        xlabel="single-query p50 (ms)", ylabel="recall@10 vs exact float32", title="IVF + float16 refine"
    )
    axes.legend(title="documents")
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    return True


def main() -> int:
    """Write the page (and the plot when a serve part ran)."""
    results = json.loads((HERE / "scale_10m.json").read_text(encoding="utf-8"))
    page = to_markdown(results)
    if plot(results, HERE / "scale_10m.png"):
        page += "\n![recall against p50](scale_10m.png)\n"
    (HERE / "scale_10m.md").write_text(page, encoding="utf-8")
    print(page)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
