"""The probe sentences shipped with the package: the quality gate's test set and int8 calibration data.

522 texts: claims, questions, answers and captions; fragments and paragraphs longer than a model's
limit; punctuation, URLs, numbers, mixed case and 15 scripts besides Latin
(`scripts/make_probe_sentences.py` rebuilds the file).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

PROBE_FILE = Path(__file__).with_name("probe_sentences.txt")


@lru_cache(maxsize=1)
def probe_sentences() -> tuple[str, ...]:
    """Every probe sentence, in file order (leading and trailing spaces are part of some probes)."""
    lines = PROBE_FILE.read_text(encoding="utf-8").split("\n")
    return tuple(line for line in lines if line.strip())
