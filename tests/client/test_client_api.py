"""Every method of the blocking client against a real `pairank serve` (keys required, the tiny model):
corpora, documents, ranking, pairs, calibrations, evaluations, keys, and the errors the API answers."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from app.schemas.corpora import CorpusOut, DocumentOut, IndexStatus
from app.schemas.ranking import RankResponse
from pairank.client import (
    Client,
    ConflictError,
    ForbiddenError,
    InvalidRequestError,
    NotFoundError,
    UnauthorizedError,
)
from tests.client.conftest import url_of
from tests.helpers.processes import Server

CORPUS = "api-claims"
CLAIMS = [
    ("c1", "The moon landing was staged in a film studio.", "en"),
    ("c2", "Drinking bleach cures the coronavirus infection.", "en"),
    ("c3", "Vaccines cause autism in young children.", "de"),
    ("c4", "The earth is flat and NASA hides it.", "en"),
    ("c5", "A shark was photographed swimming on a flooded highway.", "de"),
]
AWKWARD_IDS = ["a/b?c#d", "..", "ümlaut é"]


@pytest.fixture(scope="module")
def corpus(admin: Client) -> Iterator[str]:
    """A claim corpus with the five claims (metadata `lang`), deleted afterwards."""
    admin.create_corpus(CORPUS, "claim", description="five claims")
    admin.upsert(CORPUS, [{"id": i, "text": t, "metadata": {"lang": lang}} for i, t, lang in CLAIMS])
    yield CORPUS
    admin.delete_corpus(CORPUS)


def test_corpora_lifecycle(admin: Client) -> None:
    ranking = {"mode": "hybrid", "alpha": 0.3}
    created = admin.create_corpus("api-answers", "answer", description="d", ranking=ranking)
    assert isinstance(created, CorpusOut) and created.ranking is not None and created.ranking.alpha == 0.3
    assert "api-answers" in [c.name for c in admin.list_corpora()]
    assert admin.get_corpus("api-answers").document_count == 0
    status = admin.index_status("api-answers")
    assert isinstance(status, IndexStatus) and status.size == 0
    with pytest.raises(ConflictError) as taken:
        admin.create_corpus("api-answers", "answer")
    assert (
        taken.value.status == 409 and taken.value.field == "name" and "already exists" in taken.value.detail
    )
    assert admin.delete_corpus("api-answers") is None  # the API's `confirm` is the client's business
    with pytest.raises(NotFoundError) as gone:
        admin.get_corpus("api-answers")
    assert gone.value.status == 404 and gone.value.field == "name"


def test_documents_upsert_in_batches_with_progress_get_delete_and_page(admin: Client) -> None:
    admin.create_corpus("api-docs", "claim")
    documents = [
        {"id": doc_id, "text": f"claim number {n} about towers"} for n, doc_id in enumerate(AWKWARD_IDS)
    ]
    documents += [{"id": f"d{n}", "text": f"claim {n} on floods", "metadata": {"n": n}} for n in range(4)]
    seen: list[tuple[int, int | None]] = []
    summed = admin.upsert(
        "api-docs", documents, batch_size=3, progress=lambda done, total: seen.append((done, total))
    )
    assert seen == [(3, 7), (6, 7), (7, 7)]
    assert (summed.inserted, summed.updated, summed.unchanged, summed.document_count) == (7, 0, 0, 7)
    # From a generator (no length), again: every document unchanged, so a retried batch changes nothing.
    seen.clear()
    again = admin.upsert("api-docs", (d for d in documents), batch_size=5, progress=lambda *p: seen.append(p))
    assert again.unchanged == 7 and seen == [(5, None), (7, None)]
    for doc_id in AWKWARD_IDS:  # any id, percent-encoded for the URL by the client
        document = admin.get_document("api-docs", doc_id)
        assert isinstance(document, DocumentOut) and document.id == doc_id
    # An omitted `metadata` keeps what is stored; a given one replaces it.
    admin.upsert("api-docs", [{"id": "d1", "text": "claim 1 on floods, edited"}])
    assert admin.get_document("api-docs", "d1").metadata == {"n": 1}
    assert admin.delete_document("api-docs", "..") is None
    with pytest.raises(NotFoundError) as missing:
        admin.get_document("api-docs", "..")
    assert missing.value.field == "id"
    first = admin.list_documents("api-docs", limit=4)
    assert len(first.documents) == 4 and first.next_cursor is not None
    rest = admin.list_documents("api-docs", limit=4, cursor=first.next_cursor)
    assert len(rest.documents) == 2 and rest.next_cursor is None
    assert [d.id for d in admin.iter_documents("api-docs", page_size=2)] == [
        d.id for d in first.documents + rest.documents
    ]
    admin.delete_corpus("api-docs")


def test_rank_duplicates_similarity_and_compare(admin: Client, corpus: str) -> None:
    ranked = admin.rank(corpus, "was the moon landing staged", k=2, mode="dense")
    assert isinstance(ranked, RankResponse) and len(ranked.results) == 2
    # The tiny test model is random weights and knows no meaning, so the expected best claim is the
    # one the same model scores highest, asked through /v1/similarity.
    cosines = admin.similarity(source="was the moon landing staged", targets=[t for _, t, _ in CLAIMS]).scores
    best = CLAIMS[max(range(len(CLAIMS)), key=lambda i: cosines[i])][0]
    assert ranked.results[0].id == best and ranked.ranking is not None and ranked.ranking.mode == "dense"
    filtered = admin.rank(corpus, "moon landing", k=5, filter={"lang": "de"}, include_metadata=True)
    assert {r.id for r in filtered.results} == {"c3", "c5"} and filtered.results[0].metadata == {"lang": "de"}
    assert {r.id for r in admin.rank(corpus, "moon", candidates=["c2", "c4"]).results} == {"c2", "c4"}
    texts = ["flooded highway shark", "moon landing"]
    inline = admin.rank_texts("sharks on roads", texts, k=1)
    inline_cosines = admin.similarity(source="sharks on roads", targets=texts).scores
    assert inline.results[0].id == max(range(len(texts)), key=lambda i: inline_cosines[i])
    one = admin.duplicates(corpus, CLAIMS[0][1], threshold=0.99)
    assert [d.id for d in one.results[0].duplicates] == ["c1"] and one.threshold_source == "request"
    several = admin.duplicates(
        corpus, texts=[CLAIMS[1][1], {"id": "c3", "text": CLAIMS[2][1]}], threshold=0.99
    )
    assert [[d.id for d in r.duplicates] for r in several.results] == [["c2"], []]  # never itself
    stored = admin.duplicates(corpus, ids=["c4"], k=3)
    assert stored.results[0].id == "c4" and "c4" not in [d.id for d in stored.results[0].duplicates]
    pairs = admin.similarity([("the moon", "the moon"), ("the moon", "bleach")])
    assert pairs.scores[0] == pytest.approx(1.0, abs=1e-4) and pairs.scores[1] < pairs.scores[0]
    assert len(admin.similarity(source="moon", targets=["moon", "sharks", "earth"]).scores) == 3
    compared = admin.compare(corpus, "moon landing studio", right={"mode": "lexical"}, k=3)
    assert compared.right.ranking is not None and compared.right.ranking.mode == "lexical"
    assert len(compared.left.results) == 3


def test_pairs_judgements_and_calibrations(admin: Client, corpus: str) -> None:
    queries = [
        ("was the moon landing fake", "c1"),
        ("bleach covid cure", "c2"),
        ("autism from vaccines", "c3"),
    ]
    added = admin.add_pairs(corpus, [{"query": q, "document_id": d, "label": 1} for q, d in queries])
    assert added.added == 3 and added.positive == 3
    judged = admin.judge(corpus, "was the moon landing fake", "c4", 0)
    assert judged.created and judged.counts.negative == 1
    again = admin.judge(corpus, "was the moon landing fake", "c4", 1)  # the same pair, judged again
    assert not again.created and again.pair.id == judged.pair.id and again.pair.label == 1
    listed = admin.list_pairs(corpus, query="was the moon landing fake")
    assert {p.document_id for p in listed.pairs} == {"c1", "c4"} and listed.counts.total == 4
    counts = admin.split_pairs(corpus, dev_fraction=0.5, seed=1)
    assert counts.train + counts.dev == 4 and counts.unsplit == 0
    assert len(admin.list_pairs(corpus, split="dev", limit=1).pairs) == 1
    assert admin.delete_pair(corpus, judged.pair.id) is None
    metrics = admin.compare_metrics(corpus, right={"mode": "lexical"}, metrics=["MRR"])
    assert metrics.metrics == ["MRR"] and metrics.queries == 3 and "MRR" in metrics.right.means
    threshold = admin.calibrate(
        corpus,
        [
            {"text": CLAIMS[0][1], "document_id": "c1", "label": 1},
            {"text": "the moon landing was filmed", "document_id": "c1", "label": 1},
            {"text": "sharks love the sea", "document_id": "c2", "label": 0},
            {"text": "flat earth", "document": "a recipe for bread", "label": 0},
        ],
    )
    assert threshold.pair_count == 4 and admin.get_corpus(corpus).duplicate_threshold == threshold.threshold
    chosen = admin.calibrate_ranking(corpus, metric="MRR", folds=2)
    assert chosen.metric == "MRR" and chosen.queries == 3 and chosen.mode in ("dense", "lexical", "hybrid")


def test_evaluations(admin: Client, corpus: str) -> None:
    queries = [{"id": "q1", "text": "moon landing hoax"}, {"id": "q2", "text": "shark highway"}]
    qrels = [
        {"query_id": "q1", "document_id": "c1", "relevance": 1},
        {"query_id": "q2", "document_id": "c5", "relevance": 1},
    ]
    queued = admin.create_evaluation(
        queries, qrels, corpus=corpus, metrics=["MRR", "HasPositive@1"], name="e1"
    )
    done = admin.wait_evaluation(queued.id, timeout=60, poll_interval=0.1)
    assert done.status == "succeeded" and set(done.metrics or {}) == {"MRR", "HasPositive@1"}
    assert done.per_query is not None and set(done.per_query) == {"q1", "q2"}
    assert admin.get_evaluation(queued.id).metrics == done.metrics
    assert queued.id in [e.id for e in admin.list_evaluations(limit=10)]
    inline = [{"id": "x", "text": "the moon landing"}, {"id": "y", "text": "sharks"}]
    judged = [{"query_id": "q1", "document_id": "x", "relevance": 1}]
    alone = admin.create_evaluation(queries[:1], judged, documents=inline, metrics=["MRR"])
    with pytest.raises(NotFoundError):
        admin.get_evaluation("no-such-evaluation")
    assert admin.wait_evaluation(alone.id, timeout=60).status == "succeeded"


def test_keys_scopes_and_revocation(admin: Client, server: Server, corpus: str) -> None:
    created = admin.create_key("read", corpora=[corpus], name="reader")
    assert created.key.startswith("prk_") and created.scope == "read"
    with Client(url_of(server), api_key=created.key) as reader:
        me = reader.whoami()
        assert (me.key_id, me.scope, me.corpora, me.auth) == (created.id, "read", [corpus], "required")
        assert reader.rank(corpus, "moon").results
        with pytest.raises(ForbiddenError) as scope:
            reader.upsert(corpus, [{"id": "x", "text": "a write"}])
        assert scope.value.status == 403 and scope.value.field == "scope"
        with pytest.raises(ForbiddenError) as other:
            reader.get_corpus("api-other")
        assert other.value.field == "corpus"
        assert created.id in [k.id for k in admin.list_keys()]
        assert admin.revoke_key(created.id).revoked_at is not None
        with pytest.raises(UnauthorizedError) as revoked:
            reader.get_corpus(corpus)
        assert revoked.value.status == 401
    with Client(url_of(server), api_key="") as nobody, pytest.raises(UnauthorizedError) as missing:
        nobody.list_corpora()
    assert missing.value.field == "Authorization"


def test_errors_name_the_field_and_the_limit(admin: Client, corpus: str) -> None:
    with pytest.raises(InvalidRequestError) as too_long:
        admin.upsert(corpus, [{"id": "long", "text": "x" * 10_001}])
    error = too_long.value
    assert (error.status, error.field, error.limit) == (413, "documents[0].text", 10_000)
    # What the server's schema refuses: 422 with every problem named.
    with pytest.raises(InvalidRequestError) as typed:
        admin.request("POST", f"/v1/corpora/{corpus}/rank", json={"query": "moon", "k": "5"})
    assert typed.value.status == 422 and typed.value.field == "k" and typed.value.errors[0].type == "int_type"
    # What the API's own models refuse is refused before sending, named as the server names it.
    with pytest.raises(InvalidRequestError) as blank:
        admin.rank(corpus, "   ")
    assert blank.value.status is None and blank.value.field == "query" and "whitespace" in blank.value.detail
    with pytest.raises(InvalidRequestError) as unknown:
        admin.rank(corpus, "moon", sort="desc")
    assert unknown.value.field == "sort" and unknown.value.errors[0].type == "extra_forbidden"
    documents = [{"id": f"ok{n}", "text": "fine"} for n in range(3)] + [{"id": "bad", "text": " "}]
    with pytest.raises(InvalidRequestError) as fourth:
        admin.upsert(corpus, documents, batch_size=2)
    assert fourth.value.field == "documents[3].text"  # its place in the whole input, not in its batch
    with pytest.raises(NotFoundError) as unknown_corpus:
        admin.rank("api-nope", "moon")
    assert unknown_corpus.value.field == "name" and "api-nope" in unknown_corpus.value.detail
    assert admin.request("GET", f"/v1/corpora/{corpus}")["name"] == corpus  # any route, plain JSON back


def test_models_and_jobs_listings(admin: Client) -> None:
    models = admin.list_models()
    assert [m for m in models.models if m.is_active] and models.artifact_store == "local"
    assert isinstance(admin.list_jobs(limit=5), list)
