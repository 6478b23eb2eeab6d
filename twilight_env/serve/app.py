"""The Starlette application of ``twilight serve`` (HTTP API in ``docs/SERVE.md``).

Every error is JSON ``{"error": message}``: 400 malformed request, 404 unknown game or
path, 409 not now, 413 body too large, 422 illegal move or a record the engine refuses,
503 the store is full, 500 an internal error (a broken agent). Game logic runs in
worker threads, one request per game at a time under the game's own lock, so several
games and tabs never share state.
"""

from __future__ import annotations

import json
import os
from typing import Any, Callable

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from .. import records
from ..engine import PHASE_NAMES
from .games import (DEFAULT_AGENT, Game, GameError, GameStore, Limits, action_text, credited, line_seats,
                    state_view)

STATIC_DIR = os.path.join(os.path.dirname(__file__), "static")
MAX_BODY = 4 * 1024 * 1024
"""Largest request body accepted (bytes); a record upload is the largest."""
MAX_ADVANCE = 1000
"""Most agent moves one ``advance`` request may ask for."""


async def _body(request: Request, required: bool = True) -> Any:
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY:
        raise GameError(413, f"the request body is {declared} bytes; at most {MAX_BODY} are accepted")
    raw = await request.body()
    if len(raw) > MAX_BODY:
        raise GameError(413, f"the request body is {len(raw)} bytes; at most {MAX_BODY} are accepted")
    if not raw.strip():
        if required:
            raise GameError(400, "the request needs a JSON body")
        return {}
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError) as e:
        raise GameError(400, f"the body is not valid JSON: {e}") from None


def replay_frames(record: Any) -> dict:
    """Every position of a record, as spectator views with the move that led to each.

    Args:
        record: a deal or match record (``docs/RECORDS.md``), checked and replayed by
            :func:`twilight_env.records.replay`.

    Returns:
        ``{"kind": "deal" | "match", "count": int, "frames": [...]}``: one spectator view
        per position (every hand open: a record holds the whole deal), each with
        ``text`` (the move that led there), ``deal`` (1-based), ``index``, ``who``
        (the recorded agent of each seat) and ``credited`` (at the end of a deal: the
        record's ``lines`` with their seats and ``deal_points``, R5, R7.5; else None).

    Raises:
        GameError: 422 when the record cannot be replayed (the step and the reason).
    """
    if not isinstance(record, dict):
        raise GameError(422, "cannot replay this: a record is a JSON object (docs/RECORDS.md)")
    try:
        states = records.replay(record)
    except ValueError as e:  # RecordError: the step, the field and the reason
        raise GameError(422, f"cannot replay this record: {e}") from None
    deal_recs = record["deals"] if record.get("format") == records.FORMAT_MATCH else [record]
    seat_agents = [d.get("agents") for d in deal_recs]
    frames = []
    deal = 1
    for i, st in enumerate(states):
        view = state_view(st)
        if i == 0:
            text = "start of deal 1"
        else:
            prev = states[i - 1]
            if prev.done:
                deal += 1
                text = f"start of deal {deal}"
            else:
                text = action_text(prev.acting_seat, prev.chooser, PHASE_NAMES[prev.phase], st.history[-1][2]
                                   if len(st.history) > len(prev.history) else _request_action(prev, st))
        agents = seat_agents[deal - 1] if deal - 1 < len(seat_agents) else None
        who = [a or "" for a in agents] if agents else ["", "", "", ""]
        if st.num_players == 3:  # seat 2 holds the solo's entry, or null in older records (R7.3)
            by = who[2] or who[0]
            who[2] = f"new moon ({by})" if by else "new moon"
        d = deal_recs[deal - 1]
        view.update({"text": text, "deal": deal, "index": i, "who": who,
                     "credited": credited(d["lines"], d["deal_points"], line_seats(d["lines"], st.seat_cult, d.get("solo")))
                     if st.done else None})
        frames.append(view)
    kind = "match" if record.get("format") == records.FORMAT_MATCH else "deal"
    return {"kind": kind, "frames": frames, "count": len(frames)}


def _request_action(prev, st) -> int:
    """The request action between two states (the holder of ``st`` seen from the chooser)."""
    return 27 + (st.holder - prev.chooser) % 4


def create_app(limits: Limits | None = None, clock: Callable[[], float] | None = None,
               store: GameStore | None = None) -> Starlette:
    """The web application.

    Args:
        limits: bounds on live games (:class:`~twilight_env.serve.games.Limits`).
        clock: seconds for the store (tests pass a fake clock).
        store: an existing store (else a new one with ``limits`` and ``clock``).

    Returns:
        A Starlette app; ``app.state.store`` is its :class:`GameStore`.
    """
    if store is None:
        store = GameStore(limits, clock) if clock is not None else GameStore(limits)

    def locked(game: Game, fn):
        with game.lock:
            return fn()

    async def index(request: Request) -> Response:
        return FileResponse(os.path.join(STATIC_DIR, "index.html"))

    async def agents(request: Request) -> Response:
        from agents.base import available_agents
        return JSONResponse({"agents": available_agents(), "default": DEFAULT_AGENT})

    async def create(request: Request) -> Response:
        body = await _body(request, required=False)
        game = await run_in_threadpool(store.create, body)
        view = await run_in_threadpool(locked, game, game.view)
        return JSONResponse(view, status_code=201)

    async def show(request: Request) -> Response:
        game = store.get(request.path_params["gid"])
        return JSONResponse(await run_in_threadpool(locked, game, game.view))

    async def delete(request: Request) -> Response:
        store.delete(request.path_params["gid"])
        return JSONResponse({"deleted": request.path_params["gid"]})

    async def move(request: Request) -> Response:
        game = store.get(request.path_params["gid"])
        body = await _body(request)

        def run():
            game.move(body)
            if isinstance(body, dict) and body.get("advance"):
                game.advance(MAX_ADVANCE)
            return game.view()
        return JSONResponse(await run_in_threadpool(locked, game, run))

    async def advance(request: Request) -> Response:
        game = store.get(request.path_params["gid"])
        body = await _body(request, required=False)
        if not isinstance(body, dict):
            raise GameError(400, "the body must be a JSON object {\"steps\": N}")
        steps = body.get("steps", 1)
        if isinstance(steps, bool) or not isinstance(steps, int) or not 1 <= steps <= MAX_ADVANCE:
            raise GameError(400, f"'steps' must be an int 1..{MAX_ADVANCE}, got {steps!r}")

        def run():
            made = game.advance(steps)
            view = game.view()
            view["made"] = made
            return view
        return JSONResponse(await run_in_threadpool(locked, game, run))

    async def hint(request: Request) -> Response:
        game = store.get(request.path_params["gid"])
        body = await _body(request, required=False)
        if not isinstance(body, dict):
            raise GameError(400, "the body must be a JSON object {\"agent\": SPEC}")
        spec = body.get("agent", DEFAULT_AGENT)
        return JSONResponse(await run_in_threadpool(locked, game, lambda: game.hint(spec)))

    async def record(request: Request) -> Response:
        game = store.get(request.path_params["gid"])
        rec = await run_in_threadpool(locked, game, game.record)
        name = f"twilight_{game.num_players}p_{game.episode}_{game.seed}.json"
        return JSONResponse(rec, headers={"Content-Disposition": f'attachment; filename="{name}"'})

    async def replay(request: Request) -> Response:
        body = await _body(request)
        return JSONResponse(await run_in_threadpool(replay_frames, body))

    async def game_error(request: Request, exc: GameError) -> Response:
        return JSONResponse({"error": exc.message}, status_code=exc.status)

    async def server_error(request: Request, exc: Exception) -> Response:
        return JSONResponse({"error": f"internal error ({type(exc).__name__}: {exc}); the game is as before "
                                      "the request if the error came before a move was applied"}, status_code=500)

    async def http_error(request: Request, exc: HTTPException) -> Response:
        msg = exc.detail if exc.status_code != 404 else f"no such path {request.url.path!r}"
        return JSONResponse({"error": msg}, status_code=exc.status_code)

    routes = [
        Route("/", index),
        Route("/api/agents", agents),
        Route("/api/games", create, methods=["POST"]),
        Route("/api/games/{gid}", show, methods=["GET"]),
        Route("/api/games/{gid}", delete, methods=["DELETE"]),
        Route("/api/games/{gid}/move", move, methods=["POST"]),
        Route("/api/games/{gid}/advance", advance, methods=["POST"]),
        Route("/api/games/{gid}/hint", hint, methods=["POST"]),
        Route("/api/games/{gid}/record", record, methods=["GET"]),
        Route("/api/replay", replay, methods=["POST"]),
        Mount("/static", StaticFiles(directory=STATIC_DIR), name="static"),
    ]
    app = Starlette(routes=routes, exception_handlers={GameError: game_error, HTTPException: http_error,
                                                       Exception: server_error})
    app.state.store = store
    return app
