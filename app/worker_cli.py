"""`pairank worker`: run queued jobs (retraining, activation, evaluations, imports) outside the API.

Deployments that run it set `PAIRANK_EMBEDDED_WORKER=false` on the API. It waits until the database is
migrated (the API's start-up migrates), loads the active model and the indexes like a serving process
(the gate, evaluations and activations need them), then claims jobs until SIGTERM or SIGINT; a job
running then is cancelled and recorded as stopped with its worker.
"""

from __future__ import annotations

import argparse
import logging
import signal
import threading
import time

from app.config import get_settings

log = logging.getLogger("pairank.worker")


def main(argv: list[str]) -> int:
    """Run one worker until signalled; exit code 1 when the database never became ready."""
    parser = argparse.ArgumentParser(prog="pairank worker", description=__doc__.split("\n\n")[0])
    parser.add_argument("--kinds", help="comma-separated job kinds to run (default: all)")
    parser.add_argument(
        "--wait", type=float, default=120.0, help="seconds to wait for a migrated database (default 120)"
    )
    args = parser.parse_args(argv)
    settings = get_settings().model_copy(update={"embedded_worker": False})
    from app.db.migrate import is_at_head
    from app.process import configure_process, job_worker
    from app.serving.runtime import Runtime

    configure_process(settings)

    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    runtime = Runtime(settings)
    try:
        deadline = time.monotonic() + args.wait
        while not is_at_head(runtime.engine):
            if time.monotonic() > deadline or stop.wait(1.0):
                log.error("the database is not reachable or not migrated to the newest revision")
                return 1
        runtime.start_loading()
        while not runtime.serving.wait_ready(1.0):
            if runtime.serving.load_error is not None or stop.is_set():
                log.error("loading the model failed: %s", runtime.serving.load_error)
                return 1
        kinds = tuple(k.strip() for k in args.kinds.split(",")) if args.kinds else None
        job_worker(runtime, kinds).run_forever(stop)
    finally:
        runtime.close()
    return 0
