"""Runtimes without a server, for the tests of the serving, store and control planes."""

from __future__ import annotations

from collections.abc import Callable

from app.serving.runtime import Runtime

RuntimeFactory = Callable[..., Runtime]


def serve(runtime: Runtime) -> None:
    """What the loader thread does, in the test's thread: serve the registry's active model."""
    spec = runtime.serving.registry.active_at_start(runtime.settings.model)
    runtime.serving.start(runtime.serving.build_state(spec))


def upsert_claims(runtime: Runtime, documents: dict[str, str]) -> None:
    """Upsert (id, text) documents into the corpus `claims`."""
    from app.usecases.corpora import CorpusService

    CorpusService(runtime).upsert_documents("claims", [(d, t, None, False) for d, t in documents.items()])


def serving_claims(make_runtime: RuntimeFactory, documents: dict[str, str]) -> Runtime:
    """A new serving runtime with a claim corpus `claims` holding the (id, text) documents."""
    from app.usecases.corpora import CorpusService

    runtime = make_runtime()
    serve(runtime)
    CorpusService(runtime).create_corpus("claims", "claim", None)
    upsert_claims(runtime, documents)
    return runtime
