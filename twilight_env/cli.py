"""The ``twilight`` command line.

Each subcommand lives in its own module that defines ``add_arguments(parser)`` and
``run(args) -> int``; modules are imported only when their subcommand runs, so
``twilight --version`` and ``twilight deal`` need neither torch nor matplotlib.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from . import __version__

# subcommand -> (module, one-line help)
# subcommand -> the extra whose packages it needs beyond the core install
EXTRAS: dict[str, str] = {"arena": "study", "edge": "study", "play": "study", "train": "train",
                         "serve": "serve"}

SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "deal": ("twilight_env.deal_log", "play one random deal and print it trick by trick"),
    "arena": ("experiments.arena", "duplicate-deal round robin between agent specs"),
    "edge": ("experiments.solo_edge", "3-player study: does the solo or the Sun side have the edge?"),
    "play": ("experiments.play", "play one seat in the terminal against agents"),
    "train": ("training.train", "train a neural agent by self-play"),
    "replay": ("twilight_env.replay_log", "check a game record with the engine and print it trick by trick"),
    "serve": ("twilight_env.serve.cli", "play, watch and replay games in a browser (local web app)"),
}


def build_parser() -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    parser = argparse.ArgumentParser(prog="twilight", description="Twilight (Bambus, 2001) research environment")
    parser.add_argument("--version", action="version", version=f"twilight-env {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers = {}
    for name, (_, help_) in SUBCOMMANDS.items():
        subparsers[name] = sub.add_parser(name, help=help_, description=help_)
    return parser, subparsers


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser, subparsers = build_parser()
    # fill in the chosen subcommand's arguments only (lazy imports)
    command = next((a for a in argv if not a.startswith("-")), None)
    module = None
    if command in SUBCOMMANDS:
        try:
            module = importlib.import_module(SUBCOMMANDS[command][0])
        except ImportError as e:
            parser.error(_missing(command, e))
        module.add_arguments(subparsers[command])
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    try:
        return int(module.run(args) or 0)
    except ModuleNotFoundError as e:  # an optional dependency imported on first use
        print(f"twilight {args.command}: error: {_missing(args.command, e)}", file=sys.stderr)
        return 2
    except (ValueError, OSError) as e:
        print(f"twilight {args.command}: error: {e}", file=sys.stderr)
        return 2


def _missing(command: str, error: ImportError) -> str:
    extra = EXTRAS.get(command, "study")
    hint = f'pip install -e ".[{extra}]"' if extra != "train" else 'pip install torch==2.13.0 && pip install -e ".[train]"'
    return (f"'{command}' needs an optional dependency that is missing ({error}); "
            f"install the '{extra}' extra, from the repository root: {hint}")


if __name__ == "__main__":
    sys.exit(main())
