"""The Starlette application of ``twilight serve`` (HTTP API in ``docs/SERVE.md``).

Every error is JSON ``{"error": message}``: 400 malformed request or foreign ``Host``,
403 foreign ``Origin`` or missing token, 404 unknown game or path, 409 not now, 413 body
too large, 415 a body that is not ``application/json``, 422 illegal move or a record the
engine refuses, 429 the decision pool is full (with ``Retry-After``), 503 the store is
full, 500 an internal error (a broken agent). Every request first passes
:class:`~twilight_env.serve.guard.Guard` (hosts, origins, token, content type, security
headers). Game logic runs in worker threads, one request per game at a time under the
game's own lock (requests for a busy game wait on its asyncio lock, holding no thread), so
several games and tabs never share state. Agent decisions and replays run in the
:class:`~twilight_env.serve.pool.DecisionPool` (searches in its worker processes); a hint
thinks outside the game's lock, on a snapshot of the person's information set, so an
abandoned hint never blocks its game.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import math
import threading
from collections import OrderedDict
import os
from typing import Any, Callable

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from twilight_env.records import game_records as records
from twilight_env.rules.engine import PHASE_NAMES
from twilight_env.util.jsonfile import JsonFileError, parse_json
from twilight_env.serve.games import (DEFAULT_AGENT, Game, GameError, GameStore, Limits, action_text, credited, line_seats,
                    state_view)
from twilight_env.serve.guard import BodyError, Guard, check_token_value, read_body, trusted_hosts
from twilight_env.serve.pool import Busy, DecisionPool, is_heavy

STATIC_DIR = os.path.join(os.path.dirname(__file__), "static")
MAX_BODY = 4 * 1024 * 1024
"""Largest request body accepted (bytes); a record upload is the largest. Enforced while
reading: a longer body, chunked or not, is refused once this many bytes have come."""
MAX_ADVANCE = 1000
"""Most agent moves one ``advance`` request may ask for."""
ADVANCE_SECONDS = 5.0
"""An ``advance`` (or a move with ``"advance": true``) stops making agent moves after
this many seconds; the answer says how many were made and the page asks again."""
REPLAY_PAGE = 500
"""Most positions one ``/api/replay`` answer holds (``?limit=``, default this)."""
HEAVY_SLOTS = 2
"""Searches (advances, moves and hints of searching agents) and replays that may compute at
once, server-wide (:class:`~twilight_env.serve.pool.DecisionPool`)."""
HEAVY_QUEUE = 8
"""Searches and replays that may wait for a slot besides; more are answered 429."""
LIGHT_SLOTS = 8
"""Agent moves of light agents (``random``, ``heuristic``, network agents) that may run at once."""
LIGHT_QUEUE = 64
"""Light agent moves that may wait besides; more are answered 429."""
PARSE_INLINE = 16 * 1024
"""Bodies up to this many bytes are parsed on the event loop (under a millisecond on any
input, ``benchmarks/json_parse.py``); larger ones in a worker thread, so that no body holds
up other requests."""


async def _body(request: Request, required: bool = True) -> Any:
    try:
        raw = await read_body(request, MAX_BODY)
    except BodyError as e:
        raise GameError(e.status, e.message) from None
    if not raw.strip():
        if required:
            raise GameError(400, "the request needs a JSON body")
        return {}
    return await _parse(raw)


async def _parse(raw: bytes) -> Any:
    """The JSON of a request body (:func:`~twilight_env.util.jsonfile.parse_json`, linear in
    the body), parsed in a worker thread when larger than :data:`PARSE_INLINE`.

    Raises:
        GameError: 400 with the reader's one line (not JSON, nested deeper than 64, ...).
    """
    try:
        if len(raw) <= PARSE_INLINE:
            return parse_json(raw, "the request body", max_size=MAX_BODY)
        return await run_in_threadpool(parse_json, raw, "the request body", max_size=MAX_BODY)
    except JsonFileError as e:
        raise GameError(400, str(e)) from None


def replay_states(record: Any) -> list:
    """Every state of a record (:func:`twilight_env.records.game_records.replay`), or a 422 GameError."""
    if not isinstance(record, dict):
        raise GameError(422, "cannot replay this: a record is a JSON object (docs/RECORDS.md)")
    try:
        return records.replay(record)
    except ValueError as e:  # RecordError: the step, the field and the reason
        raise GameError(422, f"cannot replay this record: {e}") from None


def _replay_names(agents: list | None, num_players: int) -> list[str]:
    """The 4 seat names of a recorded deal for :func:`replay_frames` (``agents`` as the record
    holds them; 3 players: seat 2 is the new moon, named after the solo's entry, R7.3)."""
    who = [_short(a) if isinstance(a, str) else "" for a in agents] if agents else ["", "", "", ""]
    if num_players == 3:  # seat 2 holds the solo's entry, or null in older records (R7.3)
        by = who[2] or who[0]
        who[2] = f"new moon ({by})" if by else "new moon"
    return who


def replay_frames(record: Any, offset: int = 0, limit: int | None = None, states: list | None = None) -> dict:
    """Positions ``offset .. offset + limit - 1`` of a record, as spectator views with the
    move that led to each.

    Args:
        record: a deal or match record (``docs/RECORDS.md``), checked and replayed by
            :func:`twilight_env.records.game_records.replay`.
        offset: the first position wanted (int >= 0; past the end gives no frames).
        limit: most positions (int >= 1), or None for all (the server passes at most
            :data:`REPLAY_PAGE`).
        states: the record's states if already replayed (:func:`replay_states`).

    Returns:
        ``{"kind": "deal" | "match", "count": int, "offset": int, "frames": [...],
        "who": {deal: [4 names]}}``: ``count`` is the number of positions of the whole
        record; one spectator view per position of the page (every hand open: a record
        holds the whole deal), each with ``text`` (the move that led there), ``deal``
        (1-based), ``index`` and ``credited`` (at the end of a deal: the record's
        ``lines`` with their seats and ``deal_points``, R5, R7.5; else None). ``who``
        names the recorded agent of each seat once per deal of the page (keys are the
        deal numbers as text; a name is cut to :data:`MAX_NAME_CHARS`), so the answer does
        not repeat the names in every position.

    Raises:
        GameError: 422 when the record cannot be replayed (the step and the reason).
    """
    if states is None:
        states = replay_states(record)
    deal_recs = record["deals"] if record.get("format") == records.FORMAT_MATCH else [record]
    seat_agents = [d.get("agents") for d in deal_recs]
    stop = len(states) if limit is None else min(len(states), offset + limit)
    deal = 1 + sum(1 for st in states[:max(0, min(offset, len(states)) - 1)] if st.done)
    frames = []
    who_by_deal: dict[str, list[str]] = {}
    for i in range(offset, stop):
        st = states[i]
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
        if str(deal) not in who_by_deal:
            agents = seat_agents[deal - 1] if deal - 1 < len(seat_agents) else None
            who_by_deal[str(deal)] = _replay_names(agents, st.num_players)
        d = deal_recs[deal - 1]
        view.update({"text": text, "deal": deal, "index": i,
                     "credited": credited(d["lines"], d["deal_points"], line_seats(d["lines"], st.seat_cult, d.get("solo")))
                     if st.done else None})
        frames.append(view)
    kind = "match" if record.get("format") == records.FORMAT_MATCH else "deal"
    return {"kind": kind, "count": len(states), "offset": offset, "frames": frames, "who": who_by_deal}


MAX_NAME_CHARS = 200
"""Longest agent name a replay answer shows; a longer one is cut, ending in ``…``."""


def _short(name: str) -> str:
    return name if len(name) <= MAX_NAME_CHARS else name[:MAX_NAME_CHARS - 1] + "…"


def _request_action(prev, st) -> int:
    """The request action between two states (the holder of ``st`` seen from the chooser)."""
    return 27 + (st.holder - prev.chooser) % 4


class ReplayCache:
    """The replayed states of the last few record bodies, by their SHA-256, so that asking
    for the next page of a record does not replay it again (thread-safe; ``size`` records)."""

    def __init__(self, size: int = 2):
        self.size = size
        self._items: OrderedDict[bytes, list] = OrderedDict()
        self._lock = threading.Lock()

    def states(self, raw: bytes, record: Any) -> list:
        key = hashlib.sha256(raw).digest()
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        states = replay_states(record)
        with self._lock:
            self._items[key] = states
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return states


def _query_int(request: Request, key: str, default: int, lo: int, hi: int) -> int:
    """The query parameter ``key`` as an int ``lo..hi`` (``default`` when absent).

    Only ASCII digits of at most as many digits as ``hi`` are read (``str.isdigit`` also
    accepts ``'²'`` and other digits that ``int`` refuses, and ``int`` refuses more than
    4,300 digits).

    Raises:
        GameError: 400 naming the parameter and the allowed range.
    """
    raw = request.query_params.get(key)
    if raw is None:
        return default
    if not (raw.isascii() and raw.isdigit() and len(raw) <= len(str(hi))) or not lo <= int(raw) <= hi:
        raise GameError(400, f"'{key}' must be an int {lo}..{hi} in ASCII digits, got {raw[:20]!r}")
    return int(raw)


# ---------------------------------------------------------------------------------
# the handlers; each reads the app's store, decision pool and replay cache from
# ``request.app.state`` (set by :func:`create_app`)
# ---------------------------------------------------------------------------------

def _store(request: Request) -> GameStore:
    return request.app.state.store


def _locked(game: Game, fn):
    with game.lock:
        return fn()


async def _in_game(game: Game, fn):
    """``fn()`` under the game's lock, in a worker thread. The request first waits for the
    game's asyncio lock, so requests queued on a busy game hold no thread while they wait."""
    async with game.alock:
        return await run_in_threadpool(_locked, game, fn)


async def _decide(request: Request, lane: str, fn, game: Game | None = None,
                  on_gone: Callable[[], None] | None = None) -> Response:
    """Run ``fn`` (agent decisions or a replay) in the decision pool's ``lane`` and answer
    its result as JSON; with ``game``, under the game's locks (asyncio, then the thread
    lock inside ``fn``). 429 with ``Retry-After`` when the lane is full (raised by
    :meth:`DecisionPool.admit`); 499 (nothing sent) when the client went away."""
    async with request.app.state.pool.admit(lane) as ticket:
        if game is None:
            ok, answer = await ticket.run(fn, request.is_disconnected, on_gone)
        else:
            async with game.alock:
                ok, answer = await ticket.run(fn, request.is_disconnected, on_gone)
    return JSONResponse(answer) if ok else Response(status_code=499)

async def _index(request: Request) -> Response:
    return FileResponse(os.path.join(STATIC_DIR, "index.html"))

async def _agents(request: Request) -> Response:
    from twilight_env.serve.specs import MAX_SPEC_CHARS, allowed_agents, describe, unavailable_agents
    return JSONResponse({"agents": allowed_agents(), "default": DEFAULT_AGENT, "options": describe(),
                         "unavailable": unavailable_agents(), "max_spec_chars": MAX_SPEC_CHARS})

async def _create(request: Request) -> Response:
    body = await _body(request, required=False)
    game = await run_in_threadpool(_store(request).create, body)
    view = await _in_game(game, game.view)
    return JSONResponse(view, status_code=201)

async def _show(request: Request) -> Response:
    game = _store(request).get(request.path_params["gid"])
    return JSONResponse(await _in_game(game, game.view))

async def _delete(request: Request) -> Response:
    _store(request).delete(request.path_params["gid"])
    return JSONResponse({"deleted": request.path_params["gid"]})

async def _advancing(request: Request, game: Game, first: Callable[[], None] | None, steps: int) -> Response:
    gone = threading.Event()

    def run():
        with game.lock:
            if first is not None:
                first()
            if not steps:
                return game.view()
            pool = request.app.state.pool
            made = game.advance(steps, stop=gone.is_set, seconds=ADVANCE_SECONDS,
                                decide=pool.decide if pool.processes else None)
            view = game.view()
            view["made"] = made
            return view
    return await _decide(request, "heavy" if steps and game.heavy else "light", run, game, gone.set)

async def _move(request: Request) -> Response:
    game = _store(request).get(request.path_params["gid"])
    body = await _body(request)
    steps = MAX_ADVANCE if isinstance(body, dict) and body.get("advance") else 0
    return await _advancing(request, game, lambda: game.move(body), steps)

async def _advance(request: Request) -> Response:
    game = _store(request).get(request.path_params["gid"])
    body = await _body(request, required=False)
    if not isinstance(body, dict):
        raise GameError(400, "the body must be a JSON object {\"steps\": N}")
    steps = body.get("steps", 1)
    if isinstance(steps, bool) or not isinstance(steps, int) or not 1 <= steps <= MAX_ADVANCE:
        raise GameError(400, f"'steps' must be an int 1..{MAX_ADVANCE}, got {steps!r}")
    return await _advancing(request, game, None, steps)

async def _hint(request: Request) -> Response:
    game = _store(request).get(request.path_params["gid"])
    body = await _body(request, required=False)
    if not isinstance(body, dict):
        raise GameError(400, "the body must be a JSON object {\"agent\": SPEC}")
    spec = body.get("agent", DEFAULT_AGENT)
    # checked under the lock; the agent then thinks on a snapshot, outside it
    spec, info, step = await _in_game(game, lambda: game.hint_position(spec))
    if is_heavy(spec):  # in a search worker process
        pool = request.app.state.pool
        return await _decide(request, "heavy", lambda: pool.call(Game.hint_for, spec, info, step))
    return await _decide(request, "light", lambda: Game.hint_for(spec, info, step))

async def _record(request: Request) -> Response:
    game = _store(request).get(request.path_params["gid"])
    rec = await _in_game(game, game.record)
    name = f"twilight_{game.num_players}p_{game.episode}_{game.seed}.json"
    return JSONResponse(rec, headers={"Content-Disposition": f'attachment; filename="{name}"'})

async def _replay(request: Request) -> Response:
    offset = _query_int(request, "offset", 0, 0, 10**9)
    limit = _query_int(request, "limit", REPLAY_PAGE, 1, REPLAY_PAGE)
    try:
        raw = await read_body(request, MAX_BODY)
    except BodyError as e:
        raise GameError(e.status, e.message) from None
    if not raw.strip():
        raise GameError(400, "the request needs a JSON body: a record")
    body = await _parse(raw)

    gz = accepts_gzip(request.headers.get("accept-encoding", ""))

    def run():
        answer = replay_frames(body, offset, limit, request.app.state.cache.states(raw, body))
        return json_bytes(answer, gz)
    async with request.app.state.pool.admit("heavy") as ticket:
        ok, out = await ticket.run(run, request.is_disconnected)
    if not ok:
        return Response(status_code=499)
    data, zipped = out
    headers = {"Vary": "Accept-Encoding"}
    if zipped:
        headers["Content-Encoding"] = "gzip"
    return Response(data, media_type="application/json", headers=headers)


def accepts_gzip(header: str) -> bool:
    """True if an ``Accept-Encoding`` header accepts ``gzip`` (and does not give it ``q=0``)."""
    for part in header.lower().split(","):
        name, _, params = part.strip().partition(";")
        if name.strip() in ("gzip", "*"):
            q = params.strip()
            return not (q.startswith("q=") and q[2:].strip().rstrip("0").rstrip(".") in ("", "0"))
    return False


def json_bytes(obj: Any, gzipped: bool) -> tuple[bytes, bool]:
    """``obj`` as compact UTF-8 JSON (as ``JSONResponse`` writes it), gzip-compressed when
    ``gzipped`` and longer than 1 KiB; returns ``(bytes, compressed)``. A replay page is
    highly repetitive: compressed, it is smaller than the record it comes from."""
    data = json.dumps(obj, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")
    if gzipped and len(data) > 1024:
        return gzip.compress(data, compresslevel=6), True
    return data, False

async def _game_error(request: Request, exc: GameError) -> Response:
    # a body refused as too large is not read on: the connection closes
    headers = {"Connection": "close"} if exc.status == 413 else None
    return JSONResponse({"error": exc.message}, status_code=exc.status, headers=headers)

async def _busy(request: Request, exc: Busy) -> Response:
    return JSONResponse({"error": exc.message}, status_code=429, headers={"Retry-After": str(exc.retry_after)})

async def _server_error(request: Request, exc: Exception) -> Response:
    return JSONResponse({"error": f"internal error ({type(exc).__name__}: {exc}); the game is as before "
                                  "the request if the error came before a move was applied"}, status_code=500)

async def _http_error(request: Request, exc: HTTPException) -> Response:
    msg = exc.detail if exc.status_code != 404 else f"no such path {request.url.path!r}"
    return JSONResponse({"error": msg}, status_code=exc.status_code)


def create_app(limits: Limits | None = None, clock: Callable[[], float] | None = None,
               store: GameStore | None = None, *, host: str | None = None, allow_hosts: tuple[str, ...] = (),
               token: str | None = None) -> Starlette:
    """The web application.

    Args:
        limits: bounds on live games (:class:`~twilight_env.serve.games.Limits`).
        clock: seconds for the store (tests pass a fake clock).
        store: an existing store (else a new one with ``limits`` and ``clock``).
        host: the address the server is bound to: a ``Host`` header may name it, besides
            ``localhost``, ``127.0.0.1`` and ``[::1]`` (a wildcard such as ``0.0.0.0``
            adds this machine's names and addresses).
        allow_hosts: further names a ``Host`` header may carry.
        token: a token every request must carry (:class:`~twilight_env.serve.guard.Guard`),
            or None for none.

    Returns:
        A Starlette app; ``app.state.store`` is its :class:`GameStore`, ``app.state.pool``
        the :class:`~twilight_env.serve.pool.DecisionPool` where every agent decision and
        replay runs, ``app.state.cache`` the :class:`ReplayCache` of the last replayed records.

    Raises:
        ValueError: a token shorter than 16 characters or of other characters than ASCII
            letters, digits, ``-`` and ``_`` (:func:`~twilight_env.serve.guard.check_token_value`).
    """
    if token is not None:
        check_token_value(token)  # before serving anything: ASCII letters, digits, '-', '_'
    if store is None:
        store = GameStore(limits, clock) if clock is not None else GameStore(limits)
    routes = [
        Route("/", _index),
        Route("/api/agents", _agents),
        Route("/api/games", _create, methods=["POST"]),
        Route("/api/games/{gid}", _show, methods=["GET"]),
        Route("/api/games/{gid}", _delete, methods=["DELETE"]),
        Route("/api/games/{gid}/move", _move, methods=["POST"]),
        Route("/api/games/{gid}/advance", _advance, methods=["POST"]),
        Route("/api/games/{gid}/hint", _hint, methods=["POST"]),
        Route("/api/games/{gid}/record", _record, methods=["GET"]),
        Route("/api/replay", _replay, methods=["POST"]),
        Mount("/static", StaticFiles(directory=STATIC_DIR), name="static"),
    ]
    guard = Middleware(Guard, hosts=trusted_hosts(host, allow_hosts), token=token)
    pool = DecisionPool(HEAVY_SLOTS, HEAVY_QUEUE, LIGHT_SLOTS, LIGHT_QUEUE, retry_after=max(1, math.ceil(ADVANCE_SECONDS)))

    @contextlib.asynccontextmanager
    async def lifespan(app):
        yield
        app.state.pool.shutdown()

    app = Starlette(routes=routes, middleware=[guard], lifespan=lifespan,
                    exception_handlers={GameError: _game_error, Busy: _busy, HTTPException: _http_error,
                                        Exception: _server_error})
    app.state.store = store
    app.state.pool = pool
    app.state.cache = ReplayCache()
    return app
