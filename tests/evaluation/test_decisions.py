"""Match decisions: thresholds for target precisions, the models as JSON, the open-world protocol's rates,
twins and the forward calibration, on constructed data whose answers are known."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.decision_features import FEATURES, Candidate, candidate_features
from evaluation.decisions import DecisionModel, Thresholds, choose_thresholds, decide, fit_model
from evaluation.match_calibration import calibrate, forward_evaluation, one_world_each
from evaluation.open_world import JudgedQuery, Outcome, rates, training_rows
from evaluation.twins import normalized, twin_groups


def test_thresholds_meet_their_target_precision_on_the_data_they_were_chosen_on() -> None:
    rng = np.random.default_rng(0)
    probability = rng.random(400)
    right = rng.random(400) < probability  # a calibrated score: right as often as it says
    absent = ~right & (rng.random(400) < 0.7)
    weights = np.ones(400)
    chosen = choose_thresholds(probability, right, absent, weights, 0.9, 0.8)
    above = probability >= chosen.match
    assert right[above].mean() >= 0.9 and above.sum() > 20
    below = probability < chosen.new
    assert absent[below].mean() >= 0.8 and chosen.new <= chosen.match


def test_a_target_nothing_meets_is_never_decided() -> None:
    chosen = choose_thresholds(np.array([0.2, 0.9]), np.array([False, False]), np.array([False, False]),
                               np.ones(2), 0.95, 0.9)  # fmt: skip
    assert chosen.match > 1.0 and chosen.new == 0.0
    assert decide(1.0, chosen, True) == "review"


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1), st.booleans(), st.booleans()), min_size=2, max_size=80),
       st.floats(0.5, 0.99), st.floats(0.5, 0.99))  # fmt: skip
def test_a_stricter_target_never_lowers_the_match_threshold(rows, loose, strict) -> None:
    probability = np.array([p for p, _, _ in rows])
    right = np.array([r for _, r, _ in rows])
    absent = np.array([a and not r for _, r, a in rows])
    low, high = sorted((loose, strict))
    a = choose_thresholds(probability, right, absent, np.ones(len(rows)), low, 0.9)
    b = choose_thresholds(probability, right, absent, np.ones(len(rows)), high, 0.9)
    assert b.match >= a.match and a.new <= a.match and b.new <= b.match


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.floats(0, 1), st.booleans(), st.booleans(), st.integers(1, 20)),
                min_size=1, max_size=50), st.floats(0, 1), st.floats(0, 1))  # fmt: skip
def test_rates_are_shares(rows, match, new) -> None:
    found = [Outcome(a, p, r and not a, g, w) for a, p, r, g, w in rows]
    result = rates(found, Thresholds(max(match, new), min(match, new)), 0.5, 4)
    for value in (result.match_precision, result.new_precision):
        assert value is None or 0.0 <= value <= 1.0 + 1e-9
    assert 0.0 <= result.match_coverage <= 1.0 and 0.0 <= result.new_coverage <= 1.0
    assert sum(result.decided.values()) == pytest.approx(1.0)


def test_rates_by_hand() -> None:
    found = [
        Outcome(False, 0.9, True, True, 8),  # auto-match, right
        Outcome(False, 0.9, False, True, 8),  # auto-match, wrong
        Outcome(False, 0.9, True, True, 2),  # too short: review
        Outcome(True, 0.9, False, False, 8),  # absent, auto-matched: wrong
        Outcome(True, 0.1, False, False, 8),  # absent, new: right
        Outcome(False, 0.1, False, True, 8),  # present, new: wrong
    ]
    result = rates(found, Thresholds(0.5, 0.2), 0.5, 4)
    assert result.match_precision == pytest.approx(1 / 3)  # each world weighs 0.5: 0.5 / 1.5
    assert result.match_coverage == pytest.approx(1 / 4) and result.new_coverage == pytest.approx(1 / 2)
    assert result.new_precision == pytest.approx(0.5) and result.gold_shown == pytest.approx(3 / 4)


def test_a_model_is_the_same_after_json() -> None:
    rng = np.random.default_rng(1)
    features = rng.normal(size=(200, len(FEATURES)))
    labels = (features[:, 0] + 0.3 * rng.normal(size=200) > 0.5).astype(int)
    for kind in ("cosine", "logistic", "isotonic"):
        model = fit_model(kind, features, labels)
        again = DecisionModel.from_dict(model.to_dict())
        assert np.allclose(again.probabilities(features), model.probabilities(features))
        assert ((model.probabilities(features) >= 0) & (model.probabilities(features) <= 1)).all()
    with pytest.raises(ValueError, match="one kind of outcome"):
        fit_model("logistic", features, np.zeros(200, dtype=int))
    stored = fit_model("logistic", features, labels).to_dict()
    with pytest.raises(ValueError, match="other features"):
        DecisionModel.from_dict({**stored, "features": ["cosine"]})


def test_features_describe_a_list() -> None:
    listed = [Candidate("a", "sharks on the flooded highway", 1, 0.8, 4.0),
              Candidate("b", "moon landing hoax", 2, 0.5, 0.0)]  # fmt: skip
    rows = candidate_features("shark highway", listed)
    column = dict(zip(FEATURES, rows[0], strict=True))
    assert column["margin_to_next"] == pytest.approx(0.3) and column["leads_dense"] == 1.0
    assert column["bm25_share_of_best"] == 1.0 and column["inverse_rank"] == 1.0
    assert dict(zip(FEATURES, rows[1], strict=True))["gap_to_best"] == pytest.approx(0.3)
    assert candidate_features("x", []).shape == (0, len(FEATURES))


def test_twins_are_the_same_text_or_nearly_the_same_words_and_vector() -> None:
    ids = ["a", "b", "c", "d", "e"]
    texts = [
        "Bananas from Costa Rica carry flesh-eating bacteria.",
        "\u201cBananas from Costa Rica carry flesh eating bacteria\u201d",  # other quotes and hyphen
        "Bananas from Costa Rica carry flesh-eating bacteria, officials say.",
        "Costa Rican fruit is infected with a deadly microbe.",  # a paraphrase: not a twin
        "Sharks swim on a flooded highway.",
    ]
    assert normalized(texts[0]) == normalized(texts[1])
    neighbours = [(0, 2, 0.97), (0, 3, 0.96), (4, 0, 0.99)]
    assert twin_groups(ids, texts, neighbours) == [["a", "b", "c"]]


def world(query: str, gold: str, right_cosine: float, rng: random.Random) -> JudgedQuery:
    """A query whose right claim (when present) leads with a clear margin; absent, a weaker list."""
    others = [Candidate(f"o{rng.randrange(10**6)}", "other claim text here", r, 0.55 - 0.03 * r, 0.0)
              for r in range(1, 10)]  # fmt: skip
    present = [Candidate(gold, "the claim itself with its words", 1, right_cosine, 3.0),
               *[Candidate(c.doc_id, c.text, c.rank + 1, c.cosine, c.lexical) for c in others]]  # fmt: skip
    return JudgedQuery(query, frozenset({gold}), present, others)


def test_calibration_learns_what_separates_the_two_worlds() -> None:
    rng = random.Random(0)
    queries = [
        world(f"is the claim number {i} true", f"g{i}", 0.75 + 0.2 * rng.random(), rng) for i in range(90)
    ]
    result = calibrate(queries, 0.5, 0.95, 0.9, 4)
    assert result.kind in {"cosine", "logistic", "isotonic"}
    assert result.report["match_coverage"] > 0.9 and result.report["new_coverage"] > 0.9
    features, labels, weights = training_rows(queries, 0.5)
    assert len(features) == len(labels) == len(weights) == 90 * 19 and labels.sum() == 90
    report = forward_evaluation(queries, 3, 0.5, 0.95, 0.9, 4, seeds=(0, 1))
    assert report["models"]["chosen"]["match_precision"]["mean"] >= 0.95
    assert len(report["cuts"]) == 3


def test_one_world_each_keeps_one_outcome_per_query() -> None:
    found = [Outcome(absent, 0.5, not absent, True, 5) for _ in range(50) for absent in (False, True)]
    kept = one_world_each(found, 0.5, seed=1)
    assert len(kept) == 50 and 10 < sum(o.absent for o in kept) < 40
    assert one_world_each(found, 0.5, seed=1) == kept
