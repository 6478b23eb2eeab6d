"""``twilight edge``: in the 3-player game, does the solo (Moon) or the Sun side have the edge?

The publisher invites play "with fixed teams" to find out (R7.6). This study answers it
for given agents.

Design
------
A fixed deal set of N deals (``twilight_env.records.dealsets``). In 3 players the seats are
0 = solo (Moon), 1 = Sun player on the solo's left, 2 = new moon (open hand, R7.1),
3 = Sun player on the solo's right (R7.2); the solo leads and decides for the new moon
(R7.3). Each deal is played three times, once with each of the three players' hands as
the solo hand, following the rotation of R7.4: with the players' hands ``h0, h1, h3``
(the dealt hands of seats 0, 1, 3) and the new-moon hand ``h2`` fixed,

| play r | solo (seat 0) | Sun left (seat 1) | Sun right (seat 3) |
|---|---|---|---|
| 0 | h0 | h1 | h3 |
| 1 | h3 | h0 | h1 |
| 2 | h1 | h3 | h0 |

so every player's hand is once the solo's and the hand luck of the solo chair cancels
within a deal. For an agent spec X the same agent sits on all three chairs; with
``--solo X --sun Y`` the solo (seat 0, deciding for the new moon) is X and both Sun
seats are Y.

Figures (deal points, R5; 95% intervals)
----------------------------------------
- Moon side and Sun side mean deal points per deal, and the paired difference Moon − Sun:
  each deal's three plays are averaged first, then a Student-t interval over the N deals.
- P(Moon side outscores Sun side in a deal): share of the 3N plays, Wilson interval
  (ties and Sun wins are given too). The three plays of a deal share cards, so this
  interval is a little narrow; the paired difference is the primary figure.
- Match-win probability of the solo under ``fixed_solo`` (R7.6): matches simulated by
  drawing plays' (Moon, Sun) deal points with replacement, the solo credited with the
  Moon points and the Sun side with the Sun points, until a total reaches the target
  (1000) with the higher total winning, ties playing on (R6.1, R7.5). Interval:
  percentile bootstrap that resamples the N deals (then simulates matches on each
  resample), so it covers both the deal sample and the simulation noise. Below
  ``MIN_BOOTSTRAP_DEALS`` (30) deals the answer says that this interval is not reliable.
- Rotating rules (R7.4, R7.5): players p0, p1, p2, solo p0, p2, p1, p0, ...; each deal
  the solo gets the Moon points and both others the Sun points; a player reaching the
  target with the highest total wins, ties play on. Reported: each player's win
  probability (bootstrap intervals) and mean final totals.

Output folder (default ``out/edge__{seed}__{unixtime}``): ``edge.md`` (markdown table),
``edge.json`` (all figures, N, seed, specs, run time, per-deal points by play),
``edge.png`` (per-deal Moon − Sun distribution, mean ± CI per configuration).

Long runs: the folder is made first and, while deals are played, holds
``edge.checkpoint.json`` (the settings, the deals and every finished deal's points,
written atomically at the start, every 20 s and on Ctrl-C or SIGTERM). ``twilight edge
--resume FOLDER`` plays only the missing deals and writes the same figures an
uninterrupted run would; the checkpoint is removed when the run finishes. Every setting,
value range and stored result of the checkpoint is checked before any deal is played
(docs/API.md, Study checkpoints); a damaged one is refused in one line. ``twilight edge
--resume FOLDER --deals N`` grows a finished or interrupted run of generated deals to N
deals, playing only the new ones (:func:`grow_run`): a study reaches a tight interval
over several sittings, and ``run_seconds`` adds up the sittings.

Records: ``--records DIR`` also writes ``DIR/edge.records.jsonl.gz``, every play of every
deal as a deal record (``docs/RECORDS.md``: the rotated deal as played, the actions, the
agent specs by seat, and ``meta`` with the configuration, deal index and play r). A run
continued with ``--resume`` writes no records.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
import zlib

import numpy as np

from twilight_env.util.argtypes import interrupt_status, non_negative_int, positive_int
from twilight_env.rules.engine import State
from twilight_env.util.jsonfile import JsonFileError, read_json
from twilight_env.records.game_records import check_records_folder
from twilight_env.util.seeding import check_seed

from twilight_env.experiments.common import (RunCheckpoint, check_deal_source, check_int, check_keys, check_new_file, check_new_folder,
                     check_score_pair, check_specs, check_workers, default_workers, fmt_ci, git_hash, markdown_table, mean_ci, out_dir, play_seeded, resume_conflicts, run_tasks,
                     text_table, wilson_ci)
from twilight_env.util.distributed import add_ray_argument, prepare_runner, ray_runner, runner_label
from twilight_env.records.dealsets import check_deals, deal_set, run_seed

DEFAULT_DEALS = 8000
"""Default N. Measured at ``heuristic`` strength: 10,000 deals took 74 s of CPU time (2.4 ms
per play) with a 95% CI half-width of 1.5 deal points for Moon − Sun, so 8,000 deals take
about 35-40 s of wall time on 2 idle cores (longer on a busy machine) and give a half-width
of about 1.7 (target ≤ 2)."""
DEFAULT_SPEC = "heuristic"
ROTATIONS = ((0, 1, 3), (3, 0, 1), (1, 3, 0))
"""Play r: the dealt hands (by dealt seat) placed on seats 0, 1, 3 (R7.4 rotation)."""
SOLO_ORDER = (0, 2, 1)
"""R7.4: the solo of deal k of a match is player ``SOLO_ORDER[k % 3]``."""
BOOT_STREAM = 2
"""Tag of the bootstrap's random stream (distinct from deals and agents)."""
MIN_BOOTSTRAP_DEALS = 30
"""Below this many deals the answer warns that the percentile bootstrap's match interval
is not reliable: resampling a handful of deals gives intervals far too narrow (with 2
deals, 0.99 to 1.00 while the deal-points interval spans hundreds of points)."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("specs", nargs="*", metavar="SPEC",
                   help=f"agent specs; each plays all three chairs (default {DEFAULT_SPEC} unless --solo/--sun)")
    p.add_argument("--deals", type=positive_int, default=None,
                   help=f"number of deals N, each played 3 times (default {DEFAULT_DEALS}, or all of --deals-file)")
    p.add_argument("--seed", type=non_negative_int, default=None,
                   help="seed of the deals, agents and bootstrap (default 0; with --deals-file, the seed saved in the "
                        "file)")
    p.add_argument("--workers", type=positive_int, default=default_workers(),
                   help="worker processes (default: os.cpu_count(); 1 runs in this process)")
    p.add_argument("--out", default=None,
                   help="output folder (default out/edge__{seed}__{unixtime}); one that holds files needs --force")
    p.add_argument("--solo", default=None, metavar="SPEC", help="mixed strengths: the solo's agent (seat 0)")
    p.add_argument("--sun", default=None, metavar="SPEC", help="mixed strengths: the Sun seats' agent (1 and 3)")
    p.add_argument("--deals-file", default=None, help="play the deals of this 3-player JSON deal file")
    p.add_argument("--save-deals", default=None,
                   help="write the deals used to this JSON deal file (an existing file needs --force)")
    p.add_argument("--force", action="store_true",
                   help="write over the outputs in an existing --out folder and an existing --save-deals file")
    p.add_argument("--target", type=positive_int, default=None,
                   help="match target for the simulations (R6.1, default 1000)")
    p.add_argument("--boot", type=positive_int, default=None, help="bootstrap resamples of the deal set (default 200)")
    p.add_argument("--matches", type=positive_int, default=None,
                   help="simulated matches per bootstrap resample (default 1000)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--resume", default=None, metavar="FOLDER",
                   help="finish an interrupted run from the checkpoint in its output folder (its settings are "
                        "kept; only --workers, --ray, --quiet and --deals may be given with it; a run started on "
                        "one runner may be resumed on the other); with --deals N, grow a finished or interrupted "
                        "run to N deals, playing only the new ones")
    p.add_argument("--records", default=None, metavar="DIR",
                   help="also write every play of every deal as a game record to DIR/edge.records.jsonl.gz "
                        "(docs/RECORDS.md; twilight replay reads it)")
    p.add_argument("--ladder", default=None, metavar="FOLDER",
                   help="the edge at every rung of a finished 3-player `twilight ladder` run, on the held-out deal "
                        "set heldout-2, with --deals N per rung; writes edge_vs_strength.md/.json/.png (run the same "
                        "command again to resume)")
    p.add_argument("--rung-deals", action="append", default=None, metavar="SPEC=N",
                   help="with --ladder: N deals for the rung SPEC instead of --deals (repeat for several rungs; "
                        "0 leaves the rung out)")
    p.add_argument("--off-ladder", action="append", default=None, metavar="FOLDER",
                   help="with --ladder: also tabulate and plot the finished one-agent edge run in FOLDER (an agent "
                        "that is not a rung, e.g. exit:default, played with --seed of the ladder's deal set), apart "
                        "from the rungs and against the top rung (repeat for several)")
    p.add_argument("--compare", nargs=2, default=None, metavar=("FOLDER_A", "FOLDER_B"),
                   help="print the edge of the finished run in FOLDER_A minus that in FOLDER_B, paired by deal "
                        "(two agents' team-scoring runs, one configuration each, on the generated deals of one "
                        "--seed), with its 95%% interval; plays nothing")
    p.add_argument("--scoring", choices=("team", "individual"), default=None,
                   help="3-player scoring: 'team' (the default, R7.5) or 'individual' (R8: every seat scores its "
                        "own tricks, the new moon is a fourth line); 'individual' writes individual.md/.json "
                        "(twilight_env.experiments.edge.individual_edge; agents that read it: ismcts:backend=numba,scoring=individual)")
    add_ray_argument(p)


# ---------------------------------------------------------------------------------
# playing
# ---------------------------------------------------------------------------------

def rotated_deal(deal, r: int) -> list[list[str]]:
    """The deal of play ``r`` (0..2): players' hands rotated, new-moon hand fixed (table above)."""
    a, b, c = ROTATIONS[r]
    return [list(deal[a]), list(deal[b]), list(deal[2]), list(deal[c])]


RECORDS_FILE = "edge.records.jsonl.gz"
"""File name of the game records that ``--records DIR`` writes into DIR."""


def _play_edge_deal(task) -> tuple:
    """Worker: the three plays of one deal for one configuration; Moon and Sun points per
    play (and, when the task's optional 7th item is true, the plays' deal records)."""
    deal_index, deal, solo, sun, seed, config, *keep = task
    moon_pts, sun_pts, recs = [], [], []
    for r in range(3):
        state = State.from_deal(rotated_deal(deal, r), 0, 3)
        state = play_seeded(state, [solo, sun, solo, sun], seed, deal_index, 3 * config + r)
        m, s = state.side_scores()  # side 0 = seats 0, 2 = Moon in 3 players
        moon_pts.append(m)
        sun_pts.append(s)
        if keep and keep[0]:
            from twilight_env.records.game_records import deal_record

            recs.append(deal_record(state, None, agents=[solo, sun, solo, sun], seed=seed,
                                    meta={"study": "edge", "solo_spec": solo, "sun_spec": sun, "config_key": config,
                                          "deal": deal_index, "play": r}))
    return (deal_index, moon_pts, sun_pts) + ((recs,) if keep and keep[0] else ())


def play_config(deals, solo: str, sun: str, seed: int, config: int, workers: int,
                progress: bool = True, done: dict | None = None,
                on_result=None, records=None) -> tuple[np.ndarray, np.ndarray]:
    """Play every deal three times (one per solo hand) with the given agents.

    Args:
        done: ``{deal index: (moon points, sun points)}`` of deals already played (from a
            checkpoint); they are not played again. Each deal's plays are seeded by
            (seed, deal index, config), so the result equals an uninterrupted run.
        on_result: called with ``(deal index, moon points, sun points)`` of each deal
            as it finishes.
        records: called with each deal record (``docs/RECORDS.md``) of each play as its
            deal finishes, or None (no records are made).

    Returns:
        ``(moon, sun)``: int arrays of shape ``(N, 3)``, deal points ``[deal, play r]``.
    """
    done = dict(done or {})
    tasks = [(d, deals[d], solo, sun, seed, config) + ((True,) if records is not None else ())
             for d in range(len(deals)) if d not in done]
    label = solo if solo == sun else f"{solo} vs {sun}"
    hook = on_result
    if records is not None:
        def hook(r):
            for rec in r[3]:
                records(rec)
            if on_result is not None:
                on_result(r[:3])
    res = run_tasks(_play_edge_deal, tasks, workers, desc=f"edge {label}", progress=progress,
                    on_result=hook, done=len(deals) - len(tasks))
    for d, m, u, *_ in res:
        done[d] = (m, u)
    order = range(len(deals))
    return (np.array([done[d][0] for d in order], dtype=np.int64).reshape(-1, 3),
            np.array([done[d][1] for d in order], dtype=np.int64).reshape(-1, 3))


# ---------------------------------------------------------------------------------
# checkpoints
# ---------------------------------------------------------------------------------

CHECKPOINT = "edge.checkpoint.json"
"""File name of a run's checkpoint in its output folder (removed when the run finishes)."""
CHECKPOINT_KIND = "twilight-edge-checkpoint"
CHECKPOINT_EVERY_S = 20.0
"""Seconds between checkpoint writes while deals finish (and one at the end or on Ctrl-C)."""


class Checkpoint(RunCheckpoint):
    """The finished deals of an ``edge`` run, written atomically to ``FOLDER/edge.checkpoint.json``
    (:class:`~twilight_env.experiments.common.RunCheckpoint`).

    The file holds the settings (configurations, seed, deals, match options), the deals
    themselves and, per configuration key, each finished deal's Moon and Sun points by
    play. ``twilight edge --resume FOLDER`` plays only the missing deals; since every
    deal is seeded by (seed, deal index, configuration), the final figures equal those of
    an uninterrupted run.
    """

    NAME = CHECKPOINT
    KIND = CHECKPOINT_KIND
    COMMAND = "twilight edge"
    RESULT_FILE = "edge.json"

    def interval(self) -> float:
        return CHECKPOINT_EVERY_S

    def record(self, key: int, deal_index: int, moon: list[int], sun: list[int]) -> None:
        super().record(key, deal_index, (list(moon), list(sun)))

    SETTINGS = ("configs", "seed", "target", "boot", "matches", "deals_source")
    """Keys of the settings object (all required; any other key is refused)."""
    EXTRA_SETTINGS: dict = {}
    """Further settings a subclass requires, with the only value allowed."""

    @classmethod
    def parse_common(cls, doc: dict, extra: dict | None = None) -> tuple[dict, list, dict]:
        """``(settings, deals, {key: results of that configuration})`` after checking what
        every edge-type checkpoint holds: every setting's type and range (``seed`` >= 0,
        ``target``, ``boot``, ``matches`` in range, :func:`check_match_settings`; agent specs as strings, no configuration
        twice), no unknown setting, at least 2 valid deals of 3 players that match their
        source (:func:`~twilight_env.experiments.common.check_deal_source`) and results only for listed
        configurations; the per-deal results are left to the caller. ``extra``: further
        required settings with the only value allowed (default ``EXTRA_SETTINGS``).

        Raises:
            ValueError: naming the field and the allowed values.
        """
        extra = cls.EXTRA_SETTINGS if extra is None else extra
        st = check_keys(doc["settings"], "'settings'", cls.SETTINGS + tuple(extra))
        for k, v in extra.items():
            if st[k] != v:
                raise ValueError(f"settings {k!r} must be {v!r} in this file, got {st[k]!r}")
        raw = st["configs"]
        if (not isinstance(raw, list) or not raw or any(not isinstance(c, list) or len(c) != 2 for c in raw)
                or any(not isinstance(x, str) or not x.strip() for c in raw for x in c)):
            raise ValueError(f"settings 'configs' must be a non-empty list of [solo spec, Sun spec] pairs of "
                             f"strings, got {raw!r}")
        configs = [(a, b) for a, b in raw]
        if len(set(configs)) != len(configs):
            raise ValueError(f"settings 'configs' lists a configuration twice: {raw!r}")
        check_int(st["seed"], "settings 'seed'", 0)
        check_match_settings(st["target"], st["boot"], st["matches"], lambda k: f"settings {k!r}")
        deals = check_deals(doc["deals"], "its deals")
        if len(deals) < 2:
            raise ValueError(f"it holds {len(deals)} deal(s); a run has at least 2")
        check_deal_source(st["deals_source"], "settings 'deals_source'", 3, deals)
        keys = {str(config_key(a, b)): (a, b) for a, b in configs}
        if not isinstance(doc["done"], dict):
            raise ValueError("'done' is not an object")
        for k, v in doc["done"].items():
            if k not in keys:
                raise ValueError(f"it holds results of a configuration that its settings do not list (key {k}); "
                                 "were the settings edited?")
            if not isinstance(v, dict):
                raise ValueError(f"the results of configuration {keys[k]} are not an object")
            for d in v:
                if not (isinstance(d, str) and d.isdigit() and int(d) < len(deals)):
                    raise ValueError(f"the results of configuration {keys[k]} name deal {d!r}; the run's deals "
                                     f"are 0..{len(deals) - 1}")
        st["configs"] = [list(c) for c in configs]
        return st, deals, doc["done"]

    @classmethod
    def parse(cls, doc: dict) -> tuple[dict, list, dict]:
        st, deals, raw = cls.parse_common(doc)
        done = {}
        for k, v in raw.items():
            done[k] = {}
            for d, pair in v.items():
                if not isinstance(pair, list) or len(pair) != 2 or any(
                        not isinstance(x, list) or len(x) != 3 for x in pair):
                    raise ValueError(f"a malformed result for deal {d}: [Moon points of the 3 plays, Sun points of "
                                     f"the 3 plays] expected, got {pair!r}")
                m, u = pair
                for r in range(3):
                    check_score_pair([m[r], u[r]], f"the (Moon, Sun) deal points of deal {d}, play {r}")
                done[k][int(d)] = (list(m), list(u))
        return st, deals, done


# ---------------------------------------------------------------------------------
# match simulations
# ---------------------------------------------------------------------------------

GOALS_333 = (333, 666, 999)
"""The exact totals that also end a match under the ``goals_333`` variant (R6.2)."""


def simulate_fixed_solo(moon: np.ndarray, sun: np.ndarray, rng: np.random.Generator, matches: int,
                        target: int = 1000, max_deals: int = 5000, goals_333: bool = False) -> dict:
    """Matches under ``fixed_solo`` (R7.6) from pools of per-deal (Moon, Sun) points.

    With ``goals_333`` (R6.2) a match also ends when exactly one side's total is exactly
    333, 666 or 999 (goals below the target, checked in that order, as the engine's
    ``Match`` does); both sides on the same goal play on (R9). Deal play does not depend
    on the match rules for this package's agents (none reads the totals), so the same
    per-deal points serve both rule sets.

    Args:
        moon, sun: float or int arrays ``(B, P)``: B pools of P deal outcomes each (row b,
            column j: one deal's Moon and Sun deal points).
        rng: draws the deals.
        matches: matches simulated per pool (K).
        target: match target (R6.1).
        max_deals: safety stop for pools that never reach the target.

    Returns:
        dict of arrays over the B pools: ``"p_solo"`` (B,) share of decided matches the solo
        won, ``"deals"`` (B,) mean deals per decided match, ``"undecided"`` (B,) matches
        still tied or short of the target at ``max_deals``.
    """
    moon = np.asarray(moon, dtype=np.int64)
    sun = np.asarray(sun, dtype=np.int64)
    B, P = moon.shape
    pool = np.repeat(np.arange(B), matches)  # flat match index -> its pool
    ts = np.zeros(B * matches, dtype=np.int64)
    tn = np.zeros(B * matches, dtype=np.int64)
    solo_won = np.zeros(B * matches, dtype=bool)
    length = np.zeros(B * matches, dtype=np.int64)
    alive = np.arange(B * matches)  # matches still being played
    for k in range(max_deals):
        if alive.size == 0:
            break
        j = rng.integers(P, size=alive.size)
        b = pool[alive]
        a_ts = ts[alive] + moon[b, j]
        a_tn = tn[alive] + sun[b, j]
        ts[alive] = a_ts
        tn[alive] = a_tn
        # R6.1 / R7.5: decided when a total reaches the target and the totals differ
        decided = ((a_ts >= target) | (a_tn >= target)) & (a_ts != a_tn)
        won = a_ts > a_tn
        if goals_333:
            g_dec = np.zeros(alive.size, dtype=bool)
            g_won = np.zeros(alive.size, dtype=bool)
            g_tie = np.zeros(alive.size, dtype=bool)
            for goal in GOALS_333:
                if goal >= target:
                    break
                hs, hn = a_ts == goal, a_tn == goal
                open_ = ~(g_dec | g_tie)
                one = (hs ^ hn) & open_
                g_won[one] = hs[one]
                g_dec |= one
                g_tie |= hs & hn & open_
            decided = np.where(g_dec, True, decided & ~g_tie)
            won = np.where(g_dec, g_won, won)
        done = alive[decided]
        solo_won[done] = won[decided]
        length[done] = k + 1
        alive = alive[~decided]
    undecided = np.zeros(B * matches, dtype=bool)
    undecided[alive] = True
    return _per_pool({"p_solo": solo_won.astype(float), "deals": length.astype(float)}, undecided, B, matches)


def _per_pool(values: dict, undecided: np.ndarray, B: int, matches: int) -> dict:
    """Means over each pool's decided matches (NaN where none was decided) and undecided counts."""
    und = undecided.reshape(B, matches)
    n_done = (~und).sum(axis=1)
    out = {"undecided": und.sum(axis=1)}
    for key, v in values.items():
        v = v.reshape((B, matches) + v.shape[1:])
        w = (~und).reshape((B, matches) + (1,) * (v.ndim - 2))
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = (v * w).sum(axis=1) / np.maximum(n_done, 1).reshape((B,) + (1,) * (v.ndim - 2))
        mean[n_done == 0] = np.nan
        out[key] = mean
    return out


def simulate_rotating(moon: np.ndarray, sun: np.ndarray, rng: np.random.Generator, matches: int,
                      target: int = 1000, max_deals: int = 5000) -> dict:
    """Matches under the rotating rules (R7.4, R7.5) from pools of per-deal points.

    Players p0, p1, p2; deal k's solo is ``SOLO_ORDER[k % 3]`` (p0, p2, p1, ...). The solo
    is credited with the Moon points, the other two with the Sun points. After a deal in
    which some total reaches the target, the player with the highest total wins; a tie
    for the highest plays on.

    Args: as :func:`simulate_fixed_solo`.

    Returns:
        dict of arrays over the B pools: ``"p_win"`` (B, 3) share of decided matches won by
        p0, p1, p2; ``"totals"`` (B, 3) mean final totals; ``"deals"`` (B,); ``"undecided"`` (B,).
    """
    moon = np.asarray(moon, dtype=np.int64)
    sun = np.asarray(sun, dtype=np.int64)
    B, P = moon.shape

    def gains(k, b, j):
        solo = SOLO_ORDER[k % 3]  # every live match is at its deal k
        g = np.repeat(sun[b, j][:, None], 3, axis=1)
        g[:, solo] = moon[b, j]
        return g

    return simulate_highest_total(gains, 3, B, P, rng, matches, target, max_deals)


def simulate_highest_total(gains, lines: int, B: int, P: int, rng: np.random.Generator, matches: int,
                           target: int = 1000, max_deals: int = 5000) -> dict:
    """Matches between ``lines`` score lines: after a deal in which some total reaches the
    target, the strictly highest total wins; a tie for the highest plays on (R6.1, R7.5).

    Args:
        gains: ``gains(k, b, j)`` -> int array ``(n, lines)``: the points each line gets at
            deal ``k`` of the live matches whose pools are ``b`` and drawn outcomes ``j``
            (both int arrays ``(n,)``).
        B, P: pools, and outcomes per pool (``j`` is drawn uniformly from ``range(P)``).
        rng, matches, target, max_deals: as :func:`simulate_fixed_solo`.

    Returns:
        dict of arrays over the B pools: ``"p_win"`` (B, lines) share of decided matches
        won by each line; ``"totals"`` (B, lines) mean final totals; ``"deals"`` (B,) mean
        deals per decided match; ``"undecided"`` (B,).
    """
    pool = np.repeat(np.arange(B), matches)
    tot = np.zeros((B * matches, lines), dtype=np.int64)
    winner = np.full(B * matches, -1, dtype=np.int64)
    length = np.zeros(B * matches, dtype=np.int64)
    alive = np.arange(B * matches)
    for k in range(max_deals):
        if alive.size == 0:
            break
        j = rng.integers(P, size=alive.size)
        t = tot[alive] + gains(k, pool[alive], j)
        tot[alive] = t
        best = t.max(axis=1)
        decided = (best >= target) & ((t == best[:, None]).sum(axis=1) == 1)
        done = alive[decided]
        winner[done] = t[decided].argmax(axis=1)
        length[done] = k + 1
        alive = alive[~decided]
    undecided = np.zeros(B * matches, dtype=bool)
    undecided[alive] = True
    wins = (winner[:, None] == np.arange(lines)[None, :]).astype(float)
    return _per_pool({"p_win": wins, "totals": tot.astype(float), "deals": length.astype(float)},
                     undecided, B, matches)


def _percentile_ci(x: np.ndarray, confidence: float = 0.95) -> tuple[float, float]:
    x = np.asarray(x, dtype=float)
    x = x[~np.isnan(x)]
    if x.size == 0:
        return math.nan, math.nan
    a = (1 - confidence) / 2
    return float(np.quantile(x, a)), float(np.quantile(x, 1 - a))


def match_figures(moon: np.ndarray, sun: np.ndarray, seed: int, config: int, target: int = 1000,
                  boot: int = 200, matches: int = 1000) -> dict:
    """Match-level figures with bootstrap intervals (module docstring).

    Args:
        moon, sun: ``(N, 3)`` deal points per deal and play.
        seed, config: identify the random stream (reproducible); ``config`` is
            :func:`config_key` of the configuration.
        target: match target; boot: resamples of the N deals; matches: simulated per pool.

    Returns:
        dict with ``"fixed_solo"`` and ``"rotating"`` figures (estimates from the full deal
        set with ``50 * matches`` simulated matches, intervals from the bootstrap).
    """
    rng = np.random.default_rng(np.random.SeedSequence((int(seed), BOOT_STREAM, int(config))))
    N = moon.shape[0]
    full_m, full_s = moon.reshape(1, -1), sun.reshape(1, -1)
    idx = rng.integers(N, size=(boot, N))
    boot_m, boot_s = moon[idx].reshape(boot, -1), sun[idx].reshape(boot, -1)

    fx = simulate_fixed_solo(full_m, full_s, rng, 50 * matches, target)
    fb = simulate_fixed_solo(boot_m, boot_s, rng, matches, target)
    lo, hi = _percentile_ci(fb["p_solo"])
    fixed = {"p_solo_wins": float(fx["p_solo"][0]), "ci_low": lo, "ci_high": hi,
             "mean_deals": float(fx["deals"][0]), "matches": 50 * matches,
             "undecided": int(fx["undecided"][0])}

    rx = simulate_rotating(full_m, full_s, rng, 50 * matches, target)
    rb = simulate_rotating(boot_m, boot_s, rng, matches, target)
    rot = {"p_win": [float(v) for v in rx["p_win"][0]],
           "p_win_ci": [list(_percentile_ci(rb["p_win"][:, p])) for p in range(3)],
           "mean_totals": [float(v) for v in rx["totals"][0]],
           "mean_totals_ci": [list(_percentile_ci(rb["totals"][:, p])) for p in range(3)],
           "mean_deals": float(rx["deals"][0]), "matches": 50 * matches,
           "undecided": int(rx["undecided"][0])}
    # goals_333 (R6.2), fixed solo: its own random stream, so the figures above do not move
    grng = np.random.default_rng(np.random.SeedSequence((int(seed), BOOT_STREAM, int(config), GOALS_333[0])))
    gidx = grng.integers(N, size=(boot, N))
    gx = simulate_fixed_solo(full_m, full_s, grng, 50 * matches, target, goals_333=True)
    gb = simulate_fixed_solo(moon[gidx].reshape(boot, -1), sun[gidx].reshape(boot, -1), grng, matches, target,
                             goals_333=True)
    glo, ghi = _percentile_ci(gb["p_solo"])
    goals = {"p_solo_wins": float(gx["p_solo"][0]), "ci_low": glo, "ci_high": ghi,
             "mean_deals": float(gx["deals"][0]), "matches": 50 * matches, "undecided": int(gx["undecided"][0])}
    return {"target": target, "bootstrap_resamples": boot, "matches_per_resample": matches,
            "fixed_solo": fixed, "rotating": rot, "fixed_solo_goals_333": goals}


# ---------------------------------------------------------------------------------
# figures
# ---------------------------------------------------------------------------------

def deal_figures(moon: np.ndarray, sun: np.ndarray) -> dict:
    """Deal-level figures (module docstring) from ``(N, 3)`` Moon and Sun deal points."""
    moon = np.asarray(moon, dtype=float)
    sun = np.asarray(sun, dtype=float)
    diff = (moon - sun).mean(axis=1)  # per deal, the 3 plays averaged (paired by deal)
    out = {}
    for key, x in (("moon", moon.mean(axis=1)), ("sun", sun.mean(axis=1)), ("diff", diff)):
        m, lo, hi = mean_ci(x)
        out[key] = {"mean": m, "ci_low": lo, "ci_high": hi}
    out["diff"]["sd_per_deal"] = float(diff.std(ddof=1)) if diff.size > 1 else math.nan
    plays = moon.size
    k = int((moon > sun).sum())
    p, lo, hi = wilson_ci(k, plays)
    out["p_moon_outscores"] = {"p": p, "ci_low": lo, "ci_high": hi, "plays": plays,
                               "moon_wins": k, "ties": int((moon == sun).sum()),
                               "sun_wins": int((moon < sun).sum())}
    # per play position (solo hand = dealt hand of seat 0, 3, 1): a check that rotation evens out
    out["diff_by_play"] = [float(v) for v in (moon - sun).mean(axis=0)]
    return out


def verdict(fig: dict, label: str, n: int) -> str:
    """One sentence with the answer and its uncertainty for one configuration."""
    d = fig["diff"]
    fx = fig["matches"]["fixed_solo"]
    if math.isnan(d["ci_low"]):
        edge = "too few deals for an interval"
    elif d["ci_low"] > 0:
        edge = "the solo (Moon) side has the edge"
    elif d["ci_high"] < 0:
        edge = "the Sun side has the edge"
    else:
        edge = "no clear edge at this N (the interval includes 0)"
    small = (f" With fewer than {MIN_BOOTSTRAP_DEALS} deals the bootstrap match interval is not reliable "
             f"(too narrow); use more deals." if n < MIN_BOOTSTRAP_DEALS else "")
    return (f"{label}: {edge}: Moon − Sun = {d['mean']:+.1f} deal points per deal "
            f"(95% CI {d['ci_low']:+.1f} to {d['ci_high']:+.1f}; N = {n} deals × 3 plays); "
            f"the solo wins a fixed-solo match to {fig['matches']['target']} with probability "
            f"{fx['p_solo_wins']:.2f} (95% CI {fx['ci_low']:.2f} to {fx['ci_high']:.2f}).{small}")


def table_rows(results: list[dict]) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the summary table (one row per configuration)."""
    header = ["agents (solo / Sun)", "N", "Moon pts/deal", "Sun pts/deal", "Moon − Sun", "P(Moon > Sun) deal",
              "P(solo wins) fixed_solo", "rotating P(win) p0 / p1 / p2"]
    rows = []
    for r in results:
        f = r["figures"]
        pm = f["p_moon_outscores"]
        fx = f["matches"]["fixed_solo"]
        rot = f["matches"]["rotating"]
        rows.append([r["label"], r["deals"], fmt_ci(**_ci(f["moon"])), fmt_ci(**_ci(f["sun"])),
                     fmt_ci(**_ci(f["diff"]), signed=True), fmt_ci(pm["p"], pm["ci_low"], pm["ci_high"], 3),
                     fmt_ci(fx["p_solo_wins"], fx["ci_low"], fx["ci_high"], 3),
                     " / ".join(f"{p:.3f}" for p in rot["p_win"])])
    return header, rows


def _ci(d: dict) -> dict:
    return {"mean": d["mean"], "low": d["ci_low"], "high": d["ci_high"]}


TERMINAL_WIDTH = 100
"""Widest line ``twilight edge`` prints (characters); the files keep the wide table."""

STRENGTH_NOTE = ("The verdict depends on how well the agents play: at heuristic strength the solo has a small "
                 "edge, at strong play (pimc and above) the Sun side leads, by about 10 deal points per deal at "
                 "the strongest agents measured (3,600 held-out deals). Figures and commands: docs/RESULTS.md.")
"""Printed after every team-scoring run: the answer at strong play, with where to read it."""


def terminal_lines(results: list[dict]) -> list[str]:
    """What ``twilight edge`` prints at the end: the summary table transposed (one column
    per configuration, so a line stays about 25 + 23 characters per configuration wide), the
    answers and the rotating-solo figures wrapped at :data:`TERMINAL_WIDTH`, and
    :data:`STRENGTH_NOTE`."""
    import textwrap

    header, rows = table_rows(results)
    columns = [[str(x) for x in row] for row in rows]
    out = [line.rstrip() for line in text_table(["", *[c[0] for c in columns]],
                                                [[header[i], *[c[i] for c in columns]]
                                                 for i in range(1, len(header))]).splitlines()]
    out.append("")
    for text in [r["answer"] for r in results] + [rotating_line(r) for r in results] + [STRENGTH_NOTE]:
        out += textwrap.wrap(text, TERMINAL_WIDTH, subsequent_indent="  ", break_on_hyphens=False)
    return out


def plot(results: list[dict], path: str, seed: int | None = None) -> None:
    """Write ``edge.png`` (:func:`edge_figure`)."""
    fig = edge_figure(results, seed)  # selects the Agg backend before pyplot is imported here
    import matplotlib.pyplot as plt

    fig.savefig(path, dpi=110)
    plt.close(fig)


def edge_figure(results: list[dict], seed: int | None = None):
    """The figure of ``edge.png``: histogram of per-deal Moon − Sun (deal counts, integer
    ticks) and mean ± 95% CI per configuration, titled with the agents, the seed and N.

    Returns:
        a ``matplotlib.figure.Figure`` (close it with ``plt.close``).
    """
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2), gridspec_kw={"width_ratios": [3, 2]})
    diffs = [(np.array(r["moon_points"]) - np.array(r["sun_points"])).mean(axis=1) for r in results]
    # one set of 10-point bins for every configuration: equal widths, comparable histograms
    # (per-deal values are thirds of integers, so each bin holds the same count of them)
    both = np.concatenate(diffs)
    edges = np.arange(np.floor(both.min() / 10) * 10, np.ceil(both.max() / 10) * 10 + 10.001, 10.0)
    for r, diff in zip(results, diffs):
        ax1.hist(diff, bins=edges, histtype="step", linewidth=1.5, label=f"{r['label']} (N={len(diff)})")
    ax1.axvline(0, color="grey", linewidth=0.8)
    ax1.set_xlabel("Moon − Sun deal points per deal (mean of the 3 plays)")
    ax1.set_ylabel("deals")
    ax1.yaxis.set_major_locator(MaxNLocator(integer=True))  # deal counts: no fractional ticks at small N
    ax1.set_title("Distribution over deals")
    ax1.legend(fontsize=8)
    labels = [r["label"] for r in results]
    y = np.arange(len(results))
    for key, color, off in (("diff", "C3", 0.0), ("moon", "C0", 0.2), ("sun", "C1", -0.2)):
        m = np.array([r["figures"][key]["mean"] for r in results])
        lo = np.array([r["figures"][key]["ci_low"] for r in results])
        hi = np.array([r["figures"][key]["ci_high"] for r in results])
        err = np.nan_to_num(np.vstack([m - lo, hi - m]))
        name = {"diff": "Moon − Sun", "moon": "Moon side", "sun": "Sun side"}[key]
        ax2.errorbar(m, y + off, xerr=err, fmt="o", color=color, capsize=3, label=name)
    ax2.axvline(0, color="grey", linewidth=0.8)
    ax2.set_yticks(y)
    ax2.set_yticklabels(labels, fontsize=8)
    ax2.set_ylim(-0.6, len(results) - 0.4)
    ax2.set_xlabel("deal points per deal (mean ± 95% CI)")
    ax2.set_title("Mean ± 95% CI")
    ax2.legend(fontsize=8, loc="best")
    n = ", ".join(sorted({str(r["deals"]) for r in results}))
    agents = "; ".join(r["label"] for r in results)
    fig.suptitle(f"Solo (Moon) vs Sun side, 3 players: {agents}"
                 + (f", seed {seed}" if seed is not None else "") + f", N = {n} deals × 3 plays")
    fig.tight_layout()
    return fig


def configurations(specs: list[str], solo: str | None, sun: str | None) -> list[tuple[str, str]]:
    """(solo spec, Sun spec) pairs to run: each spec on all chairs, then the mixed pair if given."""
    configs = [(s, s) for s in specs]
    if solo or sun:
        base = specs[0] if specs else DEFAULT_SPEC
        configs.append((solo or base, sun or base))
    if not configs:
        configs = [(DEFAULT_SPEC, DEFAULT_SPEC)]
    return configs


def config_key(solo: str, sun: str) -> int:
    """Stream key of a configuration, from its two specs (CRC-32 of ``solo``, NUL, ``sun``):
    a configuration's agents and bootstrap draw the same numbers whatever other
    configurations are listed with it, and in whatever order."""
    return zlib.crc32(f"{solo}\x00{sun}".encode())


def study(configs: list[tuple[str, str]], deals, seed: int, workers: int, target: int = 1000,
          boot: int = 200, matches: int = 1000, progress: bool = True,
          checkpoint: Checkpoint | None = None, records=None) -> list[dict]:
    """Play and analyse every configuration; returns one result dict per configuration.

    With a ``checkpoint``, deals it holds are not played again and each finished deal is
    recorded in it (written every ``CHECKPOINT_EVERY_S`` seconds). With ``records`` (a
    folder, made if missing), every play's deal record is written to
    ``records/edge.records.jsonl.gz`` (:data:`RECORDS_FILE`).

    Each dict: ``label``, ``solo_spec``, ``sun_spec``, ``deals`` (N), ``figures`` (deal
    figures plus ``"matches"``), ``answer`` (a sentence), ``moon_points`` and
    ``sun_points`` (N × 3 lists, deal points by deal and play), ``play_seconds`` (time
    spent playing the configuration's deals over every sitting of the run: the
    checkpoint keeps the time of earlier sittings) and ``play_seconds_this_sitting``.
    """
    results = []
    writer = None
    if records is not None:
        from twilight_env.records.game_records import RecordWriter

        os.makedirs(records, exist_ok=True)
        writer = RecordWriter(os.path.join(records, RECORDS_FILE))
    try:
        for solo, sun in configs:
            t0 = time.time()
            key = config_key(solo, sun)
            done, record = None, None
            if checkpoint is not None:
                done = checkpoint.finished(key)
                record = (lambda r, key=key: checkpoint.record(key, *r))
                checkpoint.start(key)
            moon, sunp = play_config(deals, solo, sun, seed, key, workers, progress, done, record,
                                     writer.write if writer is not None else None)
            secs = time.time() - t0
            total = secs
            if checkpoint is not None:
                checkpoint.stop()
                total = checkpoint.play_seconds(key)
            fig = deal_figures(moon, sunp)
            fig["matches"] = match_figures(moon, sunp, seed, key, target, boot, matches)
            label = solo if solo == sun else f"{solo} / {sun}"
            results.append({"label": label, "solo_spec": solo, "sun_spec": sun, "deals": len(deals),
                            "figures": fig, "answer": verdict(fig, label, len(deals)),
                            "moon_points": moon.tolist(), "sun_points": sunp.tolist(), "play_seconds": total,
                            "play_seconds_this_sitting": secs})
    finally:  # the records so far stay readable after Ctrl-C or an error
        if writer is not None:
            writer.close()
    return results


def goals_line(r: dict) -> str:
    """One sentence: P(solo wins) of a fixed-solo match under the ``goals_333`` variant (R6.2)."""
    g = r["figures"]["matches"]["fixed_solo_goals_333"]
    return (f"{r['label']}, goals_333 (R6.2, same deals): the solo wins a fixed-solo match with probability "
            f"{g['p_solo_wins']:.3f} (95% CI {g['ci_low']:.3f} to {g['ci_high']:.3f}), {g['mean_deals']:.1f} deals "
            "per match.")


def rotating_line(r: dict) -> str:
    """One sentence on a configuration's rotating-rules figures (R7.4, R7.5)."""
    rot = r["figures"]["matches"]["rotating"]
    return (f"{r['label']}, rotating solo (p0, p2, p1, … as R7.4 passes the solo on): mean final totals "
            f"p0 / p1 / p2 = " + " / ".join(f"{t:.0f}" for t in rot["mean_totals"])
            + f", {rot['mean_deals']:.1f} deals per match."
            + ("" if r["solo_spec"] == r["sun_spec"] else
               f" With mixed strengths the agents keep their roles: {r['solo_spec']} plays every "
               f"player's solo deals and {r['sun_spec']} every Sun deal, so p0 / p1 / p2 differ only "
               "by their places in the rotation."))


def write_outputs(folder: str, doc: dict) -> dict[str, str]:
    """Write edge.json, edge.md and edge.png; returns their paths by kind."""
    results = doc["results"]
    paths = {k: os.path.join(folder, f"edge.{k}") for k in ("json", "md", "png")}
    with open(paths["json"], "w") as f:
        json.dump(doc, f, indent=1)
    header, rows = table_rows(results)
    lines = [f"# Solo vs Sun side, 3 players (seed {doc['seed']}, N = {doc['deals']} deals × 3 plays)", "",
             markdown_table(header, rows), "",
             "Deal points per deal, mean [95% CI]. Moon − Sun: each deal's three plays (one per solo hand) "
             "averaged, Student-t interval over deals; P(Moon > Sun): share of plays, Wilson interval; match "
             f"figures: simulated matches to {doc['target']}, percentile bootstrap over deals.", ""]
    lines += [f"- {r['answer']}" for r in results]
    lines += [f"- {rotating_line(r)}" for r in results]
    lines += [f"- {goals_line(r)}" for r in results if "fixed_solo_goals_333" in r["figures"]["matches"]]
    lines += ["", STRENGTH_NOTE]
    runner = doc.get("runner", "local")
    where = f"with {doc['workers']} worker(s)" if runner == "local" else f"on {runner}"
    lines.append(f"\nRun time {doc['run_seconds']:.1f} s {where}.")
    with open(paths["md"], "w") as f:
        f.write("\n".join(lines) + "\n")
    plot(results, paths["png"], doc["seed"])
    return paths


MAX_TARGET = 100_000
"""Largest match target a study simulates (R6.1): a match to 100,000 lasts about 1,200 deals."""
MAX_BOOT = 10_000
"""Most bootstrap resamples of the deal set."""
MAX_MATCHES = 100_000
"""Most simulated matches per resample."""
MAX_SIMULATED = 10_000_000
"""Most simulated matches per configuration, ``boot × matches`` (about 40 bytes of memory
each while they run; the default 200 × 1,000 is 200,000)."""


def check_match_settings(target, boot, matches, name=lambda k: f"--{k}") -> None:
    """Refuse match-simulation settings out of range before anything is played.

    Args:
        target, boot, matches: the settings (ints).
        name: the field name for a key (``--boot`` on the command line, ``settings 'boot'``
            in a checkpoint).

    Raises:
        ValueError: naming the field and the allowed range (:data:`MAX_TARGET`,
            :data:`MAX_BOOT`, :data:`MAX_MATCHES`, :data:`MAX_SIMULATED`).
    """
    check_int(target, name("target"), 1, MAX_TARGET)
    check_int(boot, name("boot"), 1, MAX_BOOT)
    check_int(matches, name("matches"), 1, MAX_MATCHES)
    if boot * matches > MAX_SIMULATED:
        raise ValueError(f"{name('boot')} × {name('matches')} must be at most {MAX_SIMULATED:,} simulated matches "
                         f"per configuration (about 40 bytes each), got {boot:,} × {matches:,} = {boot * matches:,}")


def prepare_run(checkpoint_cls, name: str, specs, deals, seed, out, solo, sun, deals_file, save_deals, target,
                boot, matches, resume, force, extra_settings: dict | None = None, ray: str | None = None) -> tuple:
    """The settings, deals, output folder and checkpoint of a new or resumed edge-type run
    (shared by :func:`run_study` and :func:`twilight_env.experiments.edge.individual_edge.run_study`).

    A resumed run (``resume``, a folder) takes everything from ``checkpoint_cls.load``; a new
    one checks the options, draws or reads the deals, makes the folder
    (``out/{name}__{seed}__{unixtime}`` by default) and writes the first checkpoint, so it is
    resumable from the start.

    Returns:
        ``(checkpoint, configs, seed, target, boot, matches, deals, deals_meta, folder)``.

    Raises:
        ValueError: as :func:`run_study`.
    """
    seed = check_seed(seed)
    if resume is not None:
        ckpt = checkpoint_cls.load(resume)
        st = ckpt.settings
        configs = [tuple(c) for c in st["configs"]]
        check_specs(sorted({x for c in configs for x in c}))
        return (ckpt, configs, int(st["seed"]), int(st["target"]), int(st["boot"]), int(st["matches"]), ckpt.deals,
                st["deals_source"], resume)
    target = 1000 if target is None else target
    boot = 200 if boot is None else boot
    matches = 1000 if matches is None else matches
    configs = configurations(list(specs or []), solo, sun)
    check_specs(list(specs or []))
    for flag, spec in (("--solo", solo), ("--sun", sun)):
        if spec is not None:
            check_specs([spec], flag)
    n = deals
    if n is None and not deals_file:
        n = DEFAULT_DEALS
    if n is not None and n < 2:
        raise ValueError(f"--deals must be at least 2 (intervals need two deals), got {n}")
    check_match_settings(target, boot, matches, lambda k: f"--{k}")
    if out:
        check_new_folder(out, "--out", force)
    if save_deals:
        check_new_file(save_deals, "--save-deals", force)
    deal_list, meta = deal_set(n, seed, 3, deals_file, save_deals)
    seed = run_seed(seed, meta)
    prepare_runner(ray)  # a refused --ray address makes no folder
    folder = out_dir(out, name, seed, force)
    settings = {"configs": [list(c) for c in configs], "seed": seed, "target": target, "boot": boot,
                "matches": matches, "deals_source": meta, **(extra_settings or {})}
    ckpt = checkpoint_cls(folder, settings, [[list(h) for h in d] for d in deal_list])
    ckpt.write()  # the folder is resumable from the start
    return ckpt, configs, seed, target, boot, matches, deal_list, meta, folder


def run_study(specs: list[str] | None = None, deals: int | None = None, seed: int | None = None, workers: int = 1,
              out: str | None = None, solo: str | None = None, sun: str | None = None,
              deals_file: str | None = None, save_deals: str | None = None, target: int | None = None,
              boot: int | None = None, matches: int | None = None, progress: bool = True, verbose: bool = True,
              resume: str | None = None, force: bool = False, records: str | None = None,
              ray: str | None = None) -> str:
    """Run the whole study (what ``twilight edge`` does) and return the output folder.

    Args: as the command-line options (module docstring); ``specs`` None or empty means
    the default agent unless ``solo``/``sun`` are given; ``deals`` None means
    ``DEFAULT_DEALS`` or the whole deal file; ``seed`` None means the seed saved in
    ``deals_file``, else 0; ``target``, ``boot``, ``matches`` None mean 1000, 200, 1000. The output folder is made first and holds
    a checkpoint (:class:`Checkpoint`) while deals are played; ``resume`` (a folder)
    finishes such a run with the settings saved in it (only ``workers``, ``progress`` and
    ``verbose`` may be given with it). Ctrl-C (or SIGTERM, as the ``twilight`` command
    raises it) writes the checkpoint, prints one line saying how to resume, and re-raises.
    ``out`` that holds files and ``save_deals`` that exists are refused unless ``force``.
    ``records`` (a folder): write every play's deal record to ``records/edge.records.jsonl.gz``.
    ``ray`` (an address, see :mod:`twilight_env.util.distributed`) plays the deals on a Ray
    cluster instead of ``workers`` local processes, with the same per-deal points; a run
    may be resumed on either runner.

    Raises:
        ValueError: bad agent spec (listing the valid agents), bad number, bad deal file,
            an unreadable or malformed checkpoint, settings given with ``resume``, or an
            output path that exists (without ``force``) or cannot be made.
    """
    t0 = time.time()
    workers = check_workers(workers)
    seed = check_seed(seed)
    if resume is not None:
        resume_conflicts((("specs", specs), ("--deals", deals), ("--seed", seed), ("--out", out),
                          ("--solo", solo), ("--sun", sun), ("--deals-file", deals_file),
                          ("--save-deals", save_deals), ("--target", target), ("--boot", boot),
                          ("--matches", matches), ("--force", force), ("--records", records)),
                         allowed="--workers, --ray, --quiet and --deals (which grows the run)")
    if records is not None:  # before any folder is made or deal played
        check_records_folder(records, RECORDS_FILE, "--records", force)
    ckpt, configs, seed, target, boot, matches, deal_list, meta, folder = prepare_run(
        Checkpoint, "edge", specs, deals, seed, out, solo, sun, deals_file, save_deals, target, boot, matches,
        resume, force, ray=ray)
    try:
        with ray_runner(ray):
            results = study(configs, deal_list, seed, workers, target, boot, matches, progress=progress,
                            checkpoint=ckpt, records=records)
    except KeyboardInterrupt as e:
        print(ckpt.interrupted(e), file=sys.stderr)
        raise
    doc = {"seed": seed, "deals": len(deal_list), "deals_source": meta, "target": target, "boot": boot,
           "matches": matches,
           "configs": [{"solo": s, "sun": u} for s, u in configs], "workers": workers,
           "runner": runner_label(ray),
           "git": git_hash(), "run_seconds": ckpt.elapsed + time.time() - t0,
           "resumed": resume is not None, "results": results}
    paths = write_outputs(folder, doc)
    ckpt.remove()
    if verbose:
        print("\n".join(terminal_lines(results)))
        where = f"{workers} worker(s)" if ray is None else f"on Ray ({ray})"
        print(f"\nRun time {doc['run_seconds']:.1f} s, {where}. Files:")
        for kind in ("md", "json", "png"):
            print(f"  {paths[kind]}")
    return folder


def load_result(folder: str) -> dict:
    """The ``edge.json`` document of an output folder.

    Raises:
        ValueError: if the folder holds no readable edge.json.
    """
    path = os.path.join(folder, "edge.json")
    try:
        doc = read_json(path, "edge output")
    except JsonFileError as e:
        raise ValueError(f"no readable edge output in {folder!r}: {e}") from None
    if not isinstance(doc, dict):
        raise ValueError(f"no readable edge output in {folder!r}: {path!r} holds a JSON {type(doc).__name__}, "
                         "not an object")
    return doc


def grow_run(folder: str, deals: int) -> None:
    """Grow the edge run in ``folder`` to ``deals`` deals, keeping every deal it has played.

    A long study is spread over sittings this way: ``twilight edge --resume FOLDER
    --deals N`` after a finished (or interrupted) run of fewer deals plays only the new
    deals. The deals of a seed are a fixed sequence (:func:`twilight_env.records.dealsets.generate_deals`:
    the first n of N deals are the n deals of that seed) and every deal is seeded by
    (seed, deal index, configuration), so the grown run ends with the figures of one
    uninterrupted run of ``deals`` deals. A finished run's results move into a checkpoint
    (:class:`Checkpoint`, written first and atomically) and its ``edge.json`` is renamed
    ``edge.previous.json``; its run time carries over. Runs whose deals came from a file
    cannot grow (the file's order is the user's).

    Args:
        folder: the output folder of an ``edge`` run (finished or interrupted).
        deals: the new number of deals N (more than the run holds).

    Raises:
        ValueError: no run in the folder, deals from a file, N not larger than the run's
            deals, or deals that disagree with the seed's sequence.
    """
    if isinstance(deals, bool) or not isinstance(deals, int) or deals < 2:
        raise ValueError(f"--deals must be at least 2, got {deals!r}")
    ckpt_path = os.path.join(folder, CHECKPOINT)
    if os.path.isfile(ckpt_path):
        ckpt = Checkpoint.load(folder)
        settings, old_deals, done, elapsed = ckpt.settings, ckpt.deals, ckpt.done, ckpt.elapsed
        seconds = ckpt.seconds
    elif os.path.isfile(os.path.join(folder, "edge.json")):
        doc = load_result(folder)
        try:
            settings = {"configs": [[c["solo"], c["sun"]] for c in doc["configs"]], "seed": int(doc["seed"]),
                        "target": int(doc["target"]), "boot": int(doc.get("boot", 200)),
                        "matches": int(doc.get("matches", 1000)), "deals_source": doc["deals_source"]}
            old_deals = None
            done = {}
            for r in doc["results"]:
                key = str(config_key(r["solo_spec"], r["sun_spec"]))
                done[key] = {i: ([int(x) for x in m], [int(x) for x in u])
                             for i, (m, u) in enumerate(zip(r["moon_points"], r["sun_points"]))}
            elapsed = float(doc.get("run_seconds", 0.0))
            seconds = {str(config_key(r["solo_spec"], r["sun_spec"])): float(r.get("play_seconds", 0.0))
                       for r in doc["results"]}
            n_old = int(doc["deals"])
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise ValueError(f"{os.path.join(folder, 'edge.json')!r} is not a finished edge run's output "
                             f"({type(e).__name__}: {e}); it cannot grow") from None
    else:
        raise ValueError(f"no edge run in {folder!r} (neither {CHECKPOINT} nor edge.json): nothing to grow")
    source = settings["deals_source"]
    if source.get("source") != "seed":
        raise ValueError(f"the run in {folder!r} plays deals from a file ({source.get('path')!r}); only runs of "
                         "generated deals (--seed) can grow with --resume --deals")
    if old_deals is not None:
        n_old = len(old_deals)
    if deals <= n_old:
        raise ValueError(f"the run in {folder!r} holds {n_old} deals; --deals with --resume grows it, so give "
                         f"more than {n_old} (got {deals})")
    new_deals, _ = deal_set(deals, int(settings["seed"]), 3)
    new_deals = [[list(h) for h in d] for d in new_deals]
    if old_deals is not None and [[list(h) for h in d] for d in old_deals] != new_deals[:n_old]:
        raise ValueError(f"the deals in {ckpt_path!r} are not the first {n_old} deals of seed {settings['seed']}; "
                         "the run cannot grow")
    grown = Checkpoint(folder, settings, new_deals, done, elapsed, seconds)
    grown.write()
    previous = os.path.join(folder, "edge.json")
    if os.path.isfile(previous):
        os.replace(previous, os.path.join(folder, "edge.previous.json"))


def parse_rung_deals(items: list[str] | None) -> dict[str, int]:
    """``["SPEC=N", ...]`` (the spec may hold ``=`` itself: the last one splits) -> ``{SPEC: N}``.

    Raises:
        ValueError: an item without ``=N`` or with a non-integer N.
    """
    out = {}
    for item in items or []:
        spec, sep, n = item.rpartition("=")
        if not sep or not spec or not n.strip().lstrip("-").isdigit():
            raise ValueError(f"--rung-deals takes SPEC=N (N deals for that rung), got {item!r}")
        out[spec.strip()] = int(n)
    return out


def _individual_folder(folder: str) -> bool:
    from twilight_env.experiments.edge.individual_edge import is_individual_run

    return is_individual_run(folder) and not os.path.isfile(os.path.join(folder, CHECKPOINT))


def _run_individual(args) -> int:
    """``--scoring individual`` (or ``--resume`` of such a run): :mod:`twilight_env.experiments.edge.individual_edge`."""
    given = [name for name, v in (("--ladder", args.ladder), ("--rung-deals", args.rung_deals),
                                  ("--off-ladder", getattr(args, "off_ladder", None)),
                                  ("--records", getattr(args, "records", None)), ("--save-deals", args.save_deals))
             if v not in (None, [])]
    if given:
        raise ValueError(f"--scoring individual does not take {', '.join(given)}; it takes agent specs, --solo, "
                         "--sun, --deals, --seed, --deals-file, --workers, --out, --force, --target, --boot, "
                         "--matches, --quiet, --ray and --resume")
    from twilight_env.experiments.edge.individual_edge import grow_run as grow_individual, run_study as run_individual

    deals = args.deals
    if args.resume is not None and deals is not None:
        grow_individual(args.resume, deals)
        deals = None

    try:
        run_individual(args.specs, deals, args.seed, args.workers, args.out, args.solo, args.sun,
                       args.deals_file, args.target, args.boot, args.matches, progress=not args.quiet,
                       resume=args.resume, force=args.force, ray=args.ray)
    except KeyboardInterrupt as e:
        return interrupt_status(e)
    return 0


def _run_compare(args) -> int:
    """``--compare A B``: the paired difference of two finished runs (:func:`twilight_env.experiments.edge.edge_strength.compare_runs`)."""
    given = [name for name, v in (("--deals", args.deals), ("--seed", args.seed), ("--out", args.out),
                                  ("--solo", args.solo), ("--sun", args.sun), ("--deals-file", args.deals_file), ("--save-deals", args.save_deals),
                                  ("--force", args.force or None), ("--target", args.target), ("--boot", args.boot),
                                  ("--matches", args.matches), ("--resume", args.resume),
                                  ("--records", getattr(args, "records", None)), ("--ladder", args.ladder),
                                  ("--rung-deals", args.rung_deals), ("--off-ladder", getattr(args, "off_ladder", None)),
                                  ("--scoring", getattr(args, "scoring", None)), ("--ray", getattr(args, "ray", None)))
             if v not in (None, [])]
    if args.specs:
        raise ValueError(f"--compare takes exactly two folders, FOLDER_A FOLDER_B; got {2 + len(args.specs)} "
                         f"({', '.join([*args.compare, *args.specs])})")
    if given:
        raise ValueError(f"--compare reads two finished runs and plays nothing; do not give {', '.join(given)} with "
                         "it (it takes its two folders only)")
    from twilight_env.experiments.edge.edge_strength import compare_line, compare_runs

    print(compare_line(compare_runs(*args.compare)))
    return 0


def run(args) -> int:
    if getattr(args, "compare", None) is not None:
        return _run_compare(args)
    scoring = getattr(args, "scoring", None)
    if args.resume is not None:
        if scoring is not None:
            raise ValueError("--resume keeps the run's settings, its scoring among them; do not give --scoring "
                             "with it (only --workers, --ray, --quiet and --deals may be given)")
        if not (os.path.isdir(args.resume) and (_individual_folder(args.resume) or os.path.isfile(
                os.path.join(args.resume, CHECKPOINT)) or os.path.isfile(os.path.join(args.resume, "edge.json")))):
            raise ValueError(f"no edge run in {args.resume!r}: --resume takes the output folder of a twilight edge "
                             f"run, which holds {CHECKPOINT} (or individual.checkpoint.json) while it is unfinished")
    if scoring == "individual" or (args.resume is not None and scoring is None and _individual_folder(args.resume)):
        return _run_individual(args)
    if args.rung_deals and args.ladder is None:
        raise ValueError("--rung-deals goes with --ladder")
    if getattr(args, "off_ladder", None) and args.ladder is None:
        raise ValueError("--off-ladder goes with --ladder")
    if args.ladder is not None:
        given = [name for name, v in (("specs", args.specs), ("--solo", args.solo), ("--sun", args.sun),
                                      ("--seed", args.seed), ("--deals-file", args.deals_file),
                                      ("--save-deals", args.save_deals), ("--target", args.target),
                                      ("--resume", args.resume), ("--records", getattr(args, "records", None)),
                                      ("--force", args.force or None)) if v not in (None, [])]
        if given:
            raise ValueError(f"--ladder plays the ladder's rungs on the held-out deal set; do not give "
                             f"{', '.join(given)} with it")
        if args.deals is None:
            raise ValueError("--ladder needs --deals N (deals per rung)")
        from twilight_env.experiments.edge.edge_strength import run_edge_ladder

        try:
            run_edge_ladder(args.ladder, args.deals, workers=args.workers, out=args.out, progress=not args.quiet,
                            ray=args.ray, boot=args.boot, matches=args.matches,
                            rung_deals=parse_rung_deals(args.rung_deals), off_ladder=args.off_ladder)
        except KeyboardInterrupt:
            return 130
        return 0
    deals = args.deals
    if args.resume is not None and deals is not None:
        grow_run(args.resume, deals)
        deals = None
    try:
        run_study(args.specs, deals, args.seed, args.workers, args.out, args.solo, args.sun,
                  args.deals_file, args.save_deals, args.target, args.boot, args.matches,
                  progress=not args.quiet, resume=args.resume, force=args.force,
                  records=getattr(args, "records", None), ray=args.ray)
    except KeyboardInterrupt as e:
        return interrupt_status(e)
    return 0
