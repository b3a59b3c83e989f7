"""A worker's own write reaches its Faiss and BM25 indexes without being read back from the change log
(app/stores/own_write.py), and leaves them exactly where replaying the log would: same rows, same
sequence numbers, same hits as a worker that replays; another worker's write in between is read."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from sqlalchemy import event, select
from sqlalchemy.engine import Engine

from app.db.models import DocumentChange
from app.db.repositories.documents import DocumentRepository
from app.search.ranking_setting import RankingRequest
from app.serving.runtime import Runtime
from app.usecases.corpora import CorpusService
from app.usecases.ranking import RankingService
from tests.helpers.hits import assert_same_hits
from tests.helpers.runtime import RuntimeFactory, serve, serving_claims, upsert_claims

CLAIMS = {
    "c1": "5G towers spread the coronavirus",
    "c2": "Drinking bleach cures covid",
    "c3": "The moon landing was staged in a studio",
}
CHANGED = {"c4": "Garlic protects against the virus", "c2": "Drinking bleach cures nothing"}
QUERIES = ["bleach cures covid", "moon landing staged", "garlic protects against the virus"]
pytestmark = pytest.mark.usefixtures("faiss_only")


@contextmanager
def statements() -> Iterator[list[str]]:
    """The SQL statements any engine of this process executes inside the block."""
    seen: list[str] = []

    def record(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        seen.append(statement)

    event.listen(Engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(Engine, "before_cursor_execute", record)


def ranked(runtime: Runtime, mode: str, query: str) -> list[tuple[str, float]]:
    """(id, score) of a dense or lexical search of `claims`, best first."""
    request = RankingRequest(mode=mode)
    results = RankingService(runtime).rank_corpus("claims", query, 10, None, requested=request).results
    return [(str(item.id), item.score) for item in results]


def answers(runtime: Runtime) -> list[list[tuple[str, float]]]:
    """Every query's dense and lexical hits."""
    return [ranked(runtime, mode, query) for mode in ("dense", "lexical") for query in QUERIES]


def logged_seqs(runtime: Runtime) -> dict[int, int]:
    """Document id -> the sequence number of its last upsert in the change log."""
    with runtime.sessions() as session:
        rows = session.execute(select(DocumentChange.document_id, DocumentChange.seq, DocumentChange.op))
        last: dict[int, int] = {}
        for document_id, seq, op in sorted(rows, key=lambda row: row[1]):
            if op == "upsert":
                last[document_id] = seq
            else:
                last.pop(document_id, None)
        return last


def delta_seqs(runtime: Runtime) -> dict[int, int]:
    """Document id -> the sequence number its row in the index's delta carries."""
    delta = runtime.serving.state().store.get("claims").index.delta
    return {doc_id: int(delta.seqs[row]) for doc_id, row in delta.row_of.items()}


@pytest.fixture
def writer(make_runtime: RuntimeFactory) -> Runtime:
    """A serving runtime with the claims corpus (three claims)."""
    return serving_claims(make_runtime, CLAIMS)


def test_a_write_reaches_the_indexes_without_reading_the_log(writer: Runtime) -> None:
    with statements() as seen:
        upsert_claims(writer, CHANGED)
        CorpusService(writer).delete_document("claims", "c3")
    assert not [s for s in seen if "FROM document_changes" in s]  # the log is written, never read back
    opened = writer.serving.state().store.get("claims")
    with writer.sessions() as session:
        mark = session.scalar(select(DocumentChange.seq).order_by(DocumentChange.seq.desc()).limit(1))
    assert opened.index.hwm == opened.lexical.hwm == mark
    assert delta_seqs(writer) == logged_seqs(writer)  # each row at its own entry's number
    assert "c4" in {d for d, _ in ranked(writer, "lexical", "garlic")}
    assert "c3" not in {d for hits in answers(writer) for d, _ in hits}


def test_a_write_applied_directly_answers_as_a_replay_does(
    writer: Runtime, make_runtime: RuntimeFactory
) -> None:
    upsert_claims(writer, CHANGED)
    CorpusService(writer).delete_document("claims", "c1")
    upsert_claims(writer, {"c1": "5G towers spread the virus", "c4": "Garlic protects nobody"})
    replayed = make_runtime()  # builds its indexes from the documents and the log
    serve(replayed)
    assert_same_hits(answers(writer), answers(replayed))


def test_another_workers_write_in_between_is_read_from_the_log(
    writer: Runtime, make_runtime: RuntimeFactory
) -> None:
    other = make_runtime()
    serve(other)
    upsert_claims(other, {"c5": "Vaccines contain microchips"})  # the writer has not followed it
    with statements() as seen:
        upsert_claims(writer, {"c4": "Garlic protects against the virus"})
    assert [s for s in seen if "FROM document_changes" in s]  # behind its mark: the log's way
    assert {"c4", "c5"} <= {d for d, _ in ranked(writer, "dense", "microchips in vaccines")}
    assert delta_seqs(writer) == logged_seqs(writer)
    CorpusService(other).delete_document("claims", "c5")
    upsert_claims(writer, {"c6": "Lemons cure cancer"})
    assert "c5" not in {d for hits in answers(writer) for d, _ in hits}
    other.serving.state().store.follow()
    assert_same_hits(answers(other), answers(writer))


def test_a_write_another_worker_commits_during_this_one_is_not_skipped(
    writer: Runtime, make_runtime: RuntimeFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = make_runtime()
    serve(other)
    racing: list[threading.Thread] = []
    read_documents = DocumentRepository.get_many

    def read_then_race(self: DocumentRepository, *args: Any, **kwargs: Any) -> Any:
        found = read_documents(self, *args, **kwargs)
        if not racing:  # once, inside the writer's transaction: the other worker writes now
            racing.append(threading.Thread(target=upsert_claims, args=(other, {"c5": "Vaccines hold chips"})))
            racing[0].start()
            racing[0].join(1.0)  # a writer that did not wait for the corpus's turn has committed by now
        return found

    monkeypatch.setattr(DocumentRepository, "get_many", read_then_race)
    upsert_claims(writer, {"c4": "Garlic protects against the virus"})
    racing[0].join(30)
    writer.serving.state().store.follow()
    # Both writes in the index at their own numbers (on SQLite the writer used to read the corpus's mark
    # before the other's commit, apply its own write from it, and skip the other's entry for good).
    assert delta_seqs(writer) == logged_seqs(writer)
    assert {"c4", "c5"} <= {d for d, _ in ranked(writer, "dense", "chips in vaccines")}
    assert CorpusService(writer).get_corpus("claims").document_count == len(CLAIMS) + 2
