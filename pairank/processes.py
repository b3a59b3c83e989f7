"""Whether a process is still running, as seen from another process."""

from __future__ import annotations

import os


def pid_alive(pid: int) -> bool:
    """True while `pid` runs; a zombie (exited, not reaped yet) counts as dead."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: it exists
    # A child that exited but was not reaped yet is alive to kill(0), dead to us.
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(") ", 1)[1][:1] != "Z"
    except (OSError, IndexError):
        return True  # no /proc (not Linux), or it vanished meanwhile: kill(0) said it ran
