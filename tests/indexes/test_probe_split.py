"""One query on fast-scan (pq4) lists scans its probed lists in two halves on two threads (Faiss's fast
scan has no parallel mode): the same rows and scores as one scan, deleted rows skipped, with or without a
tail; Faiss's serial mode (parallel_mode 0) and batches of queries are left to Faiss."""

from __future__ import annotations

from pathlib import Path

import faiss
import numpy as np
import pytest

import indexes.ivf_parts as ivf_parts
from indexes.ann import Structure, ann_search
from indexes.checkpoint import checkpoint, rebase
from indexes.ivf_parts import StackedIVF
from indexes.spec import IndexSpec
from indexes.vector_index import VectorIndex
from tests.helpers.index_rows import MODEL, append, rows_of

SPEC = IndexSpec(type="ivf", nlist=16, nprobe=9, compression="pq4", pq_m=8, refine=0)


def served(folder: Path, tail: bool) -> Structure:
    """A pq4 IVF of 2,000 rows as a worker serves it (its lists mapped), with a tail of 100 when asked."""
    index = VectorIndex(16, SPEC)
    index.apply([(i, row, i + 1) for i, row in enumerate(rows_of(2000))], hwm=2000)
    index = rebase(index, checkpoint(index, folder, "c", MODEL).snapshot)
    if tail:
        append(index, range(9000, 9100), seed=4)
        index = rebase(index, checkpoint(index, folder, "c", MODEL).snapshot)
    structure = index.base.ann
    assert structure is not None and isinstance(structure, StackedIVF) == tail
    return structure


def set_mode(structure: Structure, mode: int) -> None:
    """Faiss's parallel mode on every part."""
    parts = (structure.base, structure.tail) if isinstance(structure, StackedIVF) else (structure,)
    for part in parts:
        if part is not None:
            faiss.extract_index_ivf(part).parallel_mode = mode


@pytest.mark.parametrize("tail", [False, True], ids=["lists", "lists and a tail"])
def test_one_query_scans_its_lists_in_halves_and_finds_what_one_scan_finds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tail: bool
) -> None:
    structure = served(tmp_path, tail)
    alive = np.ones(structure.ntotal, dtype=bool)
    alive[::7] = False  # deleted rows: skipped in both halves
    calls: list[int] = []
    real = ivf_parts._search_assigned

    def counted(part: faiss.IndexIVF, queries: np.ndarray, k: int, *rest: object) -> object:
        calls.append(len(queries))
        return real(part, queries, k, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(ivf_parts, "_search_assigned", counted)
    queries = rows_of(30, seed=11)
    for query in queries:
        set_mode(structure, ivf_parts.PROBES_IN_PARALLEL)  # as served
        calls.clear()
        split = ann_search(structure, SPEC, query[None], 50, alive)
        assert len(calls) == 2 * (2 if tail else 1)  # two halves of the probes per part
        set_mode(structure, 0)  # Faiss's serial mode: one scan per part
        calls.clear()
        whole = ann_search(structure, SPEC, query[None], 50, alive)
        assert len(calls) == (2 if tail else 0)  # lists alone: Faiss's own search
        np.testing.assert_allclose(split[0], whole[0], rtol=1e-6)
        decided = whole[0][0] > whole[0][0][-1]  # rows tied at the last place may differ
        assert sorted(split[1][0][decided]) == sorted(whole[1][0][decided])
        assert not np.isin(split[1][0], np.flatnonzero(~alive)).any()


def test_a_batch_of_queries_is_left_to_faiss(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    structure = served(tmp_path, tail=False)
    calls: list[int] = []
    monkeypatch.setattr(ivf_parts, "_search_assigned", lambda *args: calls.append(1))
    _, found = ann_search(structure, SPEC, rows_of(2000)[:5], 1, None)
    assert calls == [] and found[:, 0].tolist() == [0, 1, 2, 3, 4]
