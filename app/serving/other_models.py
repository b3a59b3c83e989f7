"""Encoders of registered model versions other than the serving one, for side-by-side comparisons.

A comparison with a candidate model (`POST .../compare`) needs that model's encoder without serving it:
it is loaded on first use (exported and quality-gated like any served model, so the retraining job's
export is reused) and kept, at most `keep` of them; the least recently used is closed a while after it
is dropped, since a request may still be encoding with it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar

from app.core.errors import ConflictError
from pairank.models import ModelSpec

_CLOSE_AFTER_SECONDS = 30.0


class _Closable(Protocol):
    def close(self) -> None: ...


Model = TypeVar("Model", bound=_Closable)


class OtherModels(Generic[Model]):
    """Loaded encoders of non-serving versions by version, least recently used first (also the
    re-rankers, app/serving/reranker.py: any model that closes)."""

    def __init__(self, load: Callable[[ModelSpec], Model], keep: int = 1) -> None:
        self._load = load
        self._keep = keep
        self._loaded: OrderedDict[str, Model] = OrderedDict()
        self._lock = threading.Lock()

    def encoder(self, version: str, resolve: Callable[[], ModelSpec]) -> Model:
        """The encoder of a registered version, loaded once: `resolve` (the registry's verified local
        copy, fetched if need be) runs only then, under the lock, so two requests never load it twice."""
        with self._lock:
            found = self._loaded.get(version)
            if found is not None:
                self._loaded.move_to_end(version)
                return found
            spec = resolve()
            if spec.version != version:  # a folder or hub name whose weights changed since it registered
                raise ConflictError(f"the weights of {version} are now {spec.version}", "model")
            encoder = self._load(spec)
            self._loaded[spec.version] = encoder
            while len(self._loaded) > self._keep:
                _, dropped = self._loaded.popitem(last=False)
                closer = threading.Timer(_CLOSE_AFTER_SECONDS, dropped.close)
                closer.daemon = True
                closer.start()
            return encoder

    def loaded(self) -> list[str]:
        """The versions loaded now, least recently used first."""
        with self._lock:
            return list(self._loaded)

    def close(self) -> None:
        """Close every loaded encoder (process shutdown)."""
        with self._lock:
            for encoder in self._loaded.values():
                encoder.close()
            self._loaded.clear()
