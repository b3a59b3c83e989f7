"""The retraining job: train in a child process on pairs exported at submission, gate, register.

A candidate that passes its gate is not swapped in here: the job enqueues an activation job (in the
same transaction that finishes it), which builds the indexes and switches serving.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from app.control.activation import activation_job
from app.control.gate import GATE_SOURCE, GateDataset, build_gate_dataset
from app.control.gate_cv import cross_validated_gate
from app.control.job_context import JobContext, Outcome
from app.control.pair_export import ExportedPair, read_pairs
from app.control.retraining.config import (
    DEV_FOLDER,
    DEV_PAIRS,
    RetrainParams,
    fetch_inputs,
    job_paths,
    write_config,
)
from app.control.retraining.curve import TrainingCurve
from app.control.retraining.dev_gate import CorpusRecords, dev_gate
from app.control.retraining.process import TrainingProcess, describe_exit
from app.control.retraining.reranker import TrainedReranker, load_trained, reranker_args
from app.db.models import utcnow
from app.db.repositories.corpora import CorpusRepository
from app.db.repositories.documents import DocumentRepository
from app.search.ranking_setting import RankingChoice, RankingSetting, ranking_record, resolve_mode
from app.serving.context import ServiceContext
from app.serving.encoder import Encoder
from app.serving.registry import Registration
from evaluation.judgements import write_beir
from pairank import train_events
from pairank.models import CROSS_ENCODER, ModelSpec, resolve_model

log = logging.getLogger(__name__)


def run_retrain(service: ServiceContext, context: JobContext) -> Outcome:
    """The `retrain` job: train in a child process, gate, register; a passing gate enqueues activation."""
    return RetrainRun(service, context).run()


class RetrainRun:
    """One retraining job on a worker; the heavy training runs in a child process."""

    def __init__(self, service: ServiceContext, context: JobContext) -> None:
        self.service = service
        self.context = context
        self.params = RetrainParams(**context.params["_resolved"])
        self.job_dir, self.run_dir = job_paths(service.settings.data_dir, context.job_id)
        self.process: TrainingProcess | None = None
        self.stored_calibration: dict[str, Any] | None = None
        self.default_ranking: dict[str, Any] | None = None
        self._last_progress_write = 0.0
        self.curve = TrainingCurve()  # kept in every later progress, so the finished job still shows it
        self.stage = "training"  # then "training_reranker" where the job trains a cross-encoder too

    def run(self) -> Outcome:
        """Every stage; the training process's stderr tail is kept on the job whatever happens."""
        self.context.update(run_dir=str(self.run_dir))
        try:
            return self._run_stages()
        finally:
            if self.process is not None and self.process.stderr_tail:
                self.context.update(log_tail="\n".join(self.process.stderr_tail))

    def _run_stages(self) -> Outcome:
        context = self.context
        fetch_inputs(self.service, context.job_id, self.job_dir)
        dev = read_pairs(self.job_dir / DEV_PAIRS)
        # A registered base model (the active one, by default) trains from its stored files, wherever
        # it was registered.
        registry = self.service.serving.registry
        base_path = registry.spec(self.params.base_version).path if self.params.base_version else None
        gate_set = self._gate_dataset(dev)
        config = write_config(self.job_dir, self.params, dev, base_path, self._served_ranking())
        write_beir(gate_set.dataset, self.job_dir / DEV_FOLDER)  # the trainer's dev set is the gate's
        context.progress("training", train_pairs=context.params.get("train_pairs"), dev_pairs=len(dev))
        self._train(self.run_dir)
        if self.params.reranker is not None:
            self.stage = "training_reranker"
            context.progress(self.stage, **self.curve.progress())
            self._train(self._reranker_run(), self._reranker_args())

        context.progress("exporting_model", **self.curve.progress())
        spec = resolve_model(str(self._model_run()))
        # The candidate is exported, quantized and quality-gated like any served model before it is scored.
        candidate = self.service.serving.load_encoder(spec)
        trained = None
        try:
            if self.params.reranker is not None:
                trained = load_trained(self.service.settings, self._reranker_run(), self.params.reranker)
            return self._evaluate(spec, candidate, config, gate_set, trained)
        finally:
            candidate.close()
            if trained is not None:
                trained.close()

    def _train(self, output: Path, args: list[str] | None = None) -> None:
        """One `pairank train` child process into `output`; a failure raises with its reason."""
        self.process = TrainingProcess(
            self.job_dir / "config.yaml", output, self.context.cancelled, args=args or []
        )
        self.context.on_cancel(self.process.terminate)
        code = self.process.run(self._on_training_event)
        self.context.check_cancel()
        if code != 0:
            reason = self.process.last_error_event or (
                self.process.stderr_tail[-1] if self.process.stderr_tail else ""
            )
            raise RuntimeError(f"training process {describe_exit(code)}: {reason}".rstrip(": "))

    def _reranker_run(self) -> Path:
        """The cross-encoder's run folder, beside the bi-encoder's."""
        return self.run_dir.parent / f"{self.run_dir.name}-reranker"

    def _reranker_args(self) -> list[str]:
        plan = self.params.reranker or {}
        registry = self.service.serving.registry
        version = plan.get("base_version")
        base = registry.spec(version).path if version else str(plan["base_model"])
        return reranker_args(plan, base, self.job_dir / DEV_FOLDER / "corpus.jsonl", self.params.seed)

    def _evaluate(
        self,
        spec: ModelSpec,
        candidate: Encoder,
        config: dict[str, Any],
        gate_set: GateDataset,
        trained: TrainedReranker | None,
    ) -> Outcome:
        params = self.params
        self.context.progress("evaluating", encoder=candidate.describe(), **self.curve.progress())
        active = self.service.serving.state()
        if params.cv_folds:
            summary = json.loads((self.run_dir / "cv.json").read_text())
            gate = cross_validated_gate(summary, params.min_improvement, params.require_significant)
            carried = self._carried_calibration(spec.version, gate, gate_set)
            if carried is not None:
                gate["calibration"] = carried
        else:
            records = CorpusRecords(self.stored_calibration, self.default_ranking)
            encode = candidate.encode_bulk
            gate = dev_gate(self.service, params, gate_set, spec.version, encode, records, trained)
        gate["active_model"] = active.model_version
        manifest = json.loads((self._model_run() / "manifest.json").read_text())
        bi_encoder = Registration(spec, str(self._model_run() / "model"), "trained", {
            "base_model": params.base_model, "job_id": self.context.job_id,
            "training": {"params": asdict(params), "config": config},
            "dev_metrics": {"training": manifest.get("dev_metrics"), "gate": gate},
            "encoder": candidate.describe(),
        })  # fmt: skip
        registrations = [bi_encoder]
        if trained is not None:
            plan = params.reranker or {}
            registrations.append(Registration(trained.spec, str(self._reranker_run() / "model"), "trained", {
                "base_model": plan.get("base_model"), "job_id": self.context.job_id,
                "training": {"kind": CROSS_ENCODER, "params": plan, "bi_encoder": spec.version},
                "dev_metrics": {"gate": {"chosen": gate.get("chosen"), "bi_encoder": spec.version}},
                "encoder": trained.reranker.describe(),
            }))  # fmt: skip
        # Their files go into the artifact store in one registering transaction: both or neither, and
        # any process may load them.
        self.service.serving.registry.register_together(registrations)
        self.context.check_cancel()
        follow_ups = []
        gate["activation"] = "not requested" if not params.auto_activate else "gate not passed"
        if params.auto_activate and gate["improved"]:
            follow_ups.append(activation_job(spec.version, requested_by=self.context.job_id))
            gate["activation"] = "queued"
        self.context.progress("done", activation=gate["activation"], **self.curve.progress())
        return Outcome({"model_version": spec.version, "gate": gate}, follow_ups)

    def _model_run(self) -> Path:
        """The candidate's run folder: the training run, or a cross-validation's final run."""
        return self.run_dir / "final" if self.params.cv_folds else self.run_dir

    def _gate_dataset(self, dev: list[ExportedPair]) -> GateDataset:
        """The dev pairs judged over the corpus's documents as they are when training starts."""
        with self.service.sessions() as session:
            corpus = CorpusRepository(session).get(self.params.corpus)
            if corpus is None:
                raise RuntimeError(f"corpus {self.params.corpus!r} was deleted during the job")
            documents = {d: t for batch in DocumentRepository(session, corpus).iter_texts() for d, t in batch}
            self.stored_calibration = corpus.ranking_calibration
            self.default_ranking = corpus.default_ranking
        return build_gate_dataset(documents, dev)

    def _carried_calibration(
        self, version: str, gate: dict[str, Any], dataset: GateDataset
    ) -> dict[str, Any] | None:
        """The folds scored the candidate at the ranking the corpus serves; where that is a calibration
        of the active model (not the corpus default, which serves any model), the candidate keeps it
        on activation, so it is served exactly as it was judged."""
        stored = self.stored_calibration
        if not stored or stored.get("model") != self.service.serving.state().model_version:
            return None
        setting = self._served_ranking()
        value = float(gate["candidate"][gate["metric"]])
        choice = RankingChoice(setting, value, {setting.label: value})
        record = ranking_record(
            version,
            choice,
            gate["metric"],
            int(gate["queries"]),
            dataset.mode,
            GATE_SOURCE,
            utcnow().isoformat(),
        )
        return {"corpus": self.params.corpus, **record}

    def _served_ranking(self) -> RankingSetting:
        """The first stage the corpus serves with the active model now (`rank` without choices)."""
        model = self.service.serving.state().model_version
        return resolve_mode(None, self.stored_calibration, model, self.default_ranking)

    def _on_training_event(self, event: dict[str, Any]) -> None:
        if self.stage != "training":  # the cross-encoder's run: no bi-encoder curve to extend
            tail = "\n".join(self.process.stderr_tail) if self.process is not None else None
            self.context.update(progress={"stage": self.stage, **self.curve.progress()}, log_tail=tail)
            return
        self.curve.add(event)
        # Step events arrive often; the database gets at most two progress writes a second.
        now = time.monotonic()
        if event.get(train_events.EVENT) == train_events.STEP and now - self._last_progress_write < 0.5:
            return
        self._last_progress_write = now
        fields = {k: event[k] for k in train_events.PROGRESS_KEYS if k in event}
        tail = "\n".join(self.process.stderr_tail) if self.process is not None else None
        self.context.update(progress={"stage": self.stage, **fields, **self.curve.progress()}, log_tail=tail)
