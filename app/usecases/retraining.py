"""Admin use cases: submit a retraining job (at most one model-changing job at a time, in any process)."""

from __future__ import annotations

import dataclasses
import tempfile
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from app.control import gate_cv, job_kinds
from app.control.pair_export import write_pairs
from app.control.retraining.config import DEV_PAIRS, TRAIN_PAIRS, RetrainParams
from app.core.defaults import default_gate_metric, parameters_of, training_defaults
from app.core.errors import ConflictError, InvalidInputError
from app.db.admin_models import Job
from app.db.blob_store import BlobRepository
from app.db.corpus_lookup import require_corpus
from app.db.engine import transaction
from app.db.repositories.jobs import MODEL_SLOT, JobRepository
from app.db.repositories.model_versions import ModelRepository
from app.db.repositories.pairs import PairRepository
from app.schemas.retraining import HardNegativesIn, RetrainRerankerIn
from app.search.ranking_setting import served_rerank_record, stored_rerank
from app.serving.context import ServiceContext
from app.usecases.pairs import PairInput, PairService
from evaluation.metrics import parse_metric

KIND = job_kinds.RETRAIN
# Defaults for a retraining request beside the training settings, which follow the corpus's judged
# pairs (app/core/defaults.py: `training_defaults`, one table with the measurement behind each row).
RETRAIN_DEFAULTS: dict[str, Any] = {
    "max_seq_length": 90,
    "seed": 42,
    "auto_activate": True,
    "min_improvement": 0.0,
    "require_significant": True,
    "dev_fraction": 0.2,
    "cross_validation": "auto",
    "folds": gate_cv.CV_FOLDS,
}
_PASSTHROUGH = (
    "loss", "loss_params", "shuffling", "shuffle_params", "epochs", "batch_size", "learning_rate",
    "bias_correction", "max_seq_length", "seed", "auto_activate", "min_improvement", "require_significant",
    "cross_validation", "folds", "hard_negatives",
)  # fmt: skip


@dataclass(frozen=True)
class RetrainCommand:
    """A retraining request as the use case takes it: the corpus, the training choices the caller made
    (field -> value; unset ones take the defaults), and the dev set."""

    corpus: str
    choices: dict[str, Any] = field(default_factory=dict)  # any of _PASSTHROUGH, base_model, gate_metric
    dev_pairs: tuple[PairInput, ...] = ()  # explicit dev pairs (else the most recently judged share)
    dev_fraction: float | None = None

    def shown(self) -> dict[str, Any]:
        """What the job record shows of the request (its pairs are counted, not listed)."""
        return {"corpus": self.corpus, **self.choices}


class RetrainService:
    """Validates retraining requests, exports their pairs once and queues the job for a worker."""

    def __init__(self, service: ServiceContext) -> None:
        self.service = service

    def _params(self, request: RetrainCommand) -> RetrainParams:
        given = {k: v for k, v in request.choices.items() if v is not None}
        with self.service.sessions() as session:
            corpus = require_corpus(session, request.corpus)
            kind = corpus.kind
            negatives = PairRepository(session, corpus.id).counts()["negative"]
            active = ModelRepository(session).active()
            # A stage the corpus serves now is part of what the gate must score (dev protocol below).
            served = served_rerank_record(corpus, active.version if active else "")
            serves_stage = stored_rerank(served) is not None
        defaults = training_defaults(negatives)
        values = {**RETRAIN_DEFAULTS, **defaults.settings, **given}
        # A loss (or batch order) the request names takes its own parameters, not the row's other one's.
        for name, params_key in (("loss", "loss_params"), ("shuffling", "shuffle_params")):
            if name in given and params_key not in given:
                values[params_key] = parameters_of(name, given[name], params_key)
        if "hard_negatives" in request.choices:
            values["hard_negatives"] = given.get("hard_negatives")  # null: off, even where the row mines
        elif values["loss"] != "bsc":
            values["hard_negatives"] = None  # a row's mining goes with its BSC loss
        if values["hard_negatives"] is not None:
            values["hard_negatives"] = HardNegativesIn.model_validate(values["hard_negatives"]).model_dump()
        gate_metric = given.get("gate_metric") or default_gate_metric(kind)
        try:
            parse_metric(gate_metric)
        except ValueError as error:
            raise InvalidInputError(f"gate_metric: {error}", "gate_metric") from error
        if values.get("hard_negatives") and values["loss"] != "bsc":
            raise InvalidInputError(
                "hard_negatives: only the bsc loss takes hard-negative columns", "hard_negatives"
            )
        asked_base = given.get("base_model")
        base = asked_base or (active.path if active is not None else self.service.settings.model)
        base_version = self._registered(base)
        if asked_base is not None and (active is None or base_version != active.version):
            # Fold models start from the base model: their epoch 0 is the active model only when the base is.
            values["cross_validation"] = "never"
        reranker = self._reranker(request.choices, defaults.reranker, base)
        if reranker is not None or serves_stage:
            # Re-ranking stages are scored on the dev queries (held out from both models' training): a
            # cross-validated gate would train a cross-encoder per fold, K times the job's cost.
            if given.get("cross_validation") == "always":
                why = "the job trains" if reranker is not None else "the corpus serves"
                why += " a re-ranker"
                raise InvalidInputError(
                    f"cross_validation: {why}, which the gate scores on the dev set; use auto or never",
                    "cross_validation",
                )
            values["cross_validation"] = "never"
        fraction = request.dev_fraction or values["dev_fraction"]
        passthrough = {key: values[key] for key in _PASSTHROUGH}
        return RetrainParams(corpus=request.corpus, kind=kind, base_model=base, gate_metric=gate_metric,
                             dev_fraction=float(fraction), base_version=base_version, defaults=defaults.data,
                             reranker=reranker, **passthrough)  # fmt: skip

    def _reranker(self, choices: dict[str, Any], by_default: bool, base: str) -> dict[str, Any] | None:
        """The cross-encoder the job trains beside the bi-encoder, or None: the request's `reranker`
        (null or `enabled: false`: none), else the defaults row's choice; it starts from its own base
        or the bi-encoder's."""
        asked = choices.get("reranker", {} if by_default else None)
        if asked is None:
            return None
        plan = RetrainRerankerIn.model_validate(asked).model_dump()
        if not plan.pop("enabled"):
            return None
        plan["base_model"] = plan["base_model"] or base
        plan["base_version"] = self._registered(plan["base_model"])
        return plan

    def _registered(self, base: str) -> str | None:
        """The registered version a base model names (by version, or by the folder it was registered
        from): the worker then trains from its stored files, on any machine."""
        with self.service.sessions() as session:
            repository = ModelRepository(session)
            row = repository.get(base) or repository.registered_from(base)
            return row.version if row is not None else None

    def submit(self, request: RetrainCommand) -> Job:
        """Validate, export the pairs, queue the job; ConflictError while a model job is unfinished."""
        params = self._params(request)
        train, dev = PairService(self.service).export(
            params.corpus, list(request.dev_pairs), params.dev_fraction, params.seed
        )
        # The request is valid; the corpus's pairs are not (yet) enough: a conflict with its state.
        if len(train) < 2:
            raise ConflictError(
                f"corpus {params.corpus!r} has {len(train)} training pairs; need at least 2", "corpus"
            )
        if not any(p.label > 0 for p in dev):
            raise ConflictError("dev: the dev set has no positive pair to evaluate the gate on", "dev")
        folds = gate_cv.gate_folds(params.cross_validation, params.folds, dev, [*train, *dev], params.epochs)
        params = dataclasses.replace(params, cv_folds=folds)
        job_id = str(uuid.uuid4())
        shown = {k: v for k, v in request.shown().items() if v is not None}
        stored = {**shown, "dev_pairs": len(dev), "train_pairs": len(train), "_resolved": asdict(params)}
        with tempfile.TemporaryDirectory() as folder:  # the pairs pass through a file into the database
            files = {TRAIN_PAIRS: train, DEV_PAIRS: dev}
            for name, pairs in files.items():
                write_pairs(Path(folder) / name, pairs)
            with transaction(self.service.sessions) as session:
                job = JobRepository(session).add(job_id, KIND, params.corpus, stored, exclusive=MODEL_SLOT)
                blobs = BlobRepository(session)
                for name in files:
                    blobs.add_input(job_id, name, Path(folder) / name)
                return job
