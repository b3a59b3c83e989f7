"""The tiny test model is the same in every process, so rank-order assertions hold on any machine."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUILD = (
    "import sys; from pathlib import Path; from tests.helpers.tiny_model import build_tiny_model; "
    "build_tiny_model(Path(sys.argv[1]), texts=['sharks on flooded roads', 'a moon landing'], seed=3)"
)


def _digests(folder: Path) -> dict[str, str]:
    """sha256 of the files that decide what the model computes."""
    return {
        name: hashlib.sha256((folder / name).read_bytes()).hexdigest()
        for name in ("tokenizer.json", "config.json", "model.safetensors")
    }


def test_two_processes_build_the_same_tiny_model(tmp_path: Path) -> None:
    # Separate processes on purpose: the tokenizer trainer this replaced tied-broke in hash order,
    # seeded afresh per process, so two builds in one process agreed while two test workers did not.
    folders = [tmp_path / "first", tmp_path / "second"]
    for folder in folders:
        subprocess.run([sys.executable, "-c", BUILD, str(folder)], cwd=ROOT, check=True, capture_output=True)
    assert _digests(folders[0]) == _digests(folders[1])


def test_every_word_of_the_corpus_is_one_token(tmp_path: Path) -> None:
    from transformers import AutoTokenizer

    from tests.helpers.tiny_model import build_tiny_model

    folder = build_tiny_model(tmp_path / "tiny", texts=["zebra crossings"])
    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    assert tokenizer.tokenize("The zebra crossings") == ["the", "zebra", "crossings"]
    assert "[UNK]" not in tokenizer.tokenize("sharkmoon")  # an unseen word falls back to pieces
