"""The `pairank` console script: one entry point whose subcommands live in their own packages.

Subcommands are imported lazily so that `pairank eval-run` never pays for torch, and so that the
service (`app`) and `training` stay independent packages that only meet here.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

# subcommand -> (module, function, help); each function takes its own argv and returns an exit code.
SUBCOMMANDS: dict[str, tuple[str, str, str]] = {
    "serve": ("app.cli", "serve", "apply pending migrations and serve the API"),
    "migrate": ("app.cli", "migrate", "apply pending database migrations and exit"),
    "worker": ("app.worker_cli", "main", "run queued jobs (retraining, activation, evaluations, imports)"),
    "keys": ("app.keys_cli", "main", "create, list or revoke API keys (in the database)"),
    "import": ("app.import_cli", "main", "bulk-import documents (JSON lines or a BEIR folder) into a corpus"),
    "train": ("training.cli", "train", "fine-tune a bi-encoder from a YAML config"),
    "evaluate": ("evaluation.cli", "evaluate", "evaluate a model on a BEIR-layout dataset"),
    "eval-run": ("evaluation.cli", "eval_run", "score a run against qrels like trec_eval"),
}


def _usage() -> str:
    lines = ["usage: pairank <command> [options]", "", "commands:"]
    lines += [f"  {name:<10} {help_text}" for name, (_, _, help_text) in SUBCOMMANDS.items()]
    lines += ["", "Run `pairank <command> --help` for a command's options."]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Dispatch `pairank <command> ...` to the command's module."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in {"-h", "--help", "help"}:
        print(_usage())
        return 0
    command, rest = args[0], args[1:]
    if command not in SUBCOMMANDS:
        print(f"pairank: unknown command {command!r}\n\n{_usage()}", file=sys.stderr)
        return 2
    module_name, function_name, _ = SUBCOMMANDS[command]
    handler = getattr(importlib.import_module(module_name), function_name)
    return int(handler(rest) or 0)


if __name__ == "__main__":
    raise SystemExit(main())
