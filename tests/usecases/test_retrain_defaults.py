"""The retrain job's defaults follow what the corpus's judged pairs hold (app/core/defaults.py): labelled
negatives take the combo setting measured on CQA-A, positives only take BSC with mined hard negatives;
whatever a request names wins. On every database."""

from __future__ import annotations

from typing import Any

from app.control.retraining.job import RetrainParams
from app.core.defaults import LABELLED_NEGATIVES, POSITIVES_ONLY
from app.db.repositories.jobs import JobRepository
from app.usecases.corpora import CorpusService
from app.usecases.pairs import PairInput, PairService
from app.usecases.retraining import RetrainCommand, RetrainService
from tests.helpers.runtime import RuntimeFactory, serve


def submitted(make_runtime: RuntimeFactory, negatives: bool, choices: dict[str, Any]) -> RetrainParams:
    """Submit a retraining of a corpus of 12 judged queries (with or without labelled negatives); the
    parameters its job will run with."""
    runtime = make_runtime()
    serve(runtime)
    CorpusService(runtime).create_corpus("answers", "answer", None)
    pairs = [PairInput(f"how do I fix thing {i}?", None, f"restart thing {i}.", 1.0) for i in range(12)]
    if negatives:
        pairs += [
            PairInput(f"how do I fix thing {i}?", None, f"buy a new thing {i}.", 0.0) for i in range(12)
        ]
    PairService(runtime).add_pairs("answers", pairs)
    job = RetrainService(runtime).submit(RetrainCommand("answers", {"auto_activate": False, **choices}))
    with runtime.sessions() as session:
        stored = JobRepository(session).get(job.id)
        assert stored is not None
        return RetrainParams(**stored.params["_resolved"])


def test_labelled_negatives_train_with_the_combo_setting(make_runtime: RuntimeFactory) -> None:
    params = submitted(make_runtime, negatives=True, choices={})
    row = LABELLED_NEGATIVES.settings
    assert (params.loss, params.loss_params, params.shuffling) == (row["loss"], row["loss_params"], "none")
    assert (params.epochs, params.learning_rate, params.bias_correction) == (5, 2e-5, True)
    assert params.hard_negatives is None and params.defaults == LABELLED_NEGATIVES.data


def test_positives_only_train_bsc_with_mined_hard_negatives(make_runtime: RuntimeFactory) -> None:
    params = submitted(make_runtime, negatives=False, choices={})
    assert (params.loss, params.shuffling, params.epochs) == ("bsc", "example", 3)
    assert params.hard_negatives is not None and params.hard_negatives["remine"] == "once"
    assert params.hard_negatives["count"] == 1 and params.defaults == POSITIVES_ONLY.data


def test_a_request_overrides_any_default(make_runtime: RuntimeFactory) -> None:
    params = submitted(
        make_runtime, negatives=True, choices={"epochs": 2, "loss": "bsc", "shuffling": "random"}
    )
    assert (params.epochs, params.loss, params.shuffling) == (2, "bsc", "random")
    assert params.learning_rate == 2e-5  # the row's, where the request named nothing
    # A loss the request names takes its own parameters (BSC's), never the row's combo parameters.
    assert params.loss_params == POSITIVES_ONLY.settings["loss_params"] and params.shuffle_params == {}
