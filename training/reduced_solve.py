"""Reduced-deck games solved exactly: game trees, CFR, sequence-form LP, best responses.

The reduced decks (``Config.tricks`` 1..6, :data:`twilight_env.rules.cards.KEEP_ORDER`) are
small enough to write down the whole game: every deal, every first leader and every line of
play, as played by the engine (:class:`~twilight_env.rules.engine.ReducedState`). These modules
build that tree once as NumPy arrays and solve it.

The parts: :mod:`~twilight_env.training.reduced_tree` (the tree and the two models),
:mod:`~twilight_env.training.reduced_eval` (values, best responses, NashConv),
:mod:`~twilight_env.training.reduced_cfr` (CFR, CFR+), :mod:`~twilight_env.training.reduced_lp`
(the sequence-form linear program) and :mod:`~twilight_env.training.reduced_count` (sizes
counted without the tree); this module solves one size (:func:`solve_size`), writes the
report and is the command line. Every name of the parts is importable from here too.

Two ways to read the sides (R2.1, R7):

- **seats** (``model="seats"``): each OpenSpiel player decides on its own information (its
  hand, the open hand in 3 players, the card backs, every play, R2.5, R7.1). This is the
  game of ``python_twilight(players=N,tricks=T)``; the sides are teams of players who do not
  share what they hold. The solution concept for such teams is the team-maxmin equilibrium
  with correlation (TMECor); it is not computed here. CFR (OpenSpiel's vanilla CFR or CFR+,
  with alternating updates, written here over the arrays) gives a strategy per seat and its
  NashConv (the sum over players of what a best response gains, OpenSpiel's definition).
- **teams** (``model="teams"``): each side is one player that knows both of its members'
  hands (the team sharing information, with perfect recall of both). This is a two-player
  zero-sum game; :func:`solve_lp` solves it exactly (sequence-form linear program, HiGHS).

Bounds on the value of the seats game for the teams (Moon - Sun, deal points): a side that
shares information can do no worse, so with ``x`` the Moon seats' and ``y`` the Sun seats'
strategies of the seats game, the Moon side's best response with shared information against
``y`` is an upper bound, and the Sun side's against ``x`` a lower bound, on what the Moon
side can guarantee under TMECor. In 3 players the Moon side is one player (the solo, R7.3),
so the teams value itself is a lower bound.

Units: values are Moon side's deal score minus Sun side's, in deal points (R5), averaged over
the uniform deal (R2.3) and, in 4 players, the uniform first leader; NashConv is in deal
points too (OpenSpiel's returns are these divided by 360).

Usage::

    python -m twilight_env.training.reduced_solve --sizes 1:3 1:4 2:3 --iterations 1000 --seconds 480 \
        --count-only 2:4 --out results/reduced_decks

writes ``reduced_decks.json`` and ``README.md`` (the table of sizes, values and NashConv).
Sizes are ``TRICKS:PLAYERS``; ``--count-only`` sizes are counted (deals, lines of play,
information sets) without building their trees. The trees are built in Python: 2 tricks in
3 players is 9,651,420 nodes (236 s to build with both models on a loaded 2-core machine,
2.8 GB measured while solving); 2 tricks in 4 players four times that.

The OpenSpiel game's information-state strings list each hand in the order its cards were
dealt, so for 2 tricks and more OpenSpiel splits each of the sets here into one per deal
order (strategically the same game); with 1 trick they are the same sets (tests compare).
"""

from __future__ import annotations

import argparse
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from twilight_env.rules.cards import CARDS, deck_mask, ids_of
from twilight_env.training.reduced_cfr import CFR, by_leader, run_cfr_plus  # noqa: F401  (re-exported)
from twilight_env.training.reduced_count import (  # noqa: F401  (re-exported)
    count_deals, count_infosets, count_terminal_histories)
from twilight_env.training.reduced_eval import (  # noqa: F401  (re-exported)
    best_response, best_response_value, nash_conv, reach, root_value, team_bounds, values)
from twilight_env.training.reduced_lp import solve_lp  # noqa: F401  (re-exported)
from twilight_env.training.reduced_tree import (  # noqa: F401  (re-exported)
    MOON_PLAYER, PLAYER_OF_SEAT, SEEN, TEAM_SEATS, GameTree, Model, all_deals, build_tree, make_model,
    team_seats, uniform_policy, utilities)


def solve_size(tricks: int, num_players: int, iterations: int, seconds: float | None = None,
               leaders: tuple[int, ...] | None = None, lp_max_slots: int = 200_000) -> dict:
    """Build one reduced game; solve its teams model (exactly by linear program when it has
    at most ``lp_max_slots`` information-set actions, else by CFR+ with the value bracketed by
    the two best responses) and run CFR+ on its seats model.

    Args:
        tricks: 1..6.
        num_players: 4 or 3.
        iterations: CFR+ iterations per model.
        seconds: stop each CFR+ run after this many seconds of solving (None: no limit).
        leaders: 4 players: first leaders to include (default all four).
        lp_max_slots: the largest teams model solved by linear program.

    Returns:
        a dict of sizes, times (seconds), values and NashConv (deal points), as written to
        ``reduced_decks.json``.
    """
    row: dict = {"tricks": tricks, "players": num_players,
                 "deck": [CARDS[c] for c in ids_of(deck_mask(tricks))],
                 "deals": count_deals(tricks)}
    t0 = time.perf_counter()
    tree = build_tree(tricks, num_players, leaders)
    seats, teams = make_model(tree, "seats"), make_model(tree, "teams")
    row.update(first_leaders=sorted(set(tree.leaders.tolist())), histories=tree.num_nodes,
               terminal_histories=tree.num_terminals, infosets_seats=seats.num_isets,
               infosets_teams=teams.num_isets, build_seconds=round(time.perf_counter() - t0, 2))
    util = utilities(tree, teams)
    if teams.num_slots <= lp_max_slots:
        t0 = time.perf_counter()
        value, x, y = solve_lp(tree, teams)
        owner = teams.iset_player[np.repeat(np.arange(teams.num_isets), np.diff(teams.iset_offset))]
        nc, _, _ = nash_conv(tree, teams, np.where(owner == 0, x, y))
        row["teams"] = {"method": "linear program", "value": value, "lower": value, "upper": value,
                        "nash_conv": nc, "seconds": round(time.perf_counter() - t0, 2),
                        "value_by_first_leader": by_leader(tree, teams, np.where(owner == 0, x, y))}
    else:
        avg, curve, done, spent = run_cfr_plus(tree, teams, iterations, seconds)
        upper = best_response_value(tree, teams, avg, util, 0)
        lower = -best_response_value(tree, teams, avg, util, 1)
        row["teams"] = {"method": "CFR+", "iterations": done, "value": 0.5 * (lower + upper), "lower": lower,
                        "upper": upper, "nash_conv": upper - lower, "seconds": round(spent, 2), "curve": curve,
                        "value_by_first_leader": by_leader(tree, teams, avg)}
    avg, curve, done, spent = run_cfr_plus(tree, seats, iterations, seconds)
    nc, on, _ = nash_conv(tree, seats, avg)
    moon = int(np.flatnonzero(seats.moon)[0])
    lower, upper = team_bounds(tree, seats, teams, avg)
    row["seats_cfr_plus"] = {"iterations": done, "seconds": round(spent, 2), "value": float(on[moon]),
                             "nash_conv": nc, "nash_conv_openspiel": nc / 360.0,
                             "team_bounds": {"lower": lower, "upper": upper}, "curve": curve,
                             "value_by_first_leader": by_leader(tree, seats, avg)}
    return row


def size_only(tricks: int, num_players: int, infosets: bool = True) -> dict:
    """The counts of a size whose tree is not built: deals, complete lines of play and (with
    ``infosets``) the information sets of both models (:func:`count_infosets`), with the
    seconds the count took."""
    row = {"tricks": tricks, "players": num_players, "deck": [CARDS[c] for c in ids_of(deck_mask(tricks))],
           "deals": count_deals(tricks), "terminal_histories": count_terminal_histories(tricks, num_players)}
    if infosets:
        t0 = time.perf_counter()
        row["infosets_seats"] = count_infosets(tricks, num_players, "seats")
        row["infosets_teams"] = count_infosets(tricks, num_players, "teams")
        row["count_seconds"] = round(time.perf_counter() - t0, 2)
    return row


def _fmt(x, digits=2):
    return "—" if x is None else f"{x:+.{digits}f}" if isinstance(x, float) else f"{x:,}"


def _teams_cell(t: dict) -> str:
    if not t:
        return "—"
    if t["method"] == "linear program":
        return f"{t['value']:+.3f} (LP)"
    return f"[{t['lower']:+.3f}, {t['upper']:+.3f}] (CFR+, {t['iterations']} it.)"


def report(rows: list[dict], command: str) -> str:
    """The Markdown table of ``reduced_decks.json``."""
    out = ["# Reduced-deck games solved exactly", "",
           f"Written by `{command}`.", "",
           "Values are Moon side's deal score minus Sun side's (deal points, R5), at the uniform deal "
           "(and, in 4 players, uniform first leader). *teams*: each side one player that shares its "
           "members' information (two-player zero-sum, solved exactly by linear program; NashConv of the "
           "LP strategies). *seats*: each OpenSpiel player on its own information, the game of "
           "`python_twilight(players=N,tricks=T)`: CFR+ average strategies, their NashConv (OpenSpiel's "
           "sum over players, in deal points; /360 in OpenSpiel's units), their Moon value and the bounds "
           "from best responses of a side sharing information (lower: the Sun side's against the Moon "
           "seats; upper: the Moon side's against the Sun seats).", "",
           "| tricks | players | deals | histories | terminal histories | infosets (seats) | infosets (teams) "
           "| build s | teams value | teams NashConv | teams s | CFR+ iters | CFR+ s | seats value | "
           "seats NashConv | bounds [lower, upper] |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lp = r.get("teams") or {}
        cf = r.get("seats_cfr_plus") or {}
        b = cf.get("team_bounds") or {}
        bounds = f"[{b['lower']:+.2f}, {b['upper']:+.2f}]" if b else "—"
        out.append("| " + " | ".join([
            str(r["tricks"]), str(r["players"]), _fmt(r["deals"]), _fmt(r.get("histories")),
            _fmt(r["terminal_histories"]), _fmt(r.get("infosets_seats")), _fmt(r.get("infosets_teams")),
            str(r.get("build_seconds", "—")), _teams_cell(lp), _fmt(lp.get("nash_conv"), 6),
            str(lp.get("seconds", "—")), _fmt(cf.get("iterations")), str(cf.get("seconds", "—")),
            _fmt(cf.get("value"), 3), _fmt(cf.get("nash_conv"), 4), bounds]) + " |")
    out += ["", "Decks (`twilight_env.rules.cards.KEEP_ORDER`, both cults):", ""]
    seen = set()
    for r in rows:
        if r["tricks"] not in seen:
            seen.add(r["tricks"])
            out.append(f"- {r['tricks']} trick(s): {' '.join(r['deck'])}")
    curves = [r for r in rows if r.get("seats_cfr_plus")]
    if curves:
        out += ["", "CFR+ NashConv over iterations (seats model, deal points):", ""]
        for r in curves:
            pts = ", ".join(f"{c['iteration']}: {c['nash_conv']:.4f}" for c in r["seats_cfr_plus"]["curve"])
            out.append(f"- {r['tricks']} trick(s), {r['players']} players: {pts}")
    missing = [r for r in rows if "histories" not in r]
    if missing:
        out += ["", "Rows without a tree were not built or solved (too slow to build and solve on this machine); "
                "their deals, complete lines of play (`count_terminal_histories`) and information sets "
                "(`count_infosets`) are counted exactly."]
    return "\n".join(out) + "\n"


def _size(text: str) -> tuple[int, int]:
    """``"2:3"`` -> (2, 3); SystemExit naming the format on anything else."""
    try:
        t, n = (int(x) for x in text.split(":"))
        deck_mask(t)
        if n not in (3, 4) or t > 6:
            raise ValueError
    except ValueError:
        raise SystemExit(f"a size is TRICKS:PLAYERS with tricks 1..6 and players 3 or 4, e.g. 2:3; got {text!r}")
    return t, n


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="python -m twilight_env.training.reduced_solve",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", nargs="+", default=["1:3", "1:4"], metavar="TRICKS:PLAYERS",
                    help="sizes to build and solve, TRICKS:PLAYERS (tricks 1..6, players 3 or 4; default 1:3 1:4)")
    ap.add_argument("--iterations", type=int, default=1000,
                    help="CFR+ iterations per size, at least 1 (default %(default)s)")
    ap.add_argument("--count-only", nargs="*", default=[], metavar="TRICKS:PLAYERS",
                    help="sizes TRICKS:PLAYERS to count (deals, lines of play, information sets) without "
                         "building the tree (default: none)")
    ap.add_argument("--seconds", type=float, default=None,
                    help="stop each CFR+ run after this many seconds of solving (default: no limit)")
    ap.add_argument("--lp-max-slots", type=int, default=200_000,
                    help="largest teams model (information-set actions) solved by linear program; "
                         "larger ones by CFR+ with the value bracketed (default %(default)s)")
    ap.add_argument("--out", default="results/reduced_decks",
                    help="output folder (JSON and Markdown; default %(default)s)")
    a = ap.parse_args(argv)
    sizes = [_size(x) for x in a.sizes]
    counts = [_size(x) for x in a.count_only]
    if a.iterations < 1:
        raise SystemExit(f"--iterations must be at least 1, got {a.iterations}")
    import os
    import sys

    from twilight_env.util.report import write_json_atomic

    os.makedirs(a.out, exist_ok=True)
    command = "python -m twilight_env.training.reduced_solve " + " ".join(sys.argv[1:] if argv is None else argv)

    def write(rows):
        write_json_atomic(os.path.join(a.out, "reduced_decks.json"), {"command": command, "rows": rows})
        with open(os.path.join(a.out, "README.md"), "w") as f:
            f.write(report(rows, command))

    rows: list[dict] = []
    # the counts run in a second process beside the solves; the files are rewritten after each row
    with ProcessPoolExecutor(max_workers=1) as pool:
        counted = [pool.submit(size_only, t, n) for t, n in counts]
        for t, n in sizes:
            print(f"solving {t} trick(s), {n} players ...", flush=True)
            rows.append(solve_size(t, n, a.iterations, a.seconds, lp_max_slots=a.lp_max_slots))
            print(f"  teams {_teams_cell(rows[-1]['teams'])}, seats NashConv "
                  f"{rows[-1]['seats_cfr_plus']['nash_conv']:.4f}", flush=True)
            write(rows + [f.result() for f in counted if f.done()])
        rows += [f.result() for f in counted]
    write(rows)
    print(report(rows, command))


if __name__ == "__main__":
    main()
