"""benchmarks/scale_10m.md and scale_10m.png from the parts measured so far (benchmarks/scale_10m.json).

.venv/bin/python benchmarks/scale_10m_report.py
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from scale_10m_findings import CHECKPOINTS, FINDINGS, PARALLEL, RERUN, TAILS
from scale_10m_findings_pq4 import PQ4, SHARED_LISTS, SPLIT

HERE = Path(__file__).resolve().parent
TARGETS = (
    "Targets at 10M (issue 41): recall@10 >= .95 against exact float32, single-query p50 <= 20 ms, "
    "RSS <= 8 GB, start-up <= 60 s, 1-doc upsert p50 <= 20 ms, 4 workers' PSS <= 1.5x one."
)


def _size_section(size: str, parts: dict[str, Any]) -> list[str]:
    count, _, codes = size.partition(" ")
    box = next(iter(parts.values()))["machine"]["cpu_model"]
    lines = [f"## {int(count):,} documents, {_codes(size)} ({box})", ""]
    for part in ("data", "build", "serve", "search", "during", "workers"):
        row = parts.get(part)
        if row is None and (part in ("search", "during") or codes):
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
            if "cached_after_checkpoint" in row:
                lines.append(
                    f"  Right after the checkpoint, share of the new generation's files in the page cache: "
                    f"{_shares(row['cached_after_checkpoint'])}; the process's busiest threads during the "
                    f"first search measure (CPU s): {row['busiest_threads_cpu_seconds']}."
                )
            lines += _search_table(row["search"])
            if "search_again" in row:
                lines += ["", "  The same measure again, straight after:"] + _search_table(
                    row["search_again"]
                )
            if row.get("recall_note"):
                lines += ["", f"  Note: {row['recall_note']}."]
        elif part == "search":
            lines.append(
                f"  the build's snapshot mapped as the store maps it, searched in one process (no service, "
                f"no BM25); resident {row['resident_gib']} GiB."
            )
            lines += _search_table(row["search"])
        elif part == "during":
            lines += _during_table(row)
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
                    f"{four['index_resident_gib_per_worker']}{_least_most(four)} |"
                )
        lines.append("")
    return lines


def _during_table(row: dict[str, Any]) -> list[str]:
    """The paced client's latencies idle and during each checkpoint (benchmarks/index/checkpoint_load.py)."""
    lines = [
        f"  the service restarted ({row['startup_seconds']} s); one query every {row['interval_s']} s "
        f"at nprobe {row['nprobe']}, from a request thread:",
        "",
        "  | while | queries | p50 ms | p90 ms | p99 ms | checkpoint s |",
        "  |---|---:|---:|---:|---:|---:|",
    ]
    for name, measured in row.items():
        if isinstance(measured, dict) and "p50_ms" in measured:
            lines.append(
                f"  | {name} | {measured['queries']:,} | {measured['p50_ms']} | {measured['p90_ms']} | "
                f"{measured['p99_ms']} | {measured.get('checkpoint_seconds', '-')} |"
            )
    return lines


def _shares(cached: dict[str, float | None]) -> str:
    """'ann.faiss 98%, vectors.f32 0%': each file's cached share."""
    return ", ".join(f"{name} {'?' if share is None else f'{share:.0%}'}" for name, share in cached.items())


def _least_most(row: dict[str, Any]) -> str:
    """' (0.9-1.2)': the least and most of the index one worker holds, where measured."""
    low_high = row.get("index_resident_gib_min_max")
    return f" ({low_high[0]}-{low_high[1]})" if low_high else ""


def _order(key: str) -> tuple[int, str]:
    """Largest corpus first; at one size the sq8 rows (key: the size alone) before other codes."""
    count, _, codes = key.partition(" ")
    return -int(count), codes


def _codes(key: str) -> str:
    """'10000000 sq8, parallel probes' -> 'IVF-SQ8, parallel probes'."""
    kind, _, rest = (key.partition(" ")[2] or "sq8").partition(",")
    codes, _, more = kind.partition(" ")  # '10000000 sq8 beside pq4' -> 'IVF-SQ8 beside pq4'
    return f"IVF-{codes.upper()}{' ' + more if more else ''}{',' + rest if rest else ''}"


def _label(key: str) -> str:
    """'10000000 sq8, parallel probes' -> '10,000,000 IVF-SQ8, parallel probes'."""
    return f"{int(key.partition(' ')[0]):,} {_codes(key)}"


def _search_table(search: dict[str, Any]) -> list[str]:
    serial = any("serial" in measured for measured in search.values())
    batch = any("batch_seconds" in measured for measured in search.values())
    extra = " serial p50 ms | serial queries/s | p50 ratio serial / served | same hits |" if serial else ""
    extra += " batch s, served / serial |" if batch and serial else ""
    lines = [
        "",
        "  | nprobe | p50 ms | p99 ms | recall@10 | queries/s, 8 clients |" + extra,
        "  |---|---:|---:|---:|---:|"
        + ("---:|---:|---:|---|" if serial else "")
        + ("---:|" if batch and serial else ""),
    ]
    for name, measured in search.items():
        setting = name.removeprefix("nprobe=").replace(",refine=", ", refine ")
        line = (
            f"  | {setting} | {measured['p50_ms']} | {measured['p99_ms']} | "
            f"{measured['recall_at_10']} | {measured['queries_per_second_8_clients']} |"
        )
        if serial:
            line += (
                f" {measured['serial']['p50_ms']} | {measured['serial']['queries_per_second_8_clients']} | "
                f"{measured['p50_ratio_serial_to_served']} | {'yes' if measured['same_hits'] else 'no'} |"
            )
        if batch and serial:
            line += (
                f" {measured.get('batch_seconds', '-')} / {measured['serial'].get('batch_seconds', '-')} |"
            )
        lines.append(line)
    return lines


def to_markdown(results: dict[str, Any]) -> str:
    """The page: one section per corpus size, each part with its command, then what was found since."""
    lines = ["# Ten million documents on one machine", "", TARGETS, ""]
    for size in sorted(results, key=_order):
        lines += _size_section(size, results[size])
    findings = (FINDINGS, RERUN, PARALLEL, CHECKPOINTS, TAILS, PQ4, SHARED_LISTS, SPLIT)
    return "\n".join(lines).rstrip() + "\n\n" + "\n".join(findings)


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
    # Many runs: twenty distinct colours, markers cycling too, the legend beside the axes.
    figure, axes = plt.subplots(figsize=(12, 6))
    colours = plt.get_cmap("tab20").colors
    for number, (label, search) in enumerate(served.items()):
        points = list(search.values())
        axes.plot(
            [p["p50_ms"] for p in points], [p["recall_at_10"] for p in points], "osD^v"[number % 5] + "-",
            color=colours[number % len(colours)], label=label, markersize=4,
        )  # fmt: skip
        for name, point in search.items():  # 'nprobe=512,refine=2000' -> '512/2000'
            short = name.replace("nprobe=", "").replace(",refine=", "/")
            axes.annotate(short, (point["p50_ms"], point["recall_at_10"]), fontsize=6, alpha=0.7)
    axes.axhline(0.95, color="grey", linestyle=":")
    axes.axvline(20, color="grey", linestyle=":")
    axes.set(
        xlabel="single-query p50 (ms)", ylabel="recall@10 vs exact float32", title="IVF + float16 refine"
    )
    axes.legend(
        title="documents (points: nprobe[/refine])", fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1)
    )
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
