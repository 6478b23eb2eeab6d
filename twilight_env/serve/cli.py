"""``twilight serve``: run the web app on a local address (needs the ``serve`` extra)."""

from __future__ import annotations

import argparse

import starlette  # noqa: F401  (a missing `serve` extra is reported before arguments are parsed)
import uvicorn  # noqa: F401

from .games import Limits


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--host", default="127.0.0.1",
                   help="address to bind (default 127.0.0.1: this machine only; 0.0.0.0 opens it to the network)")
    p.add_argument("--port", type=int, default=8000, help="TCP port (default 8000)")
    p.add_argument("--max-games", type=int, default=Limits.max_games,
                   help=f"live games at most (default {Limits.max_games})")
    p.add_argument("--idle-minutes", type=float, default=Limits.idle_seconds / 60,
                   help=f"drop a game untouched this long (default {Limits.idle_seconds / 60:g})")
    p.add_argument("--finished-minutes", type=float, default=Limits.finished_seconds / 60,
                   help=f"drop a finished game this long after its end (default {Limits.finished_seconds / 60:g})")


def run(args) -> int:
    from .app import create_app

    if not 0 <= args.port <= 65535:
        raise ValueError(f"--port must be 0..65535, got {args.port}")
    limits = Limits(max_games=args.max_games, idle_seconds=args.idle_minutes * 60,
                    finished_seconds=args.finished_minutes * 60)
    app = create_app(limits)
    print(f"twilight serve: open http://{args.host}:{args.port}/ in a browser (Ctrl-C stops)", flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0
