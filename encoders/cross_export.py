"""A cross-encoder's int8 (or fp32) export, through the encoder's own quality-gated path.

`CrossEncoderLoader` is the encoder loader (encoders/loader.py: the same variants tried in the same
order, the same cache folders keyed by the weights' sha256, the same lock and fallback to torch fp32
with the reason logged); only the graph and the gate differ. The graph is the model's logits; the gate
scores probe pairs (each of 24 probe sentences against 20 others, 480 pairs, long and multilingual
ones included) with the variant and with torch fp32, and passes when the variant orders each group as
fp32 does (`ScoreCheck`): a re-ranker's output is an order, not a vector, so the embeddings' cosine
gate does not apply, and a plain rank correlation would fail a variant for swapping pairs fp32 itself
can hardly tell apart (an untrained head scores a group within a few hundredths of a logit).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from encoders.backend import EncoderBackend, write_tokenizer_settings
from encoders.cross_backend import (
    CROSS_EXPORTED_BACKENDS,
    CROSS_FILE,
    CrossTorchBackend,
    Pair,
    pair_inputs,
)
from encoders.export import export_onnx_graph, export_openvino_graph
from encoders.loader import EncoderLoader, Variant
from encoders.probe import probe_sentences

if TYPE_CHECKING:
    import torch

log = logging.getLogger(__name__)

GROUPS, GROUP_SIZE = 24, 20
MIN_MEAN_SPEARMAN = 0.95
MIN_MEAN_NDCG = 0.99
MIN_NDCG = 0.95
NDCG_DEPTH = 10


def probe_groups() -> list[list[Pair]]:
    """Re-ranking-shaped probes: probe sentence i against the next GROUP_SIZE ones, for GROUPS queries
    spread over the file (so claims, questions, long paragraphs and other scripts all appear)."""
    sentences = probe_sentences()
    step = len(sentences) // GROUPS
    return [
        [(sentences[q], sentences[(q + 1 + j) % len(sentences)]) for j in range(GROUP_SIZE)]
        for q in range(0, step * GROUPS, step)
    ]


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Rank correlation of two score lists (a constant list correlates 1.0 with a constant one)."""
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return 1.0 if np.ptp(a) == np.ptp(b) else 0.0
    return float(np.corrcoef(np.argsort(np.argsort(a)), np.argsort(np.argsort(b)))[0, 1])


def ndcg(reference: np.ndarray, candidate: np.ndarray, depth: int = NDCG_DEPTH) -> float:
    """nDCG@depth of the candidate's order, the reference's scores (min-max scaled) as gains: swapping
    two near-equal pairs costs almost nothing, putting a poor pair on top costs a lot."""
    spread = float(np.ptp(reference))
    if spread == 0:
        return 1.0
    gains = (reference - reference.min()) / spread
    discount = 1.0 / np.log2(np.arange(2, depth + 2))
    ideal = np.sort(gains)[::-1][:depth] @ discount[: min(depth, len(gains))]
    got = gains[np.argsort(-candidate, kind="stable")][:depth] @ discount[: min(depth, len(gains))]
    return float(got / ideal)


@dataclass(frozen=True)
class ScoreCheck:
    """How closely a variant's scores order the probe groups as torch fp32's do."""

    mean_spearman: float
    mean_ndcg: float
    min_ndcg: float
    top1_agreement: float  # groups whose best pair is the same (for the record: near-ties may swap)
    max_abs_error: float  # in logits, for the record
    groups: int

    @property
    def passed(self) -> bool:
        """True when the variant may serve: rank correlation per group >= 0.95 on average, and its top 10
        worth >= 0.99 of fp32's on average (nDCG with fp32's scores as gains), >= 0.95 in every group."""
        return (
            self.mean_spearman >= MIN_MEAN_SPEARMAN
            and self.mean_ndcg >= MIN_MEAN_NDCG
            and self.min_ndcg >= MIN_NDCG
        )

    def describe(self) -> str:
        """One line for logs and manifests."""
        verdict = "passed" if self.passed else "failed"
        return (
            f"order vs torch fp32 on {self.groups} probe groups of {GROUP_SIZE} pairs: Spearman mean "
            f"{self.mean_spearman:.4f} (>= {MIN_MEAN_SPEARMAN}), nDCG@{NDCG_DEPTH} mean {self.mean_ndcg:.4f} "
            f"(>= {MIN_MEAN_NDCG}), min {self.min_ndcg:.4f} (>= {MIN_NDCG}); same best pair "
            f"{self.top1_agreement:.2f}, max logit error {self.max_abs_error:.4f}: {verdict}"
        )

    def as_dict(self) -> dict[str, Any]:
        """The export manifest's `quality` record."""
        return {
            "mean_spearman": round(self.mean_spearman, 6),
            f"mean_ndcg@{NDCG_DEPTH}": round(self.mean_ndcg, 6),
            f"min_ndcg@{NDCG_DEPTH}": round(self.min_ndcg, 6),
            "top1_agreement": round(self.top1_agreement, 4),
            "max_abs_logit_error": round(self.max_abs_error, 6),
            "probe_groups": self.groups,
            "summary": self.describe(),
        }


def compare_scores(reference: Sequence[np.ndarray], candidate: Sequence[np.ndarray]) -> ScoreCheck:
    """Per-group agreement of two variants' logits."""
    pairs = list(zip(reference, candidate, strict=True))
    ndcgs = [ndcg(a, b) for a, b in pairs]
    return ScoreCheck(
        mean_spearman=float(np.mean([spearman(a, b) for a, b in pairs])),
        mean_ndcg=float(np.mean(ndcgs)),
        min_ndcg=float(min(ndcgs)),
        top1_agreement=float(np.mean([np.argmax(a) == np.argmax(b) for a, b in pairs])),
        max_abs_error=max(float(np.max(np.abs(a - b))) for a, b in pairs),
        groups=len(pairs),
    )


def score_groups(backend: Any, groups: Sequence[Sequence[Pair]]) -> list[np.ndarray]:
    """Each group's logits, one forward pass per group (a re-ranking request's shape)."""
    return [np.asarray(backend.forward(backend.tokenize(group)))[:, 0] for group in groups]


def logits_module(network: Any, names: Sequence[str]) -> torch.nn.Module:
    """A torch module taking positional token tensors and returning the classifier's logits."""
    import torch

    class Logits(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.network = network

        def forward(self, *tensors: torch.Tensor) -> torch.Tensor:
            return self.network(**dict(zip(names, tensors, strict=True))).logits

    return Logits().eval()


def write_cross_export(reference: CrossTorchBackend, backend: str, precision: str, folder: Path) -> None:
    """Export the reference cross-encoder's logits into `folder` with its tokenizer (no gate here)."""
    import torch

    folder.mkdir(parents=True, exist_ok=True)
    settings = reference.settings
    names = settings.input_names
    tokens = reference.tokenize([pair for group in probe_groups() for pair in group])
    shortest, longest = min(tokens, key=len), max(tokens, key=len)
    example = pair_inputs([shortest, longest], settings.pad_token_id, names)
    module = logits_module(reference.network, names)
    tensors = tuple(torch.from_numpy(example[n]) for n in names)
    if backend == "onnx":
        export_onnx_graph(module, names, tensors, "logits", folder, precision)
    else:
        # Calibrate on every other probe pair; the gate then scores all of them.
        calibration = [pair_inputs([ids], settings.pad_token_id, names) for ids in tokens[::2]]
        export_openvino_graph(module, names, tensors, folder, precision, calibration)
    reference.backend_tokenizer.save(str(folder / "tokenizer.json"))
    write_tokenizer_settings(folder, settings)
    (folder / CROSS_FILE).write_text(json.dumps({"activation": reference.activation}) + "\n")


class CrossEncoderLoader(EncoderLoader):
    """Loads one cross-encoder version: the encoder loader's variants, cache and fallback, with a
    logits graph and the score-order gate."""

    _reference_scores: list[np.ndarray] | None = None

    def reference(self) -> Any:
        """The torch fp32 cross-encoder (loaded on first need: a cached export never loads torch)."""
        if self._reference is None:
            self._reference = CrossTorchBackend(self.spec.path, self.device, "fp32", self.max_seq_length)
        return self._reference

    def _torch(self, variant: Variant) -> EncoderBackend:
        if variant.precision == "fp32":
            return self.reference()
        return CrossTorchBackend(self.spec.path, self.device, variant.precision, self.max_seq_length)

    def _open_exported(self, variant: Variant, folder: Path) -> EncoderBackend:
        return CROSS_EXPORTED_BACKENDS[variant.backend](folder, variant.precision, self.threads)

    def _write_and_check(self, variant: Variant, folder: Path) -> ScoreCheck:
        reference = self.reference()
        groups = probe_groups()
        if self._reference_scores is None:
            self._reference_scores = score_groups(reference, groups)
        write_cross_export(reference, variant.backend, variant.precision, folder)
        candidate = CROSS_EXPORTED_BACKENDS[variant.backend](folder, variant.precision, self.threads)
        return compare_scores(self._reference_scores, score_groups(candidate, groups))
