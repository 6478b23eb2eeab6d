"""The ``twilight`` command line.

Each subcommand lives in its own module that defines ``add_arguments(parser)`` and
``run(args) -> int``; modules are imported only when their subcommand runs, so
``twilight --version`` and ``twilight deal`` need neither torch nor matplotlib.

Conventions shared by the subcommands:

- an argument error names its flag (argparse types below: ``argument --seed: must be a
  non-negative integer ...``) and prints the subcommand's usage; exit status 2;
- an output path that exists is refused unless ``--force``
  (:func:`twilight_env.experiments.common.check_new_folder`, :func:`~twilight_env.experiments.common.check_new_file`);
- a file that cannot be read (missing, a folder, truncated gzip, not JSON, nested too
  deeply, a malformed record or deal file) is one line ``twilight CMD: error: ...``
  naming the file and what is wrong, exit status 2, never a traceback
  (:mod:`twilight_env.util.jsonfile`);
- Ctrl-C, and SIGTERM (raised as :class:`Interrupted`), end a run with one line and
  exit status 130 or 143; ``arena`` and ``edge`` save their finished deals first and
  say how to ``--resume``.
"""

from __future__ import annotations

import argparse
import importlib
import math
import os
import signal
import sys
import threading
import warnings
import zlib

from twilight_env import __version__

# subcommand -> (module, one-line help)
# subcommand -> the extra whose packages it needs beyond the core install
EXTRAS: dict[str, str] = {"arena": "study", "edge": "study", "ladder": "study", "play": "study", "train": "train",
                         "serve": "serve"}

SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "deal": ("twilight_env.records.deal_log", "play one random deal and print it trick by trick"),
    "arena": ("twilight_env.experiments.arena", "duplicate-deal round robin between agent specs"),
    "edge": ("twilight_env.experiments.edge.command", "3-player study: does the solo or the Sun side have the edge?"),
    "ladder": ("twilight_env.experiments.ladder", "strength ladder: duplicate matches between consecutive rungs, with ratings"),
    "play": ("twilight_env.experiments.play", "play one seat in the terminal against agents"),
    "train": ("twilight_env.training.train", "train a neural agent by self-play"),
    "replay": ("twilight_env.records.replay_log", "check a game record with the engine and print it trick by trick"),
    "serve": ("twilight_env.serve.cli", "play, watch and replay games in a browser (local web app)"),
}


AGENT_PACKAGES = ("twilight_env.training", "twilight_env.interop")
"""Packages of the higher layers whose agents a command may name (``respond``, ``openspiel``):
importing one makes its agents' declarations known without importing their modules
(nor torch), :func:`twilight_env.agents.base.declare_source`."""


def register_agents() -> None:
    """Import :data:`AGENT_PACKAGES`, so every agent is known to the registry."""
    for package in AGENT_PACKAGES:
        importlib.import_module(package)


def _notice(command: str):
    """A ``warnings.showwarning`` that prints a warning as one line ``twilight CMD: note: ...``."""
    def show(message, category, filename, lineno, file=None, line=None):
        print(f"twilight {command}: note: {message}", file=sys.stderr)
    return show


from twilight_env.util.argtypes import (Interrupted, raise_interrupted, interrupt_status,  # noqa: F401
                                         non_negative_int, positive_float, positive_int, probability)


def build_parser() -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    from twilight_env.util.docs import doc_reference

    # the epilog is not re-wrapped: argparse would break the folder's path at a hyphen
    parser = argparse.ArgumentParser(prog="twilight", description="Twilight (Bambus, 2001) research environment",
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=f"Documentation: {os.path.dirname(doc_reference('RESULTS.md'))}\n"
                                            "(COMMANDS.md: every command; RESULTS.md: the measured figures; API.md)")
    parser.add_argument("--version", action="version", version=f"twilight-env {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers = {}
    for name, (_, help_) in SUBCOMMANDS.items():
        subparsers[name] = sub.add_parser(name, help=help_, description=help_)
    return parser, subparsers


def add_docs_epilog(parser: argparse.ArgumentParser) -> None:
    """End a subcommand's ``--help`` with the path of ``COMMANDS.md`` in this install
    (``twilight_env/docs`` in a wheel, :func:`twilight_env.util.docs.doc_reference`), after
    any epilog of its own, on one line: argparse would break the path at a hyphen
    (``site-packages``), so a plain help formatter becomes ``RawDescriptionHelpFormatter``
    (the descriptions are one line)."""
    from twilight_env.util.docs import doc_reference

    line = f"Every command, option and agent spec: {doc_reference('COMMANDS.md')}"
    parser.epilog = f"{parser.epilog}\n\n{line}" if parser.epilog else line
    if parser.formatter_class is argparse.HelpFormatter:
        parser.formatter_class = argparse.RawDescriptionHelpFormatter


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
            parser.error(_missing(command, e) if _is_missing_dependency(e) else _broken(command, e))
        module.add_arguments(subparsers[command])
        add_docs_epilog(subparsers[command])
    args, extra = parser.parse_known_args(argv)
    if extra:
        # the subcommand's usage, not the top level's, for a flag it does not know
        (subparsers[args.command] if args.command else parser).error(f"unrecognized arguments: {' '.join(extra)}")
    if args.command is None:
        parser.print_help()
        return 0
    absent = _absent_packages(args.command)
    if absent:  # before the command makes any output folder or plays a deal
        print(f"twilight {args.command}: error: {absent}", file=sys.stderr)
        return 2
    # SIGTERM as an interruption (work saved as on Ctrl-C); handlers live in the main thread only
    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, raise_interrupted) if main_thread else None
    try:
        register_agents()
        with warnings.catch_warnings():  # a deprecated agent name (e.g. exit) is said in one line
            warnings.filterwarnings("default", category=DeprecationWarning, module="twilight_env")
            warnings.showwarning = _notice(args.command)
            return int(module.run(args) or 0)
    except KeyboardInterrupt as e:  # a subcommand that saves its work says so itself
        how = f"stopped by {e}" if isinstance(e, Interrupted) else "interrupted"
        print(f"twilight {args.command}: {how}", file=sys.stderr)
        return interrupt_status(e)
    except ModuleNotFoundError as e:  # an optional dependency imported on first use
        print(f"twilight {args.command}: error: {_missing(args.command, e)}", file=sys.stderr)
        return 2
    except ImportError as e:  # a missing dependency already named with its extra (twilight_env.util.extras)
        print(f"twilight {args.command}: error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader went away (`twilight replay FILE | head`): stop quietly
        try:
            sys.stdout = open(os.devnull, "w")  # nothing more reaches the closed pipe at exit
        except OSError:
            pass
        return 0
    except (ValueError, OSError) as e:
        print(f"twilight {args.command}: error: {e}", file=sys.stderr)
        return 2
    except (EOFError, RecursionError, zlib.error) as e:  # damaged input a reader did not name: still one line
        print(f"twilight {args.command}: error: damaged input ({type(e).__name__}: {e})", file=sys.stderr)
        return 2
    finally:
        if main_thread:  # None: a handler not set from Python; the default is the nearest
            signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)


def _is_missing_dependency(error: ImportError) -> bool:
    """True when ``error`` is a third-party module that is not installed (an extra to
    install); False for a name missing inside this package (a broken or half-updated
    install, which no extra mends)."""
    name = getattr(error, "name", None) or ""
    return isinstance(error, ModuleNotFoundError) and bool(name) and name.partition(".")[0] != "twilight_env"


def _broken(command: str, error: ImportError) -> str:
    """The one-line message when ``command``'s own code does not import: what failed and the fix."""
    return (f"'{command}' could not load this package's own code ({type(error).__name__}: {error}); "
            "the installation is broken or out of date: reinstall it (from a checkout: pip install -e .)")


def _missing(command: str, error: ImportError | str) -> str:
    """The one-line message of a missing optional dependency: the extra that installs the
    missing module when it is a known one (torch: ``train``), else the command's extra."""
    from twilight_env.util.extras import EXTRA_OF, install_hint

    name = (getattr(error, "name", None) or "").partition(".")[0]
    extra = EXTRA_OF.get(name) or EXTRAS.get(command, "study")
    return (f"'{command}' needs an optional dependency that is missing ({error}); install the '{extra}' extra: "
            f"{install_hint(extra)}")


def _absent_packages(command: str) -> str | None:
    """The message for the first optional package ``command`` needs that is missing
    (:data:`twilight_env.util.extras.COMMAND_NEEDS`), or None when all are there."""
    from twilight_env.util.extras import COMMAND_NEEDS, missing

    absent = missing(COMMAND_NEEDS.get(command, ()))
    if not absent:
        return None
    return _missing(command, f"No module named {absent[0]!r}" + (f"; also missing: {', '.join(absent[1:])}"
                                                                 if absent[1:] else ""))


if __name__ == "__main__":
    sys.exit(main())
