"""Run `pairank train` as a child process: progress from its JSON-lines stdout, a tail of its stderr."""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pairank import train_events

_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    # If the service is killed (even with -9), the kernel kills the training process too, so a
    # restarted service never finds a stray trainer writing into a run folder it has marked failed.
    with contextlib.suppress(OSError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


class TrainingProcess:
    """One `pairank train --config CONFIG --output RUN_DIR [ARGS]` child process."""

    def __init__(
        self,
        config_path: Path,
        run_dir: Path,
        cancelled: threading.Event | None = None,
        log_lines: int = 40,
        args: Sequence[str] = (),
    ) -> None:
        self.command = [
            sys.executable, "-m", "pairank.cli", "train",
            "--config", str(config_path), "--output", str(run_dir), "--no-progress-bar", *args,
        ]  # fmt: skip
        self.stderr_tail: deque[str] = deque(maxlen=log_lines)
        self.process: subprocess.Popen[str] | None = None
        self.last_error_event: str | None = None
        self.cancelled = cancelled or threading.Event()

    def run(self, on_event: Callable[[dict[str, Any]], None]) -> int:
        """Start, stream events to `on_event` until the process exits; returns its exit code."""
        env = {**os.environ, "PYTHONUNBUFFERED": "1", "TOKENIZERS_PARALLELISM": "false"}
        self.process = subprocess.Popen(
            self.command,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            start_new_session=True,  # its own process group, so a cancel reaches any grandchildren
            preexec_fn=_die_with_parent,  # noqa: PLW1509 - only sets a signal, safe after fork
        )
        # A cancel that arrived while the process was starting: the canceller may not have seen it yet.
        if self.cancelled.is_set():
            self.terminate()
        reader = threading.Thread(target=self._read_stderr, daemon=True)
        reader.start()
        assert self.process.stdout is not None
        for line in self.process.stdout:
            try:
                event = json.loads(line)
            except ValueError:
                continue  # not an event: stray library output
            if isinstance(event, dict):
                if event.get(train_events.EVENT) == train_events.ERROR:
                    self.last_error_event = str(event.get("message"))
                on_event(event)
        code = self.process.wait()
        reader.join(5)
        return code

    def _read_stderr(self) -> None:
        assert self.process is not None and self.process.stderr is not None
        for line in self.process.stderr:
            if line.strip():
                self.stderr_tail.append(line.rstrip()[:500])

    @property
    def pid(self) -> int | None:
        """The child's process id once started."""
        return self.process.pid if self.process is not None else None

    def terminate(self, grace_seconds: float = 5.0) -> None:
        """SIGTERM the process group, then SIGKILL it if it has not exited within the grace period."""
        if self.process is None or self.process.poll() is not None:
            return
        try:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(grace_seconds)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def describe_exit(code: int) -> str:
    """`exited with code 2` or `was killed by signal 9 (SIGKILL)`."""
    if code < 0:
        return f"was killed by signal {-code} ({signal.Signals(-code).name})"
    return f"exited with code {code}"
