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
    lines = [f"## {int(size):,} documents", ""]
    for part in ("data", "build", "serve", "workers"):
        row = parts.get(part)
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
            lines += [
                "",
                "  | nprobe | p50 ms | p99 ms | recall@10 | queries/s, 8 clients |",
                "  |---|---:|---:|---:|---:|",
            ]
            for name, measured in row["search"].items():
                lines.append(
                    f"  | {name.split('=')[1]} | {measured['p50_ms']} | {measured['p99_ms']} | "
                    f"{measured['recall_at_10']} | {measured['queries_per_second_8_clients']} |"
                )
            if row.get("recall_note"):
                lines += ["", f"  Note: {row['recall_note']}."]
        else:
            lines.append(
                f"  1 worker RSS {row['1']['rss_gib']} / PSS {row['1']['pss_gib']} GiB; 4 workers RSS "
                f"{row['4']['rss_gib']} / PSS {row['4']['pss_gib']} GiB; PSS ratio {row['pss_ratio_4_to_1']}."
            )
        lines.append("")
    return lines


# What the 10M serve part's 13 GiB of private memory and 184 s of start-up were, found at 500k rows
# (`--size 500000 --nlist 1024 --real-texts 2000`, parts data, build, serve; /proc/self/smaps_rollup
# probed around the checkpoint) and extrapolated; written here until the 10M serve part runs again.
FINDINGS = """## Where the private memory and the start-up go (measured at 500k, extrapolated to 10M)

- **The BM25 index: most of both.** Built alone it holds 0.50 GiB at 500k and 1.94 GiB at 2M documents
  (linear, about 1.05 KB a document in Python dicts): about 9.7 GiB at 10M. Building it was 9.9 s of the
  10.6 s start-up at 500k (mapping the snapshot and replaying 1,000 changes: 0.7 s); at that rate about
  215 s at 10M (loading a saved one: about 85 s). Since then a saved BM25 generation is served
  memory-mapped (postings by term in .npy arrays; [lexical_memory.md](lexical_memory.md): after a load
  at 1M documents 45 MiB resident instead of 1,080, 0 s instead of 21.8 s), so a restart neither holds
  nor rebuilds it; not re-run at 10M. A corpus's first build now spills to a mapped generation every
  250,000 documents and is saved at once ([lexical_build.md](lexical_build.md): at 3M documents a 1.6 GiB
  peak instead of 3.7, 0.37 GiB resident after instead of 3.8; held, it was about 1.2 GiB per million).
- **The checkpoint's copy of the IVF lists: fixed.** An incremental checkpoint reads `ann.faiss` into
  memory to extend it (Faiss 1.15 aborts on `add` to lists mapped with `IO_FLAG_MMAP_IFC` and refuses
  it with `IO_FLAG_MMAP`), then serves the new lists mapped from the file. The copy was freed, but glibc
  kept its heap pages resident: up to the lists' size (3.66 GiB at 10M). The checkpoint now drops it and
  calls `malloc_trim` (`indexes/checkpoint.py`, `tests/indexes/test_checkpoint_memory.py`). At 500k,
  private / total resident after the serve part: 1.20 / 1.74 GiB before, 0.96 / 1.50 after; recall and
  p50 unchanged. Expected at 10M: 9.3-10.5 GiB private instead of 12.95; not re-run at 10M.
- **Not the cause** (checked at 500k): the old index (freed after the rebase), the old generation's
  mappings (unmapped), the checkpoint's spilled copy of the rows (gone), the served lists (mapped, clean
  file-backed pages).
- **The checkpoint's 223 s were mostly its recall measure**: `exact_top_k` over every live row with
  `faiss.knn`, which in Faiss 1.15 takes its BLAS path only from 128,000 queries: 9 s per 262,144-row
  chunk for 200 queries. It is now a matrix product and a partial sort ([exact_top_k.md](exact_top_k.md):
  4.3x at 1M rows, the same rows found).
"""


def to_markdown(results: dict[str, Any]) -> str:
    """The page: one section per corpus size, each part with its command, then what was found since."""
    lines = ["# Ten million documents on one machine", "", TARGETS, ""]
    for size in sorted(results, key=int, reverse=True):
        lines += _size_section(size, results[size])
    return "\n".join(lines).rstrip() + "\n\n" + FINDINGS


def plot(results: dict[str, Any], path: Path) -> bool:
    """Recall@10 against p50 per nprobe, one line per size; False when nothing is served yet."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    served = {size: parts["serve"]["search"] for size, parts in results.items() if "serve" in parts}
    if not served:
        return False
    figure, axes = plt.subplots(figsize=(6, 4))
    for size, search in sorted(served.items(), key=lambda item: int(item[0])):
        points = list(search.values())
        axes.plot(
            [p["p50_ms"] for p in points], [p["recall_at_10"] for p in points], "o-", label=f"{int(size):,}"
        )
        for name, point in search.items():
            axes.annotate(name, (point["p50_ms"], point["recall_at_10"]), fontsize=7)
    axes.axhline(0.95, color="grey", linestyle=":")
    axes.axvline(20, color="grey", linestyle=":")
    axes.set(
        xlabel="single-query p50 (ms)", ylabel="recall@10 vs exact float32", title="IVF-sq8 + float16 refine"
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
