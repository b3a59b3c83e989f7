"""`pairank serve` and `pairank migrate`: apply migrations, then serve with uvicorn."""

from __future__ import annotations

import argparse
import logging
import os
import shutil
from pathlib import Path

from sqlalchemy.orm import Session, sessionmaker

from app.config import Settings, get_settings
from app.observability.logs import configure_logging
from pairank.processes import pid_alive

log = logging.getLogger("pairank")


def migrate(argv: list[str]) -> int:
    """Apply pending migrations, then mark work a stopped process left unfinished as failed."""
    argparse.ArgumentParser(
        prog="pairank migrate", description="Apply pending database migrations."
    ).parse_args(argv)
    configure_logging(get_settings().log_format)
    from app.control.recovery import recover_interrupted_work
    from app.db.engine import make_session_factory
    from app.db.migrate import migrated_engine

    settings = get_settings()
    engine = migrated_engine(settings.resolved_database_url, settings.data_dir)
    try:
        sessions = make_session_factory(engine)
        recover_interrupted_work(sessions)
        _bootstrap_admin_key(settings, sessions)
    finally:
        engine.dispose()
    return 0


def _bootstrap_admin_key(settings: Settings, sessions: sessionmaker[Session]) -> None:
    from app.usecases.api_keys import ApiKeyService

    # Runs here, once, before uvicorn forks its workers: no two processes race to create the key.
    if settings.bootstrap_admin_key and ApiKeyService(sessions).bootstrap_admin(settings.bootstrap_admin_key):
        log.info("stored PAIRANK_BOOTSTRAP_ADMIN_KEY as the first admin key")
    if settings.auth == "disabled":
        log.warning(
            "PAIRANK_AUTH=disabled: anyone who reaches this port may read and write every corpus "
            "(admin routes still need an admin key); never expose it like this"
        )


def _metrics_parent(data_dir: Path) -> Path:
    # In memory (/dev/shm) where the host has it, not in the data dir: prometheus-client maps these
    # files and grows them as labels appear, and a page of a mapped file that a full disk cannot back
    # kills the process with SIGBUS. A full data disk must cost checkpoints, never the server.
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK):
        return shm / "pairank-metrics"
    return data_dir / "run" / "prometheus"


def _prepare_metrics_dir(parent: Path) -> None:
    # prometheus-client's multiprocess mode: every worker writes its metrics under this folder, and a
    # scrape sums them. It must be set before any worker imports prometheus-client and start empty, or a
    # previous run's counts would be added to this one's. One folder per server (several may share a
    # data dir); folders of servers that are gone are removed.
    if "PROMETHEUS_MULTIPROC_DIR" in os.environ:
        folder = Path(os.environ["PROMETHEUS_MULTIPROC_DIR"])
        shutil.rmtree(folder, ignore_errors=True)
    else:
        for stale in parent.glob("*"):
            if stale.name.isdigit() and not pid_alive(int(stale.name)):
                shutil.rmtree(stale, ignore_errors=True)
        folder = parent / str(os.getpid())
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(folder)
    folder.mkdir(parents=True, exist_ok=True)


def serve(argv: list[str]) -> int:
    """Apply pending migrations and serve the API."""
    parser = argparse.ArgumentParser(prog="pairank serve", description="Apply migrations and serve the API.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--workers", type=int, default=1, help="uvicorn worker processes")
    parser.add_argument(
        "--demo",
        action="store_true",
        help="create the demo corpus if it does not exist, and serve without keys (PAIRANK_AUTH=disabled)",
    )
    args = parser.parse_args(argv)
    _prepare_metrics_dir(_metrics_parent(get_settings().data_dir))
    if args.demo:
        # The demo is for a laptop: no keys to make first. The warning is logged by `migrate`.
        os.environ["PAIRANK_SEED_DEMO"] = "true"
        os.environ["PAIRANK_AUTH"] = "disabled"
        get_settings.cache_clear()
    migrate([])
    import uvicorn

    uvicorn.run("app.main:app", host=args.host, port=args.port, workers=args.workers, log_level="info")
    return 0
