"""The runtime's parts without HTTP: the serving state and its swaps, and the database follower."""

from __future__ import annotations

import gc

import pytest

from app.core.errors import NotReadyError
from app.db.repositories.model_versions import ModelRepository
from app.serving.runtime import Runtime
from app.usecases.corpora import CorpusService
from app.usecases.ranking import RankingService
from pairank.models import resolve_model
from tests.helpers.runtime import RuntimeFactory, serve
from tests.helpers.tiny_model import build_tiny_model

CLAIMS = [("c1", "5G towers spread the coronavirus"), ("c2", "Drinking bleach cures covid")]


def ranked_ids(runtime: Runtime, corpus: str, query: str) -> list[str]:
    """The ids a corpus search returns, best first."""
    return [item.id for item in RankingService(runtime).rank_corpus(corpus, query, 10, None).results]


def add_claims(runtime: Runtime, claims: list[tuple[str, str]]) -> None:
    """Upsert claims into the `claims` corpus."""
    CorpusService(runtime).upsert_documents("claims", [(d, t, None, False) for d, t in claims])


def test_the_serving_state_is_not_ready_until_started(make_runtime: RuntimeFactory) -> None:
    runtime = make_runtime()
    assert runtime.serving.current() is None and not runtime.serving.is_ready()
    with pytest.raises(NotReadyError):
        runtime.serving.state()
    serve(runtime)
    assert runtime.serving.is_ready() and runtime.serving.version() == runtime.serving.state().model_version


def test_loading_moves_the_heap_it_leaves_out_of_the_collectors_sight(make_runtime: RuntimeFactory) -> None:
    # A full collection walked the modules and the model's runtime at every pass (a 200 ms pause).
    runtime = make_runtime()
    runtime.start_loading()
    assert runtime.serving.wait_ready(120), runtime.serving.load_error
    assert gc.get_freeze_count() > 0


def test_a_swap_catches_up_with_writes_made_while_the_new_state_was_built(
    make_runtime: RuntimeFactory,
) -> None:
    runtime = make_runtime()
    serve(runtime)
    CorpusService(runtime).create_corpus("claims", "claim", None)
    add_claims(runtime, CLAIMS[:1])
    new_state = runtime.serving.build_state(resolve_model(runtime.settings.model))  # sees c1 only
    add_claims(runtime, CLAIMS[1:])  # written to the serving state and the database meanwhile
    runtime.serving.swap(new_state, activate=False)
    assert runtime.serving.state() is new_state
    assert sorted(ranked_ids(runtime, "claims", CLAIMS[1][1])) == ["c1", "c2"]


def test_the_follower_applies_writes_and_activations_without_writing_the_registry(
    make_runtime: RuntimeFactory, tmp_path_factory: pytest.TempPathFactory
) -> None:
    leader, follower = make_runtime(), make_runtime()
    serve(leader)
    serve(follower)
    CorpusService(leader).create_corpus("claims", "claim", None)
    add_claims(leader, CLAIMS)

    follower.follower.follow_once()
    assert sorted(ranked_ids(follower, "claims", CLAIMS[0][1])) == ["c1", "c2"]

    other = build_tiny_model(tmp_path_factory.mktemp("other"), seed=11)
    spec = resolve_model(str(other))
    leader.serving.registry.register(spec, str(other), "configured")
    leader.serving.swap(leader.serving.build_state(spec))
    with leader.sessions() as session:
        active = ModelRepository(session).active()
        assert active is not None and active.version == spec.version
        activated_at = active.activated_at

    follower.follower.follow_once()
    assert follower.serving.state().model_version == spec.version
    assert sorted(ranked_ids(follower, "claims", CLAIMS[1][1])) == ["c1", "c2"]  # its indexes came along
    with follower.sessions() as session:
        after = ModelRepository(session).active()
        assert after is not None and after.activated_at == activated_at


def test_a_registry_read_taken_before_this_processs_own_activation_does_not_switch_back(
    make_runtime: RuntimeFactory, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The follower read the registry (the old model), then this process's worker activated a new one:
    that stale read must not swap the old model back in (it did: /ready named the old model right after
    the activation job succeeded, until the next tick swapped again)."""
    runtime = make_runtime()
    serve(runtime)
    before = runtime.serving.state().model_version
    read_at = runtime.serving.swaps()  # the follower's read of the registry: `before` is active
    other = build_tiny_model(tmp_path_factory.mktemp("other"), seed=12)
    spec = resolve_model(str(other))
    runtime.serving.registry.register(spec, str(other), "configured")
    assert runtime.serving.swap(runtime.serving.build_state(spec))  # the worker's activation, meanwhile

    assert not runtime.follower.follow_registry(before, read_at)
    assert runtime.serving.state().model_version == spec.version
    stale = runtime.serving.build_state(resolve_model(runtime.settings.model))
    assert not runtime.serving.swap(stale, activate=False, unless_swapped_since=read_at)  # built, refused
    stale.encoder.close()
    assert runtime.serving.state().model_version == spec.version
    runtime.follower.follow_once()  # a fresh read: the registry says the new model, nothing to do
    assert runtime.serving.state().model_version == spec.version
    with runtime.sessions() as session:
        active = ModelRepository(session).active()
        assert active is not None and active.version == spec.version
