"""`pairank serve` and `pairank migrate`: apply migrations, then serve with uvicorn."""

from __future__ import annotations

import argparse
import logging
import os

from app.config import get_settings


def _configure_logging() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("alembic.runtime.plugins").setLevel(logging.WARNING)


def migrate(argv: list[str]) -> int:
    """Apply pending migrations, then mark work a stopped process left unfinished as failed."""
    argparse.ArgumentParser(
        prog="pairank migrate", description="Apply pending database migrations."
    ).parse_args(argv)
    _configure_logging()
    from app.db.engine import make_engine, make_session_factory
    from app.db.migrate import upgrade_to_head
    from app.services.recovery import recover_interrupted_work

    settings = get_settings()
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    upgrade_to_head(settings.resolved_database_url)
    engine = make_engine(settings.resolved_database_url)
    try:
        recover_interrupted_work(make_session_factory(engine))
    finally:
        engine.dispose()
    return 0


def serve(argv: list[str]) -> int:
    """Apply pending migrations and serve the API."""
    parser = argparse.ArgumentParser(prog="pairank serve", description="Apply migrations and serve the API.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--workers", type=int, default=1, help="uvicorn worker processes")
    parser.add_argument("--demo", action="store_true", help="create the demo corpus if it does not exist")
    args = parser.parse_args(argv)
    if args.demo:
        os.environ["PAIRANK_SEED_DEMO"] = "true"
        get_settings.cache_clear()
    migrate([])
    import uvicorn

    uvicorn.run("app.main:app", host=args.host, port=args.port, workers=args.workers, log_level="info")
    return 0
