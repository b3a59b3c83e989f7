"""Labeled training pairs of a corpus: store, list, delete, split into train/dev, export for training."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from app.control.pair_export import ExportedPair, export_pairs
from app.core.errors import InvalidInputError, NotFoundError
from app.core.grades import check_grade
from app.core.limits import check_count, check_text
from app.db.admin_models import TrainingPair
from app.db.corpus_lookup import require_corpus, require_documents
from app.db.engine import transaction
from app.db.repositories.documents import DocumentRepository
from app.db.repositories.pairs import PairRepository
from app.db.workbench_models import PairJudgement
from app.serving.context import ServiceContext
from app.usecases.workbench.judging import judge_pair
from evaluation.forward_splits import recent_holdout


@dataclass(frozen=True)
class Judgement:
    """One person's verdict on a stored document for a query (the console's judge buttons)."""

    query: str
    document_id: str
    label: float | None
    judged_by: str
    unsure: bool = False
    note: str | None = None


@dataclass(frozen=True)
class JudgedPair:
    """The pair a judgement stored or changed, whether it is new, this judge's row, and the corpus's
    counts after it."""

    pair: TrainingPair
    created: bool
    judgement: PairJudgement
    counts: dict[str, int]


def checked_grade(scale: str, label: float | None, unsure: bool, field: str = "label") -> float | None:
    """The grade a judgement records (None: unsure), or a 422 naming the field and the corpus scale."""
    if unsure:
        return None
    if label is None:
        raise InvalidInputError(f"{field}: required unless unsure is true", field)
    check_grade(scale, label, field)
    return label


@dataclass(frozen=True)
class PairInput:
    """A labeled pair as sent: the document is a stored id or an inline text."""

    query: str
    document_id: str | None
    document: str | None
    label: float
    split: str | None = None


def is_dev_query(query: str, fraction: float, seed: int) -> bool:
    """Deterministic split by query text, so all pairs of a query land on the same side."""
    digest = hashlib.sha256(f"{seed}\0{query}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < fraction


def in_time_order(pairs: Sequence[TrainingPair]) -> list[TrainingPair]:
    """Pairs by when they were judged (ties by insertion): the order forward validation reads as time."""
    return sorted(pairs, key=lambda pair: (pair.created_at, pair.id))


def recent_queries(pairs: Sequence[TrainingPair], fraction: float) -> set[str]:
    """The most recently judged `fraction` of the queries (at least one), by each query's first pair:
    the gate validates on them, so it asks whether the model ranks *later* queries better."""
    ordered = list(dict.fromkeys(pair.query for pair in in_time_order(pairs)))
    if len(ordered) < 2:
        return set()
    return set(recent_holdout(ordered, fraction, minimum=1).validate)


class PairService:
    """Use cases on a corpus's training pairs."""

    def __init__(self, service: ServiceContext) -> None:
        self.service = service
        self.settings = service.settings

    def add_pairs(
        self, name: str, pairs: Sequence[PairInput], judged_by: str | None = None
    ) -> dict[str, int]:
        """Store pairs (all or nothing); document ids must exist in the corpus; `judged_by`: who sent them."""
        check_count("pairs", pairs, self.settings.max_pairs_per_request, "pairs")
        for position, pair in enumerate(pairs):
            check_text(self.settings, f"pairs[{position}].query", pair.query)
            if pair.document is not None:
                check_text(self.settings, f"pairs[{position}].document", pair.document)
        with transaction(self.service.sessions) as session:
            corpus = require_corpus(session, name)
            ids = [p.document_id for p in pairs if p.document_id is not None]
            require_documents(session, corpus.id, name, ids, "pairs")
            repository = PairRepository(session, corpus.id)
            repository.add_many(
                [
                    {
                        "query": p.query,
                        "document_id": p.document_id,
                        "document": p.document,
                        "label": p.label,
                        "split": p.split,
                        "judged_by": judged_by,
                    }
                    for p in pairs
                ]
            )
            return {"added": len(pairs), **repository.counts()}

    def list_pairs(
        self, name: str, split: str | None, offset: int, limit: int, query: str | None = None
    ) -> tuple[list[TrainingPair], dict[str, int]]:
        """A page of pairs (of one split, or of one query text) and the corpus's pair counts."""
        with self.service.sessions() as session:
            corpus = require_corpus(session, name)
            repository = PairRepository(session, corpus.id)
            return repository.list(split, offset, limit, query), repository.counts()

    def judge(self, name: str, judgement: Judgement) -> JudgedPair:
        """Store one judge's judgement of a stored document for a query: the pair of that (query,
        document) is found or added, this judge's row of it changed or added, and the pair's label set to
        the aggregate of its judges. Judgements of a corpus take turns (`take_writer_turn`), so two
        judges at once never make two pairs."""
        check_text(self.settings, "query", judgement.query)
        with transaction(self.service.sessions) as session:
            corpus = require_corpus(session, name)
            grade = checked_grade(corpus.judgement_scale, judgement.label, judgement.unsure)
            repository = PairRepository(session, corpus.id)
            repository.take_writer_turn()
            require_documents(session, corpus.id, name, [judgement.document_id], "document_id")
            pair, mine, created = judge_pair(
                session, corpus.id, (judgement.query, judgement.document_id), judgement.judged_by, grade,
                judgement.note,
            )  # fmt: skip
            return JudgedPair(pair, created, mine, repository.counts())

    def delete_pair(self, name: str, pair_id: int) -> None:
        """Delete one pair."""
        with transaction(self.service.sessions) as session:
            repository = PairRepository(session, require_corpus(session, name).id)
            pair = repository.get(pair_id)
            if pair is None:
                raise NotFoundError(f"pair {pair_id} does not exist in corpus {name!r}", field="id")
            repository.delete(pair)

    def split_pairs(self, name: str, dev_fraction: float, seed: int) -> dict[str, int]:
        """Assign every pair to train or dev, deterministically by query text."""
        with transaction(self.service.sessions) as session:
            repository = PairRepository(session, require_corpus(session, name).id)
            for pair in repository.list():
                pair.split = "dev" if is_dev_query(pair.query, dev_fraction, seed) else "train"
            session.flush()
            return repository.counts()

    def export(
        self, name: str, dev_pairs: Sequence[PairInput] | None, dev_fraction: float, seed: int
    ) -> tuple[list[ExportedPair], list[ExportedPair]]:
        """(train, dev) pairs, texts resolved: an explicit dev set, else the stored splits, else the most
        recent `dev_fraction` of the queries as dev; the stored pairs in the order they were judged."""
        with self.service.sessions() as session:
            corpus = require_corpus(session, name)
            stored = PairRepository(session, corpus.id).list()
            explicit = list(dev_pairs or [])
            ids = [p.document_id for p in stored if p.document_id is not None]
            ids += [p.document_id for p in explicit if p.document_id is not None]
            texts = DocumentRepository(session, corpus).texts(ids)

        train_rows: list[TrainingPair | PairInput]
        dev_rows: list[TrainingPair | PairInput]
        if explicit:
            train_rows, dev_rows = list(stored), list(explicit)
        elif any(p.split == "dev" for p in stored):
            train_rows = [p for p in stored if p.split != "dev"]
            dev_rows = [p for p in stored if p.split == "dev"]
        else:
            recent = recent_queries(stored, dev_fraction)
            train_rows = [p for p in in_time_order(stored) if p.query not in recent]
            dev_rows = [p for p in in_time_order(stored) if p.query in recent]
        return export_pairs(train_rows, texts), export_pairs(dev_rows, texts)
