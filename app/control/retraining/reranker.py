"""The cross-encoder a retraining job trains beside its bi-encoder (the request's `reranker`): `pairank
train --reranker` in a child process on the job's training pairs, with hard negatives mined from the
corpus's documents, then loaded exactly as the service serves re-rankers (exported, quality-gated) so
the gate scores what `rank` would run."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from app.config import Settings
from app.search.ranking_setting import RerankSetting
from app.serving.reranker import Reranker, load_reranker
from pairank.models import ModelSpec, resolve_model

# RetrainRerankerIn's fields -> RerankerConfig's (training/reranker.py), passed as `--set reranker.X=`.
_TRAINING_FIELDS = {"epochs": "epochs", "learning_rate": "lr", "negatives": "negatives"}


def reranker_args(plan: Mapping[str, Any], base_path: str, documents: Path, seed: int) -> list[str]:
    """The `pairank train` arguments that train the plan's cross-encoder from `base_path`, mining
    negatives from `documents` (a corpus export, a `text` per JSON line)."""
    args = ["--reranker", "--negatives-from", str(documents), "--set", f"base_model={base_path}"]
    for field, name in _TRAINING_FIELDS.items():
        if plan.get(field) is not None:
            args += ["--set", f"reranker.{name}={plan[field]}"]
    return [*args, "--set", f"reranker.seed={seed}"]


@dataclass
class TrainedReranker:
    """The job's cross-encoder: its spec, the stage it would serve as, and the loaded model."""

    spec: ModelSpec
    stage: RerankSetting
    reranker: Reranker

    def score(self, query: str, documents: Sequence[str]) -> np.ndarray:
        """The cross-encoder's score of each (query, document), as the service scores them."""
        return self.reranker.score(query, documents)

    def close(self) -> None:
        """Stop the loaded model's worker."""
        self.reranker.close()


def load_trained(settings: Settings, run_dir: Path, plan: Mapping[str, Any]) -> TrainedReranker:
    """The cross-encoder trained into `run_dir`, loaded with the service's backend and precision."""
    spec = resolve_model(str(run_dir / "model"))
    stage = RerankSetting(spec.version, int(plan["k"]), float(plan["weight"]))
    return TrainedReranker(spec, stage, load_reranker(settings, spec))
