"""``twilight serve``: run the web app on a local address (needs the ``serve`` extra).

The server listens on loopback (``127.0.0.1``) unless ``--host`` says otherwise. An address
beyond loopback (``0.0.0.0``, a LAN address, a host name) is refused unless
``--allow-remote`` is given; then every request must carry a token (generated and printed
with the address, or given with ``--token``) and a warning is printed
(``docs/SERVE.md``, What the server guards against).
"""

from __future__ import annotations

import argparse
import sys

import starlette  # noqa: F401  (a missing `serve` extra is reported before arguments are parsed)
import uvicorn  # noqa: F401

from twilight_env.serve.conn import uvicorn_options
from twilight_env.serve.games import Limits
from twilight_env.serve.guard import LOOPBACK_NAMES, check_token_value, is_loopback, is_wildcard, new_token, trusted_hosts


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--host", default="127.0.0.1",
                   help="address to bind (default 127.0.0.1: this machine only); any other address needs "
                        "--allow-remote")
    p.add_argument("--port", type=int, default=8000, help="TCP port (default 8000)")
    p.add_argument("--allow-remote", action="store_true",
                   help="allow a --host beyond loopback (0.0.0.0, a LAN address); every request then needs "
                        "the token printed at start")
    p.add_argument("--token", default=None,
                   help="the token for --allow-remote (default: a fresh random one, printed); at least 16 "
                        "ASCII letters, digits, '-' or '_'")
    p.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                   help="a further name the Host header may carry (e.g. this machine's LAN name); repeatable")
    p.add_argument("--max-games", type=int, default=Limits.max_games,
                   help=f"live games at most (default {Limits.max_games})")
    p.add_argument("--idle-minutes", type=float, default=Limits.idle_seconds / 60,
                   help=f"drop a game untouched this long (default {Limits.idle_seconds / 60:g})")
    p.add_argument("--finished-minutes", type=float, default=Limits.finished_seconds / 60,
                   help=f"drop a finished game this long after its end (default {Limits.finished_seconds / 60:g})")


M_MMAP_THRESHOLD = -3
"""glibc's ``mallopt`` parameter: allocations of at least this many bytes get their own mapping."""


def return_large_buffers(threshold: int = 128 * 1024) -> bool:
    """Make the C allocator give large buffers (request bodies, their parsed text) back to
    the system when freed (glibc only; elsewhere nothing changes).

    glibc serves a large allocation with its own memory mapping, freed at once, but after
    the first such free it raises that threshold (up to 32 MiB), so later 4 MiB bodies come
    from heaps that keep their pages: the server then grew by about 90 MiB in
    ``benchmarks/serve_load.py --hostile``. A fixed threshold keeps the mapping.

    Returns:
        True if the threshold was set.
    """
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
        return bool(libc is not None and hasattr(libc, "mallopt") and libc.mallopt(M_MMAP_THRESHOLD, threshold))
    except OSError:
        return False


def run(args) -> int:
    from twilight_env.serve.app import create_app

    if not 0 <= args.port <= 65535:
        raise ValueError(f"--port must be 0..65535, got {args.port}")
    limits = Limits(max_games=args.max_games, idle_seconds=args.idle_minutes * 60,
                    finished_seconds=args.finished_minutes * 60)
    remote = not is_loopback(args.host)
    token = None
    if remote:
        if not args.allow_remote:
            raise ValueError(f"--host {args.host} listens beyond this machine: anyone who can reach it could play "
                             "on this server. Give --allow-remote to do so anyway (every request then needs a "
                             "token), or use --host 127.0.0.1")
        token = check_token_value(args.token) if args.token is not None else new_token()
    elif args.token is not None or args.allow_remote:
        raise ValueError("--token and --allow-remote are for a --host beyond loopback; on loopback no token is used")
    app = create_app(limits, host=args.host, allow_hosts=tuple(args.allow_host), token=token)
    shown = "127.0.0.1" if is_wildcard(args.host) else args.host
    shown = f"[{shown}]" if ":" in shown else shown
    if remote:
        print(f"WARNING: twilight serve listens on {args.host}:{args.port}, beyond this machine. Anyone who can "
              "reach this address and knows the token can create games and use this machine's CPU. The token is "
              "in the address below; keep it private.", file=sys.stderr, flush=True)
        print(f"twilight serve: open http://{shown}:{args.port}/?token={token} in a browser (Ctrl-C stops)",
              flush=True)
        if is_wildcard(args.host):
            remote = sorted(trusted_hosts(args.host, args.allow_host) - set(LOOPBACK_NAMES))
            print(f"from another machine: http://NAME:{args.port}/?token=... with NAME one of "
                  f"{', '.join(remote)}" if remote else
                  "from another machine: this machine's names were not found; add the name others use with "
                  "--allow-host NAME", flush=True)
    else:
        print(f"twilight serve: open http://{shown}:{args.port}/ in a browser (Ctrl-C stops)", flush=True)
    return_large_buffers()
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning", **uvicorn_options())
    return 0
