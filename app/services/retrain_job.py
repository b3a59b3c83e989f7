"""One retraining job: export pairs, train in a child process, gate, register, re-index and swap."""

from __future__ import annotations

import json
import logging
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

from app.db.admin_repository import JobRepository
from app.db.engine import transaction
from app.db.models import utcnow
from app.db.repository import CorpusRepository, DocumentRepository
from app.services.encoder import Encoder
from app.services.gating import build_gate_dataset, gate_metrics
from app.services.pairs import ExportedPair, PairInput, PairService
from app.services.registry import register_model
from app.services.runtime import Runtime
from app.services.training_process import TrainingProcess, describe_exit
from pairank.models import ModelSpec, resolve_model

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RetrainParams:
    """A validated retraining request with every default filled in."""

    corpus: str
    kind: str
    base_model: str
    loss: str
    loss_params: dict[str, Any]
    shuffling: str
    shuffle_params: dict[str, Any]
    epochs: int
    batch_size: int
    learning_rate: float
    max_seq_length: int
    seed: int
    gate_metric: str
    auto_activate: bool
    min_improvement: float
    dev_fraction: float
    dev_pairs: list[PairInput] | None = field(default=None)


class JobCancelled(Exception):
    """Raised between stages once a cancel was requested."""


def write_pairs(path: Path, pairs: list[ExportedPair]) -> None:
    """Write pairs as JSONL ({query, document, label} per line), the trainer's input format."""
    with path.open("w", encoding="utf-8") as handle:
        for pair in pairs:
            handle.write(
                json.dumps({"query": pair.query, "document": pair.document, "label": pair.label}) + "\n"
            )


def training_config(params: RetrainParams, job_dir: Path, dev: list[ExportedPair]) -> dict[str, Any]:
    """The `pairank train` YAML config of a job."""
    has_negatives = any(p.label <= 0 for p in dev)
    return {
        "name": f"retrain-{params.corpus}",
        "base_model": params.base_model,
        "max_seq_length": params.max_seq_length,
        "seed": params.seed,
        "data": {"train_pairs": str(job_dir / "train_pairs.jsonl")},
        "dev": {
            "kind": "pairs",
            "path": str(job_dir / "dev_pairs.jsonl"),
            "task": "rerank" if has_negatives else "retrieval",
            "metric": "MAP" if has_negatives else "MRR",
        },
        "stages": [
            {
                "name": "retrain",
                "loss": params.loss,
                "loss_params": params.loss_params,
                "epochs": params.epochs,
                "lr": params.learning_rate,
                "batch_size": params.batch_size,
                "shuffle": params.shuffling,
                "shuffle_params": params.shuffle_params,
            }
        ],
    }


class RetrainJob:
    """Runs in its own thread in the API process; the heavy training runs in a child process."""

    def __init__(self, runtime: Runtime, job_id: str, params: RetrainParams) -> None:
        self.runtime = runtime
        self.job_id = job_id
        self.params = params
        self.cancel_requested = threading.Event()
        self.process: TrainingProcess | None = None
        self.job_dir = runtime.settings.data_dir / "jobs" / job_id
        self.run_dir = runtime.settings.data_dir / "models" / job_id
        self._last_progress_write = 0.0

    def _update(self, **fields: Any) -> None:
        with transaction(self.runtime.sessions) as session:
            JobRepository(session).update(self.job_id, **fields)

    def _progress(self, stage: str, **fields: Any) -> None:
        self._update(progress={"stage": stage, **fields})

    def _check_cancel(self) -> None:
        if self.cancel_requested.is_set():
            raise JobCancelled

    def cancel(self) -> None:
        """Ask the job to stop: the training process is terminated, later stages are skipped."""
        self.cancel_requested.set()
        if self.process is not None:
            self.process.terminate()

    def run(self) -> None:
        """Run every stage, recording the outcome on the job row whatever happens."""
        self._update(status="running", started_at=utcnow(), run_dir=str(self.run_dir))
        try:
            outcome = self._run_stages()
            self._update(status="succeeded", finished_at=utcnow(), **outcome)
        except JobCancelled:
            self._update(status="cancelled", finished_at=utcnow(), error="cancelled by an operator")
        except Exception as error:  # noqa: BLE001 - every failure ends the job with its reason
            log.exception("job %s failed", self.job_id)
            self._update(status="failed", finished_at=utcnow(), error=f"{type(error).__name__}: {error}")
        finally:
            self._store_log_tail()

    def _store_log_tail(self) -> None:
        if self.process is not None and self.process.stderr_tail:
            self._update(log_tail="\n".join(self.process.stderr_tail))

    def _run_stages(self) -> dict[str, Any]:
        params = self.params
        self._progress("exporting")
        train, dev = PairService(self.runtime).export(
            params.corpus, params.dev_pairs, params.dev_fraction, params.seed
        )
        self.job_dir.mkdir(parents=True, exist_ok=True)
        write_pairs(self.job_dir / "train_pairs.jsonl", train)
        write_pairs(self.job_dir / "dev_pairs.jsonl", dev)
        config = training_config(params, self.job_dir, dev)
        (self.job_dir / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
        self._check_cancel()

        self._progress("training", train_pairs=len(train), dev_pairs=len(dev))
        self.process = TrainingProcess(self.job_dir / "config.yaml", self.run_dir, self.cancel_requested)
        code = self.process.run(self._on_training_event)
        self._check_cancel()
        if code != 0:
            reason = self.process.last_error_event or (
                self.process.stderr_tail[-1] if self.process.stderr_tail else ""
            )
            raise RuntimeError(f"training process {describe_exit(code)}: {reason}".rstrip(": "))

        self._progress("exporting_model")
        spec = resolve_model(str(self.run_dir))
        # The candidate is exported, quantized and quality-gated like any served model before it is scored.
        candidate = self.runtime.load_encoder(spec)
        try:
            return self._evaluate_and_activate(spec, candidate, config, dev)
        finally:
            if self.runtime.state().encoder is not candidate:
                candidate.close()

    def _evaluate_and_activate(
        self, spec: ModelSpec, candidate: Encoder, config: dict[str, Any], dev: list[ExportedPair]
    ) -> dict[str, Any]:
        params = self.params
        self._progress("evaluating", encoder=candidate.describe())
        active = self.runtime.state()
        gate = self._gate(candidate.encode_bulk, active.encoder.encode_bulk, dev)
        gate["active_model"] = active.model_version
        manifest = json.loads((self.run_dir / "manifest.json").read_text())
        register_model(
            self.runtime.sessions,
            spec,
            str(self.run_dir / "model"),
            "trained",
            base_model=params.base_model,
            job_id=self.job_id,
            training={
                "params": {k: v for k, v in asdict(params).items() if k != "dev_pairs"},
                "config": config,
            },
            dev_metrics={"training": manifest.get("dev_metrics"), "gate": gate},
            encoder=candidate.describe(),
        )
        self._check_cancel()
        activated = False
        if params.auto_activate and gate["improved"]:
            self._progress("indexing")
            state = self.runtime.build_state(spec, candidate)
            self._check_cancel()
            self._progress("swapping")
            self.runtime.swap(state)
            activated = True
        gate["activated"] = activated
        self._progress("done", activated=activated)
        return {"model_version": spec.version, "gate": gate}

    def _gate(self, candidate_encode: Any, active_encode: Any, dev: list[ExportedPair]) -> dict[str, Any]:
        with self.runtime.sessions() as session:
            corpus = CorpusRepository(session).get(self.params.corpus)
            if corpus is None:
                raise RuntimeError(f"corpus {self.params.corpus!r} was deleted during the job")
            documents = {d: t for batch in DocumentRepository(session, corpus).iter_texts() for d, t in batch}
        dataset = build_gate_dataset(documents, dev)
        metric = self.params.gate_metric
        new = gate_metrics(candidate_encode, dataset, metric)
        old = gate_metrics(active_encode, dataset, metric)
        delta = new[metric] - old[metric]
        return {
            "metric": metric,
            "mode": dataset.mode,
            "candidate": new,
            "active": old,
            "delta": delta,
            "improved": delta > self.params.min_improvement,
        }

    def _on_training_event(self, event: dict[str, Any]) -> None:
        # Step events arrive often; the database gets at most two progress writes a second.
        now = time.monotonic()
        if event.get("event") == "step" and now - self._last_progress_write < 0.5:
            return
        self._last_progress_write = now
        keys = ("event", "stage", "epoch", "step", "total_steps", "progress", "loss", "dev_metric", "metric")
        fields = {k: event[k] for k in keys if k in event and k != "stage"}
        tail = "\n".join(self.process.stderr_tail) if self.process is not None else None
        self._update(progress={"stage": "training", **fields}, log_tail=tail)
