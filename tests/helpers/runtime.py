"""Runtimes without a server, for the tests of the serving, store and control planes."""

from __future__ import annotations

from collections.abc import Callable

from app.serving.runtime import Runtime

RuntimeFactory = Callable[..., Runtime]


def serve(runtime: Runtime) -> None:
    """What the loader thread does, in the test's thread: serve the registry's active model."""
    spec = runtime.serving.registry.active_at_start(runtime.settings.model)
    runtime.serving.start(runtime.serving.build_state(spec))
