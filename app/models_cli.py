"""`pairank models register FOLDER`: register a model folder in the database's model registry.

A bi-encoder registered here can then be activated (`POST /admin/models/{version}/activate`); a
cross-encoder re-ranker (`pairank train --reranker`) can be set on a corpus's ranking
(`PUT /v1/corpora/{name}/ranking`). Its files are stored with it (PAIRANK_ARTIFACT_STORE), so every
process on any machine loads them; run it where the folder is, with the service's settings.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass

from sqlalchemy.orm import Session, sessionmaker

from app.config import Settings, get_settings
from app.core.errors import ServiceError
from app.serving.state import Serving


@dataclass(frozen=True)
class _Context:
    """What the registry's use case needs of a process (nothing is loaded or served)."""

    settings: Settings
    sessions: sessionmaker[Session]
    serving: Serving


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="pairank models", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    register = commands.add_parser(
        "register", help="register a model or training run folder (bi-encoder or cross-encoder)"
    )
    register.add_argument("folder")
    return parser


def main(argv: list[str]) -> int:
    """Run one registry command against the configured database (migrated first); prints JSON."""
    args = _parser().parse_args(argv)
    from app.db.engine import make_session_factory
    from app.db.migrate import migrated_engine
    from app.usecases.model_admin import ModelAdminService

    settings = get_settings()
    engine = migrated_engine(settings.resolved_database_url, settings.data_dir)
    try:
        sessions = make_session_factory(engine)
        service = ModelAdminService(_Context(settings, sessions, Serving(settings, sessions)))
        registered = service.register(args.folder)
        print(
            json.dumps(
                {"version": registered.version, "kind": registered.kind, "created": registered.created}
            )
        )
    except ServiceError as error:
        print(f"pairank models: {error}", file=sys.stderr)
        return 1
    finally:
        engine.dispose()
    return 0
