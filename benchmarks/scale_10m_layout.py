"""The baseline for pq4 lists in a file of their own: a copy of a scale_10m work folder whose live pq4
generation keeps its lists as before, blocks inside `ann.faiss` (which Faiss copies into each worker).

Everything else is the same bytes (hard links; the SQLite database copied, as workers write to it), so
`scale_10m.py --part workers` on the two folders, one after the other, measures the layouts alone:

    .venv/bin/python benchmarks/scale_10m_layout.py --workdir /work/s10m --baseline /work/s10m_blocks
    nice -n 5 .venv/bin/python benchmarks/scale_10m.py --part workers --compression pq4 \
        --size 10000000 --model default --workdir /work/s10m_blocks --searches 20 200 1000
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

import faiss

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from indexes.ann_lists import LISTS_FILE, read_private  # noqa: E402
from indexes.ann_tail import ANN_FILE  # noqa: E402


def blocks_inside(generation: Path) -> None:
    """Rewrite `generation`'s pq4 structure in the layout before `ann.lists` (format 4 reads it)."""
    whole = read_private(generation / ANN_FILE)
    manifest = json.loads((generation / "manifest.json").read_text())
    for name in (ANN_FILE, LISTS_FILE, "manifest.json"):  # linked to the original: unlinked, not truncated
        (generation / name).unlink()
    (generation / "manifest.json").write_text(json.dumps({**manifest, "format_version": 4}))
    faiss.write_index(whole, str(generation / ANN_FILE))


def main() -> int:
    """Make the baseline folder."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--workdir", type=Path, required=True, help="a scale_10m work folder after serve")
    parser.add_argument("--baseline", type=Path, required=True, help="the copy to make (must not exist)")
    args = parser.parse_args()
    subprocess.run(["cp", "-al", str(args.workdir), str(args.baseline)], check=True)
    for database in args.baseline.rglob("pairank.db*"):  # written by the workers: a copy of its own
        copy = database.with_name(database.name + ".copy")
        shutil.copyfile(database, copy)
        copy.replace(database)
    changed = 0
    for current in args.baseline.rglob("CURRENT"):
        generation = current.parent / current.read_text().strip()
        if (generation / LISTS_FILE).is_file():
            blocks_inside(generation)
            changed += 1
    print(f"{changed} generation(s) rewritten with their blocks inside {ANN_FILE}")
    return 0 if changed else 1


if __name__ == "__main__":
    raise SystemExit(main())
