"""The `pairank` console script: one entry point whose subcommands each package registers itself.

Subcommands are the `pairank.commands` entry points of the installed distribution (pyproject.toml), so
this shared leaf names neither the service (`app`) nor `training`; a subcommand's module is imported
only when it runs, so `pairank eval-run` never pays for torch.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from importlib.metadata import EntryPoint, entry_points

GROUP = "pairank.commands"
# One line of help per command; a registered command without one is listed without help.
HELP = {
    "serve": "apply pending migrations and serve the API",
    "migrate": "apply pending database migrations and exit",
    "worker": "run queued jobs (retraining, activation, evaluations, imports)",
    "keys": "create, list or revoke API keys (in the database)",
    "models": "register a model folder (a bi-encoder, or a cross-encoder re-ranker) in the registry",
    "import": "bulk-import documents (JSON lines or a BEIR folder) into a corpus",
    "train": "fine-tune a bi-encoder from a YAML config (or train a cross-encoder re-ranker)",
    "evaluate": "evaluate a model on a BEIR-layout dataset",
    "eval-run": "score a run against qrels like trec_eval",
}


def commands() -> dict[str, EntryPoint]:
    """The registered subcommands by name, in HELP's order and then alphabetically."""
    found = {ep.name: ep for ep in entry_points(group=GROUP)}
    ordered = [name for name in HELP if name in found] + sorted(set(found) - set(HELP))
    return {name: found[name] for name in ordered}


def _usage(available: dict[str, EntryPoint]) -> str:
    lines = ["usage: pairank <command> [options]", "", "commands:"]
    lines += [f"  {name:<10} {HELP.get(name, '')}".rstrip() for name in available]
    if not available:
        lines.append("  (none registered: install the project, e.g. `pip install -e .`)")
    lines += ["", "Run `pairank <command> --help` for a command's options."]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Dispatch `pairank <command> ...` to the function its package registered."""
    args = list(sys.argv[1:] if argv is None else argv)
    available = commands()
    if not args or args[0] in {"-h", "--help", "help"}:
        print(_usage(available))
        return 0
    command, rest = args[0], args[1:]
    if command not in available:
        print(f"pairank: unknown command {command!r}\n\n{_usage(available)}", file=sys.stderr)
        return 2
    try:
        return int(available[command].load()(rest) or 0)
    except BrokenPipeError:  # `pairank keys list | head -1`: the reader left; not an error of ours
        sys.stderr.close()  # nothing more can be said, and Python's exit flush must not complain
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
