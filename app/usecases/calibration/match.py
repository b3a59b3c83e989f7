"""Calibrating a corpus's match decisions on its own judged pairs, open-world and forward in time.

The corpus's judged queries (those with a relevant stored document, oldest judgement first) are ranked
exactly as `rank` serves them, twice: as the corpus is, and with their relevant documents and those
documents' twins left out (the claim was never checked). The decision models are measured forward on
them and the best kept (evaluation/match_calibration.py); thresholds follow the policy's target
precisions. The result is stored on the corpus for the serving model version, with the forward outcomes
(so that a policy change re-chooses the thresholds without recalibrating) and the twin groups. Small
corpora calibrate within the request; larger ones in a job (`calibrate-match`), which also runs after
every activation for the corpora that were calibrated.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any

import numpy as np

from app.control import job_kinds
from app.control.job_context import JobContext, Outcome
from app.core.errors import ConflictError
from app.core.match_policy import MatchPolicy
from app.db.admin_models import Job
from app.db.corpus_lookup import require_corpus
from app.db.engine import transaction
from app.db.models import utcnow
from app.db.repositories.documents import DocumentReader, found_documents
from app.db.repositories.jobs import JobRepository
from app.db.repositories.pairs import PairRepository
from app.search.decisions import required_decider
from app.search.first_stage import LiveCorpus
from app.search.ranked import RankedItem, ranked_documents
from app.search.ranking_setting import served_setting
from app.serving.context import ServiceContext
from app.serving.state import ServingState
from app.stores.port import CorpusVectors
from app.usecases.compare import judged_queries
from app.usecases.reranking import rerank_stage, reranked
from evaluation.decision_features import Candidate
from evaluation.decision_plots import calibration_figure, threshold_curves
from evaluation.decisions import DECISION_DEPTH, decide
from evaluation.match_calibration import calibrate, one_world_each, thresholds_for
from evaluation.metrics import RankingReport
from evaluation.open_world import JudgedQuery, decision_report, outcomes, rates, reliability
from evaluation.open_world import Outcome as Decided
from evaluation.twins import twin_groups
from indexes.first_stage import gather, rank_pool, sides_of, without

KIND = job_kinds.CALIBRATE_MATCH
MIN_QUERIES = 20  # judged queries with a relevant document: fewer cannot choose two thresholds
INLINE_QUERIES = 300  # more judged queries than this calibrate in a job (202), not in the request
_TWIN_NEIGHBOURS = 6


def _compact(found: Sequence[Decided]) -> list[list[float]]:
    return [[float(o.absent), o.probability, float(o.right_if_matched), float(o.gold_listed), o.words, o.fold]
            for o in found]  # fmt: skip


def _outcomes(stored: Sequence[Sequence[float]]) -> list[Decided]:
    return [Decided(bool(a), float(p), bool(r), bool(g), int(w), int(f)) for a, p, r, g, w, f in stored]


def rederived(calibration: Mapping[str, Any], policy: MatchPolicy) -> dict[str, Any]:
    """The calibration with thresholds and report re-chosen for the policy's targets."""
    found = _outcomes(calibration.get("outcomes", []))
    thresholds = thresholds_for(found, policy.absent_share, policy.match_precision, policy.new_precision)
    report = decision_report(found, thresholds, policy.absent_share, policy.min_words)
    return {**calibration, "thresholds": asdict(thresholds), "report": report, "policy": policy.record()}


def _twins(state: ServingState, opened: CorpusVectors, sessions: Any) -> list[list[str]]:
    """Groups of near-identical documents: each document's nearest neighbours, judged by the twin rule."""
    with sessions() as session:
        rows = [row for batch in DocumentReader(session, opened.corpus_id).iter_texts() for row in batch]
        database_id = DocumentReader(session, opened.corpus_id).ids_of([external for external, _ in rows])
    ids = [external for external, _ in rows]
    present, vectors = state.store.present_vectors(opened, [database_id[e] for e in ids])
    row_of = {database_id[e]: i for i, e in enumerate(ids)}
    neighbours = []
    search = LiveCorpus(state.store, opened)
    for start in range(0, len(present), 512):
        chunk = np.asarray(vectors[start : start + 512])
        for offset, hits in enumerate(search.dense_hits(chunk, _TWIN_NEIGHBOURS, None)):
            i = row_of[present[start + offset]]
            neighbours += [(i, row_of[d], s) for d, s in hits if d in row_of]
    return twin_groups(ids, [text for _, text in rows], neighbours)


def judged_worlds(
    service: ServiceContext, state: ServingState, opened: CorpusVectors, queries: list[tuple[str, set[str]]],
    twins: Sequence[Sequence[str]],
) -> list[JudgedQuery]:  # fmt: skip
    """The judged queries in both worlds, each list as `rank` serves it (re-ranking stage included)."""
    how = served_setting(opened.settings, None, state.model_version)
    stage = rerank_stage(service, None, opened.settings, state.model_version)
    group_of = {member: group for group in twins for member in group}
    golds = [frozenset(d for r in relevant for d in group_of.get(r, [r])) for _, relevant in queries]
    with service.sessions() as session:
        database_id = DocumentReader(session, opened.corpus_id).ids_of(sorted({d for g in golds for d in g}))
    texts = [text for text, _ in queries]
    vectors = state.encoder.encode_bulk(texts, label="match calibration")
    pools = gather(LiveCorpus(state.store, opened), texts, vectors, DECISION_DEPTH, sides_of(how))
    worlds = []
    for pool, gold in zip(pools, golds, strict=True):
        gone = [database_id[d] for d in gold if d in database_id]
        worlds.append(
            (rank_pool(pool, how, DECISION_DEPTH), rank_pool(without(pool, gone), how, DECISION_DEPTH))
        )
    with service.sessions() as session:
        seen = [h.doc_id for pair in worlds for hits in pair for h in hits]
        found = found_documents(session, opened.corpus_id, seen)

    def listed(text: str, hits: list[Any]) -> list[Candidate]:
        items: list[RankedItem] = ranked_documents(hits, found)
        if stage is not None:
            items = reranked(service, text, items, stage, DECISION_DEPTH)
        return [Candidate(str(i.id), i.text, i.rank, i.cosine, i.lexical_score or 0.0) for i in items]

    return [
        JudgedQuery(text, gold, listed(text, present), listed(text, absent))
        for text, gold, (present, absent) in zip(texts, golds, worlds, strict=True)
    ]


def calibrate_corpus(
    service: ServiceContext, name: str, changes: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Calibrate and store the corpus's match decisions for the serving model; returns the report."""
    state = service.serving.state()
    opened = state.store.get(name)
    with service.sessions() as session:
        corpus = require_corpus(session, opened.corpus_id)
        policy = MatchPolicy.of({**(corpus.match_policy or {}), **(changes or {})})
        pairs = PairRepository(session, opened.corpus_id).list()
        existing = set(
            DocumentReader(session, opened.corpus_id).ids_of(
                sorted({p.document_id for p in pairs if p.document_id})
            )
        )
    judged = judged_queries(pairs, existing)
    ordered = [(query, {d for d, g in grades.items() if g > 0}) for query, grades in reversed(judged.items())]
    if len(ordered) < MIN_QUERIES:
        raise ConflictError(
            f"pairs: corpus {name!r} has {len(ordered)} judged queries with a relevant stored document; "
            f"match calibration needs at least {MIN_QUERIES}",
            "pairs",
        )
    twins = _twins(state, opened, service.sessions)
    queries = judged_worlds(service, state, opened, ordered, twins)
    result = calibrate(
        queries, policy.absent_share, policy.match_precision, policy.new_precision, policy.min_words
    )
    record = {
        "model": state.model_version,
        "kind": result.kind,
        "decision": result.model.to_dict(),
        "thresholds": asdict(result.thresholds),
        "report": result.report,
        "kinds": result.kinds,
        "reliability": reliability(result.outcomes),
        "outcomes": _compact(result.outcomes),
        "twins": twins,
        "queries": len(queries),
        "ranking": served_setting(opened.settings, None, state.model_version).label,
        "policy": policy.record(),
        "calibrated_at": utcnow().isoformat(),
    }
    with transaction(service.sessions) as session:
        row = require_corpus(session, opened.corpus_id, lock=True)
        row.match_policy = policy.record()
        row.match_calibration = record
    return public_report(record)


def public_report(record: Mapping[str, Any]) -> dict[str, Any]:
    """What the API shows of a calibration: its forward outcomes (stored) become threshold curves."""
    hidden = {"outcomes", "decision", "twins"}
    policy = MatchPolicy.of(record.get("policy"))
    found = _outcomes(record.get("outcomes", []))
    return {
        **{k: v for k, v in record.items() if k not in hidden},
        "twin_groups": len(record.get("twins", [])),
        "curves": threshold_curves(found, policy.absent_share, policy.min_words, points=21),
    }


def run_match_calibration(service: ServiceContext, context: JobContext) -> Outcome:
    """The `calibrate-match` job: calibrate one corpus (queued by the API or after an activation)."""
    name = str(context.params["corpus"])
    target = context.params.get("model")
    if target is not None:  # queued by an activation: whichever worker claims it must serve that model
        _await_model(service, context, str(target))
    context.progress("calibrating", corpus=name)
    report = calibrate_corpus(service, name, context.params.get("policy"))
    context.progress("done", corpus=name, kind=report["kind"])
    return Outcome({"model_version": report["model"]})


def request_calibration(
    service: ServiceContext, name: str, changes: Mapping[str, Any]
) -> dict[str, Any] | Job:
    """Calibrate now (the report) when the corpus has at most INLINE_QUERIES judged queries, else queue a
    `calibrate-match` job (its record: follow it at GET /admin/jobs/{id})."""
    with service.sessions() as session:
        corpus = require_corpus(session, name)
        queries = PairRepository(session, corpus.id).judged_query_count()
    MatchPolicy.of({**(corpus.match_policy or {}), **changes}).check()
    if queries <= INLINE_QUERIES:
        return calibrate_corpus(service, name, changes)
    service.serving.state()  # 503 now rather than a failed job later
    with transaction(service.sessions) as session:
        return JobRepository(session).add(
            str(uuid.uuid4()), KIND, name, {"corpus": name, "policy": dict(changes)}
        )


def calibration_png(stored: Mapping[str, Any]) -> bytes:
    """A stored calibration's reliability and threshold curves as a PNG."""
    policy = MatchPolicy.of(stored.get("policy"))
    curves = threshold_curves(_outcomes(stored.get("outcomes", [])), policy.absent_share, policy.min_words)
    title = (
        f"{stored.get('kind')} decisions for {stored.get('model')}, {stored.get('queries')} judged queries"
    )
    return calibration_figure(stored.get("reliability", []), curves, stored["thresholds"], title)


def open_world_report(
    service: ServiceContext,
    corpus: str,
    queries: Mapping[str, str],
    relevant: Mapping[str, set[str]],
    share: float,
    seed: int,
) -> RankingReport:
    """The corpus's calibrated decisions on judged queries, open-world: each query's relevant documents
    (and their twins) left out for a random `share` of them; match and new precision and coverage and
    the gold-shown rate as metrics, and per query its world, decision and whether it was right."""
    state = service.serving.state()
    opened = state.store.get(corpus)
    settings = opened.settings
    decider = required_decider(settings.match_calibration, settings.match_policy, state.model_version, corpus)
    twins = (settings.match_calibration or {}).get("twins", [])
    ids = list(queries)
    judged = judged_worlds(service, state, opened, [(queries[q], set(relevant[q])) for q in ids], twins)
    kept = one_world_each(outcomes(decider.model, judged), share, seed)
    found = rates(kept, decider.thresholds, share, decider.policy.min_words)
    means = {name: value for name, value in vars(found).items() if isinstance(value, float)}
    per_query = {}
    for query_id, outcome in zip(ids, kept, strict=True):
        decision = decide(outcome.probability, decider.thresholds, outcome.words >= decider.policy.min_words)
        right = (decision == "new") if outcome.absent else (decision == "match" and outcome.right_if_matched)
        per_query[query_id] = {"absent": float(outcome.absent), "probability": outcome.probability,
                               "match": float(decision == "match"), "new": float(decision == "new"),
                               "right": float(right)}  # fmt: skip
    return RankingReport(means, per_query)


def _await_model(service: ServiceContext, context: JobContext, version: str) -> None:
    """Wait until this process serves `version` (its follower applies an activation made elsewhere
    within its sync interval); a RuntimeError naming both when it does not in time."""
    deadline = time.monotonic() + max(60.0, 20 * service.settings.sync_seconds)
    while (serving := service.serving.state().model_version) != version:
        context.check_cancel()
        if time.monotonic() > deadline:
            raise RuntimeError(f"this worker still serves {serving}, not the activated {version}")
        context.progress("waiting for the activated model", model=version, serving=serving)
        time.sleep(0.5)
