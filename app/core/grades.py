"""Judgement scales and the one aggregate of several judges' grades (docs/concepts/pairs.md#aggregate)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from app.core.errors import InvalidInputError

# A corpus judges on one scale: `binary` (0 not relevant, 1 relevant) or `graded` (0 to 3, nDCG's gains).
SCALES: dict[str, tuple[int, ...]] = {"binary": (0, 1), "graded": (0, 1, 2, 3)}
DEFAULT_SCALE = "binary"


@dataclass(frozen=True)
class Aggregate:
    """What a pair's judgements add up to: its grade (None: no judge gave one) and whether they differ."""

    grade: float | None
    disagreement: bool


def check_grade(scale: str, grade: float, field: str = "label") -> None:
    """InvalidInputError (422) naming the field and the scale when a grade is not one of the scale's."""
    allowed = SCALES[scale]
    if grade not in allowed:
        raise InvalidInputError(
            f"{field}: {grade:g} is not on corpus scale {scale!r} (one of {', '.join(map(str, allowed))})",
            field,
        )


def aggregate(grades: Sequence[float | None]) -> Aggregate:
    """The majority grade of the judges who gave one (unsure/skip gives none); a tie takes the lowest of
    the tied grades; `disagreement` whenever the given grades are not all the same."""
    given = [grade for grade in grades if grade is not None]
    if not given:
        return Aggregate(None, False)
    counts = Counter(given)
    most = max(counts.values())
    grade = min(value for value, count in counts.items() if count == most)
    return Aggregate(grade, len(counts) > 1)
