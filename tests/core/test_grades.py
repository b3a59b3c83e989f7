"""The one aggregate of several judges' grades, and the scales."""

from __future__ import annotations

import pytest

from app.core.errors import InvalidInputError
from app.core.grades import aggregate, check_grade


@pytest.mark.parametrize(
    ("grades", "expected", "disagreement"),
    [
        ([], None, False),
        ([None, None], None, False),  # unsure only: no label
        ([1], 1, False),
        ([1, 1, None], 1, False),  # unsure gives no vote
        ([1, 0], 0, True),  # a tie takes the lower grade
        ([1, 1, 0], 1, True),  # the majority
        ([3, 2, 2, 3, 1], 2, True),  # a tie between 2 and 3: the lower
        ([0, 3, 3], 3, True),
    ],
)
def test_majority_a_tie_the_lower_grade(
    grades: list[float | None], expected: float | None, disagreement: bool
) -> None:
    total = aggregate(grades)
    assert (total.grade, total.disagreement) == (expected, disagreement)


def test_a_grade_off_the_scale_names_the_field_and_the_scale() -> None:
    check_grade("graded", 3)
    with pytest.raises(InvalidInputError) as refused:
        check_grade("binary", 2)
    assert (
        refused.value.field == "label"
        and "binary" in refused.value.message
        and "0, 1" in refused.value.message
    )
