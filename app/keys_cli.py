"""`pairank keys create|list|revoke|generate`: manage API keys in the database (no service needed).

The same operations are served at `/admin/keys` for an admin key; this command is how the first admin
key of a deployment is made when none was bootstrapped (`docker compose run --rm api pairank keys ...`).
"""

from __future__ import annotations

import argparse
import json
import sys

from app.config import get_settings
from app.core.errors import ServiceError
from app.db.admin_models import SCOPES, ApiKey
from app.usecases.api_keys import ApiKeyService, new_key_text


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="pairank keys", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    create = commands.add_parser("create", help="create a key and print it (shown once)")
    create.add_argument("--scope", required=True, choices=SCOPES)
    create.add_argument(
        "--corpus", action="append", dest="corpora", metavar="NAME", help="limit the key to a corpus (repeat)"
    )
    create.add_argument("--name", help="a label to recognise the key by")
    commands.add_parser("list", help="list keys (never their secrets)")
    revoke = commands.add_parser("revoke", help="revoke a key by id: refused from the next request on")
    revoke.add_argument("id")
    commands.add_parser(
        "generate", help="print a new random key without storing it (for PAIRANK_BOOTSTRAP_ADMIN_KEY)"
    )
    return parser


def _row(key: ApiKey) -> str:
    corpora = ",".join(key.corpora) if key.corpora else "*"
    state = f"revoked {key.revoked_at:%Y-%m-%d %H:%M}" if key.revoked_at else "active"
    return f"{key.id}  {key.scope:<5}  corpora={corpora}  {state}  {key.name or ''}".rstrip()


def main(argv: list[str]) -> int:
    """Run one key command against the configured database (migrated first)."""
    args = _parser().parse_args(argv)
    if args.command == "generate":
        print(new_key_text())
        return 0
    from app.db.engine import make_session_factory
    from app.db.migrate import migrated_engine

    settings = get_settings()
    engine = migrated_engine(settings.resolved_database_url, settings.data_dir)
    service = ApiKeyService(make_session_factory(engine))
    try:
        if args.command == "create":
            info, key = service.create(args.scope, args.corpora, args.name)
            print(json.dumps({"id": info.id, "scope": info.scope, "corpora": info.corpora, "key": key}))
            print("Store the key now: it is not shown again.", file=sys.stderr)
        elif args.command == "list":
            for key_info in service.list():
                print(_row(key_info))
        else:
            print(_row(service.revoke(args.id)))
    except ServiceError as error:
        print(f"pairank keys: {error}", file=sys.stderr)
        return 1
    finally:
        engine.dispose()
    return 0
