"""The run folder a training run writes, and the JSON-lines progress events it prints.

Layout (see training/README.md): config.yaml, metrics.json, events.jsonl, training_curves.png,
model/ (sentence-transformers format) and manifest.json. The manifest is written last and atomically,
after the model folder has been renamed into place, so a manifest never points at a partial model.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

import yaml

from pairank.train_events import EVENT

MANIFEST = "manifest.json"
MODEL_DIR = "model"


def utc_timestamp() -> str:
    """A compact UTC timestamp for folder names and model ids: 20250101T120000Z."""
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")


def default_run_dir(config_name: str, timestamp: str) -> Path:
    """`./data/runs/<timestamp>-<config name>`, for a caller that names no folder (the service does)."""
    return Path("data") / "runs" / f"{timestamp}-{config_name}"


def _umask() -> int:
    """The process umask (read by setting and restoring it)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write_text(path: Path, text: str) -> None:
    """Write a file via a temporary sibling and rename, so readers never see half of it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        # mkstemp creates 0600 files; the service may read the run folder as another user.
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _jsonable(value: Any) -> Any:
    """numpy scalars and Paths to plain JSON values."""
    if hasattr(value, "item") and callable(value.item):
        return value.item()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def dump_json(data: Any) -> str:
    """Indented JSON with numpy values converted."""
    return json.dumps(data, indent=2, default=_jsonable, ensure_ascii=False) + "\n"


class EventWriter:
    """Machine-readable progress: one JSON object per line on stdout (and in events.jsonl)."""

    def __init__(self, stream: IO[str] | None = None, log_path: Path | None = None, enabled: bool = True):
        self.stream = stream if stream is not None else sys.stdout
        self.log_path = log_path
        self.enabled = enabled

    def emit(self, event: str, **fields: Any) -> None:
        """Print `{"event": ..., **fields}` and flush, so a parent process sees it at once."""
        if not self.enabled:
            return
        line = json.dumps({EVENT: event, **fields}, default=_jsonable, ensure_ascii=False)
        self.stream.write(line + "\n")
        self.stream.flush()
        if self.log_path is not None:
            with self.log_path.open("a", encoding="utf-8") as handle:
                handle.write(line + "\n")


class RunFolder:
    """Paths and writers of one run folder."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    @property
    def model_dir(self) -> Path:
        """Where the best model lives (sentence-transformers format)."""
        return self.root / MODEL_DIR

    @property
    def manifest_path(self) -> Path:
        """manifest.json: written last, its presence marks a complete run."""
        return self.root / MANIFEST

    def prepare(self) -> None:
        """Create the folder; refuse to overwrite a finished run."""
        if self.manifest_path.exists():
            raise FileExistsError(
                f"{self.root} already holds a finished run ({MANIFEST}); use another --output"
            )
        self.root.mkdir(parents=True, exist_ok=True)
        # A rerun into an interrupted folder starts its event log afresh.
        (self.root / "events.jsonl").unlink(missing_ok=True)

    def write_config(self, config: Any) -> None:
        """The resolved config (a TrainConfig or a dict; after overrides, with absolute data paths)."""
        is_instance = dataclasses.is_dataclass(config) and not isinstance(config, type)
        raw = dataclasses.asdict(config) if is_instance else config
        atomic_write_text(self.root / "config.yaml", yaml.safe_dump(raw, sort_keys=False, allow_unicode=True))

    def write_metrics(self, metrics: dict[str, Any]) -> None:
        """Per-epoch metrics; rewritten after every epoch so a running job can be inspected."""
        atomic_write_text(self.root / "metrics.json", dump_json(metrics))

    def save_model(self, save: Any) -> Path:
        """Save via `save(path)` into a temporary folder, then swap it in as model/."""
        tmp = Path(tempfile.mkdtemp(dir=self.root, prefix=".model."))
        try:
            os.chmod(tmp, 0o777 & ~_umask())  # mkdtemp makes 0700 folders
            save(str(tmp))
            old = self.root / f".model.old.{os.getpid()}"
            if self.model_dir.exists():
                os.replace(self.model_dir, old)
            os.replace(tmp, self.model_dir)
            shutil.rmtree(old, ignore_errors=True)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return self.model_dir

    def write_manifest(self, manifest: dict[str, Any]) -> None:
        """Write manifest.json atomically: the last file of a successful run."""
        atomic_write_text(self.manifest_path, dump_json(manifest))
