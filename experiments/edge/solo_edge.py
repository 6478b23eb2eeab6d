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

This module plays and reports the team-scoring study (:func:`run_study`, taking a
:class:`~twilight_env.experiments.edge.core.StudySettings`); the settings, checkpoint
format and seating are in :mod:`~twilight_env.experiments.edge.core`, the match
simulations in :mod:`~twilight_env.experiments.edge.matches`, and the command line, one
table of modes, in :mod:`~twilight_env.experiments.edge.command`.
"""

from __future__ import annotations

import math
import os
import sys
import time
from typing import Sequence

import numpy as np

from twilight_env.rules.engine import State
from twilight_env.records.game_records import check_records_folder
from twilight_env.records.dealsets import deal_set
from twilight_env.util.atomic import save_figure, write_json, write_text
from twilight_env.util.distributed import ray_runner, runner_label
from twilight_env.util.docs import doc_reference
from twilight_env.util.report import fmt_number

from twilight_env.experiments.common import (check_score_pair, check_shipped_weights, fmt_ci, git_hash, lockstep_ok,
                                             markdown_table, mean_ci, play_lockstep, play_seeded, run_tasks, text_table,
                                             wilson_ci)
from twilight_env.experiments.edge.core import (CHECKPOINT, DEFAULT_DEALS, DEFAULT_SPEC,  # noqa: F401 (public names)
                                                MIN_BOOTSTRAP_DEALS, RESULT, ROTATIONS, PreparedRun,
                                                StudyCheckpoint, StudySettings, check_grow, config_key,
                                                configurations, deal_diffs, load_result, prepare_run, rotated_deal,
                                                TERMINAL_WIDTH)
from twilight_env.experiments.edge import matches as _matches
from twilight_env.experiments.edge.matches import (BOOT_STREAM, GOALS_333, MAX_BOOT,  # noqa: F401 (public names)
                                                   MAX_MATCHES, MAX_SIMULATED, MAX_TARGET, SOLO_ORDER,
                                                   check_match_settings, percentile_ci)

# The vectorised match rules are written in experiments/edge/matches.py; these names stay
# here for the callers and pages that name them in this module.
simulate_fixed_solo = _matches.simulate_fixed_solo
simulate_rotating = _matches.simulate_rotating
simulate_highest_total = _matches.simulate_highest_total
match_figures = _matches.match_figures
_percentile_ci = percentile_ci

# ---------------------------------------------------------------------------------
# playing
# ---------------------------------------------------------------------------------

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


LOCKSTEP_BLOCK = 32
"""Deals per task when the agents decide in batches (:func:`_play_edge_block`)."""


def _play_edge_block(task) -> list[tuple]:
    """Worker: :func:`_play_edge_deal` for a block of deals, all their plays side by side
    (:func:`~twilight_env.experiments.common.play_lockstep`: a batched agent such as ``policy``
    or ``neural`` decides for every play at once). The same results as one deal at a time:
    every seat of every play keeps its own random stream."""
    block, solo, sun, seed, config, *keep = task
    games = []
    for deal_index, deal in block:
        for r in range(3):
            games.append((State.from_deal(rotated_deal(deal, r), 0, 3), [solo, sun, solo, sun], seed, deal_index,
                          3 * config + r))
    states = play_lockstep(games)
    out = []
    for k, (deal_index, _) in enumerate(block):
        plays = states[3 * k:3 * k + 3]
        scores = [st.side_scores() for st in plays]  # side 0 = seats 0, 2 = Moon in 3 players
        item = (deal_index, [m for m, _ in scores], [u for _, u in scores])
        if keep and keep[0]:
            from twilight_env.records.game_records import deal_record

            item += ([deal_record(st, None, agents=[solo, sun, solo, sun], seed=seed,
                                  meta={"study": "edge", "solo_spec": solo, "sun_spec": sun, "config_key": config,
                                        "deal": deal_index, "play": r}) for r, st in enumerate(plays)],)
        out.append(item)
    return out


def play_config(deals, solo: str, sun: str, seed: int, config: int, workers: int,
                progress: bool = True, done: dict | None = None,
                on_result=None, records=None, timing: dict | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Play every deal three times (one per solo hand) with the given agents.

    Args:
        done: ``{deal index: (moon points, sun points)}`` of deals already played (from a
            checkpoint); they are not played again. Each deal's plays are seeded by
            (seed, deal index, config), so the result equals an uninterrupted run.
        on_result: called with ``(deal index, moon points, sun points)`` of each deal
            as it finishes.
        records: called with each deal record (``docs/RECORDS.md``) of each play as its
            deal finishes, or None (no records are made).
        timing: a dict that receives ``"seconds_per_deal"``, wall seconds per deal after
            start-up (:func:`~twilight_env.experiments.common.run_tasks`).

    Returns:
        ``(moon, sun)``: int arrays of shape ``(N, 3)``, deal points ``[deal, play r]``.
    """
    done = dict(done or {})
    keep = (True,) if records is not None else ()
    todo = [d for d in range(len(deals)) if d not in done]
    label = solo if solo == sun else f"{solo} vs {sun}"

    def one(r):
        if records is not None:
            for rec in r[3]:
                records(rec)
        if on_result is not None:
            on_result(r[:3])

    if lockstep_ok([solo, sun]):  # batched agents: blocks of deals, all plays side by side
        tasks = [([(d, deals[d]) for d in todo[i:i + LOCKSTEP_BLOCK]], solo, sun, seed, config) + keep
                 for i in range(0, len(todo), LOCKSTEP_BLOCK)]
        blocks = run_tasks(_play_edge_block, tasks, workers, desc=f"edge {label}", progress=progress,
                           on_result=lambda rs: [one(r) for r in rs], done=len(deals) - len(todo),
                           units=lambda task: len(task[0]), timing=timing)
        res = [r for rs in blocks for r in rs]
    else:
        tasks = [(d, deals[d], solo, sun, seed, config) + keep for d in todo]
        res = run_tasks(_play_edge_deal, tasks, workers, desc=f"edge {label}", progress=progress,
                        on_result=one, done=len(deals) - len(tasks), timing=timing)
    for d, m, u, *_ in res:
        done[d] = (m, u)
    return deal_points(done, range(len(deals)))


def deal_points(done: dict, order) -> tuple[np.ndarray, np.ndarray]:
    """``(moon, sun)``: ``(len(order), 3)`` int64 Moon and Sun deal points of the deals in
    ``order``, by play, from ``{deal index: (Moon points, Sun points)}``."""
    order = list(order)
    return (np.array([done[d][0] for d in order], dtype=np.int64).reshape(-1, 3),
            np.array([done[d][1] for d in order], dtype=np.int64).reshape(-1, 3))


# ---------------------------------------------------------------------------------
# checkpoints
# ---------------------------------------------------------------------------------

CHECKPOINT_KIND = "twilight-edge-checkpoint"
CHECKPOINT_EVERY_S = 20.0
"""Seconds between checkpoint writes while deals finish (and one at the end or on Ctrl-C)."""


class Checkpoint(StudyCheckpoint):
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
    RESULT_FILE = RESULT

    def interval(self) -> float:
        return CHECKPOINT_EVERY_S

    def record(self, key: int, deal_index: int, moon: list[int], sun: list[int]) -> None:
        super().record(key, deal_index, (list(moon), list(sun)))

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


def agents_words(solo: str, sun: str) -> str:
    """The agents of a configuration for a sentence: ``"policy, the shipped network"``,
    ``"pimc (solo) against heuristic (Sun)"``; an agent that reads the shipped weights
    (:func:`~twilight_env.agents.base.reads_shipped_weights`; a ``respond`` agent, when its target or
    model does: ``respond:target=mmd:RUN`` plays none) is said to play the shipped network."""
    from twilight_env.agents.base import parse_spec, reads_shipped_weights

    def shipped(spec: str) -> bool:  # a responder plays its target's (or model's) network, not its own
        name, kwargs = parse_spec(spec)
        if name != "respond":
            return reads_shipped_weights(spec)
        return any(shipped(str(kwargs[k]).replace(";", ",")) for k in ("target", "model") if kwargs.get(k)) or (
            "target" not in kwargs)

    def one(spec: str) -> str:
        return f"{spec}, the shipped network" if shipped(spec) else spec

    return one(solo) if solo == sun else f"{one(solo)} (solo) against {one(sun)} (Sun)"


def deals_words(source: dict | None, n: int) -> str:
    """Where a run's ``n`` deals come from, for a sentence, saying whether they are a
    held-out set (``twilight_env.rules.heldout``): ``"the held-out deal set heldout-2 (600
    deals)"``, ``"8000 deals of seed 0 (not a held-out set)"``, ``"100 deals of the file
    d.json"``.

    Args:
        source: the run's ``deals_source`` (:func:`twilight_env.records.dealsets.deal_set`),
            or None (nothing said).
    """
    from twilight_env.rules.heldout import HELDOUT_SEEDS

    if not source:
        return ""
    names = {v: k for k, v in HELDOUT_SEEDS.items()}
    seed = source.get("seed")
    held = names.get(seed) if isinstance(seed, int) and not isinstance(seed, bool) else None
    if source.get("source") == "file":
        return f"{n} deals of the file {os.path.basename(str(source.get('path')))}" + (
            f" (drawn from the held-out set {held})" if held else "")
    if held:
        return f"the held-out deal set {held} ({n} deals)"
    return f"{n} deals of seed {seed} (not a held-out set)"


def verdict(fig: dict, label: str, n: int, agents: str | None = None, deals: str = "") -> str:
    """One sentence with the answer and its uncertainty for one configuration.

    Args:
        fig: the configuration's figures (:func:`deal_figures` with ``"matches"``).
        label: the configuration's label (``"policy"``, ``"pimc / heuristic"``).
        n: deals played.
        agents: the agents in words (:func:`agents_words`; default ``label``).
        deals: where the deals come from (:func:`deals_words`), or ``""``.
    """
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
    on = f" on {deals}" if deals else ""
    return (f"{label}: for these agents ({agents or label}){on}, {edge}: Moon − Sun = {fmt_number(d['mean'], 1, True)} "
            f"deal points per deal (95% CI {fmt_number(d['ci_low'], 1, True)} to {fmt_number(d['ci_high'], 1, True)}; "
            f"N = {n} deals × 3 plays); "
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


_STRENGTH_TEXT = ("The answer holds for the agents and deals of this run. Who has the edge depends on how well the "
                  "agents play; on the held-out deal set heldout-2 (Moon − Sun, 95% intervals): heuristic "
                  "+4.3 [+2.8, +5.8], the solo leads; the top search rung (ismcts:backend=numba,iterations=6000) "
                  "-9.8 [-11.7, -7.9]; policy:default, the shipped network alone, -4.1 [-5.0, -3.1] (18,000 deals; "
                  "the mean of four networks of its recipe, other training seeds: -5.3 [-6.7, -3.9]); "
                  "guided:default, top of the round robins of the shipped agents (the network in the search), -1.3 [-2.3, -0.3] (12,554 deals). "
                  "At strong play the Sun side leads, by 1 to 10 points per deal; the same agent on other deals (seed 0 "
                  "is not a held-out set) or on fewer deals differs within its interval. Figures and commands: ")
STRENGTH_NOTE = f"{_STRENGTH_TEXT}{doc_reference('RESULTS.md')}."
"""Printed after every team-scoring run: the answer at strong play, with where to read it
(the installed copy of RESULTS.md, :func:`twilight_env.util.docs.doc_reference`)."""
STRENGTH_NOTE_FILE = f"{_STRENGTH_TEXT}docs/RESULTS.md."
""":data:`STRENGTH_NOTE` as ``edge.md`` writes it: the document named by its path in the
repository (``docs/RESULTS.md``), not by this machine's path, so a run's files name no folder
of the machine that wrote them."""


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

    try:
        save_figure(fig, path, dpi=110)  # atomically: a full disk leaves no partial png
    finally:
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
    diffs = [deal_diffs(r) for r in results]
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


def study(configs: list[tuple[str, str]], deals, seed: int, workers: int, target: int = 1000,
          boot: int = 200, matches: int = 1000, progress: bool = True,
          checkpoint: Checkpoint | None = None, records=None, deals_source: dict | None = None) -> list[dict]:
    """Play and analyse every configuration; returns one result dict per configuration.

    ``deals_source`` (the run's, :func:`twilight_env.records.dealsets.deal_set`) lets each
    answer say where its deals come from and whether they are held out (:func:`deals_words`).

    With a ``checkpoint``, deals it holds are not played again and each finished deal is
    recorded in it (written every ``CHECKPOINT_EVERY_S`` seconds). With ``records`` (a
    folder, made if missing), every play's deal record is written to
    ``records/edge.records.jsonl.gz`` (:data:`RECORDS_FILE`).

    Each dict: ``label``, ``solo_spec``, ``sun_spec``, ``deals`` (N), ``figures`` (deal
    figures plus ``"matches"``), ``answer`` (a sentence), ``moon_points`` and
    ``sun_points`` (N × 3 lists, deal points by deal and play), ``play_seconds`` (time
    spent playing the configuration's deals over every sitting of the run: the
    checkpoint keeps the time of earlier sittings), ``play_seconds_this_sitting`` and
    ``seconds_per_deal`` (this sitting's wall seconds per deal after start-up, None when
    it played too little to time: what projections of longer runs use).
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
            timing = {}
            moon, sunp = play_config(deals, solo, sun, seed, key, workers, progress, done, record,
                                     writer.write if writer is not None else None, timing)
            secs = time.time() - t0
            total = secs
            if checkpoint is not None:
                checkpoint.stop()
                total = checkpoint.play_seconds(key)
            fig = deal_figures(moon, sunp)
            fig["matches"] = match_figures(moon, sunp, seed, key, target, boot, matches)
            label = solo if solo == sun else f"{solo} / {sun}"
            results.append({"label": label, "solo_spec": solo, "sun_spec": sun, "deals": len(deals),
                            "figures": fig,
                            "answer": verdict(fig, label, len(deals), agents_words(solo, sun),
                                              deals_words(deals_source, len(deals))),
                            "moon_points": moon.tolist(), "sun_points": sunp.tolist(), "play_seconds": total,
                            "play_seconds_this_sitting": secs, "seconds_per_deal": timing.get("seconds_per_deal")})
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
    """Write edge.json, edge.md and edge.png, each atomically (:mod:`twilight_env.util.atomic`:
    a full disk leaves the previous file whole and raises a one-line ``WriteError`` naming
    the file); returns their paths by kind."""
    results = doc["results"]
    paths = {k: os.path.join(folder, f"edge.{k}") for k in ("json", "md", "png")}
    write_json(paths["json"], doc, arrays_inline=True)
    header, rows = table_rows(results)
    lines = [f"# Solo vs Sun side, 3 players (seed {doc['seed']}, N = {doc['deals']} deals × 3 plays)", "",
             markdown_table(header, rows), "",
             "Deal points per deal, mean [95% CI]. Moon − Sun: each deal's three plays (one per solo hand) "
             "averaged, Student-t interval over deals; P(Moon > Sun): share of plays, Wilson interval; match "
             f"figures: simulated matches to {doc['target']}, percentile bootstrap over deals.", ""]
    lines += [f"- {r['answer']}" for r in results]
    lines += [f"- {rotating_line(r)}" for r in results]
    lines += [f"- {goals_line(r)}" for r in results if "fixed_solo_goals_333" in r["figures"]["matches"]]
    lines += ["", STRENGTH_NOTE_FILE]
    runner = doc.get("runner", "local")
    where = f"with {doc['workers']} worker(s)" if runner == "local" else f"on {runner}"
    lines.append(f"\nRun time {doc['run_seconds']:.1f} s {where}.")
    write_text(paths["md"], "\n".join(lines) + "\n")
    plot(results, paths["png"], doc["seed"])
    return paths


def run_study(settings: StudySettings | Sequence[str] | None = None, *, report_interrupt: bool = True,
              **options) -> str:
    """Run the whole study (what ``twilight edge`` does) and return the output folder.

    Args:
        settings: a :class:`~twilight_env.experiments.edge.core.StudySettings` (team
            scoring), or the agent specs, with the other settings as keywords
            (``run_study(["heuristic"], deals=200, seed=1, out="o")``: the fields of
            :class:`StudySettings`, checked when they are built).

    The output folder is made first and holds a checkpoint (:class:`Checkpoint`) while
    deals are played; ``resume`` (a folder) finishes such a run with the settings saved in
    it. Ctrl-C (or SIGTERM, as the ``twilight`` command raises it) writes the checkpoint,
    prints one line saying how to resume (not with ``report_interrupt=False``, for a caller
    that says how to continue itself, as ``twilight edge --ladder`` does), and re-raises.
    ``records`` (a folder): write every play's deal record to
    ``records/edge.records.jsonl.gz``. ``ray`` plays the deals
    on a Ray cluster (:mod:`twilight_env.util.distributed`) instead of ``workers`` local
    processes, with the same per-deal points; a run may be resumed on either runner.

    Raises:
        ValueError: bad settings (:class:`StudySettings`: a bad agent spec lists the valid
            agents), individual scoring (that study is
            :func:`twilight_env.experiments.edge.individual_edge.run_study`), a bad deal
            file, an unreadable or malformed checkpoint, or an output path that exists
            (without ``force``) or cannot be made.
        TypeError: a keyword that is no setting.
    """
    t0 = time.time()
    s = StudySettings.of(settings, **options)
    if s.scoring != "team":
        raise ValueError("solo_edge.run_study plays team scoring (R7.5); individual scoring (R8) is "
                         "twilight_env.experiments.edge.individual_edge.run_study")
    if s.records is not None:  # before any folder is made or deal played
        check_records_folder(s.records, RECORDS_FILE, "--records", s.force)
    run = prepare_run(s, Checkpoint, "edge")
    try:
        with ray_runner(s.ray):
            results = study(run.configs, run.deals, run.seed, s.workers, run.target, run.boot, run.matches,
                            progress=s.progress, checkpoint=run.checkpoint, records=s.records,
                            deals_source=run.deals_source)
    except KeyboardInterrupt as e:
        line = run.checkpoint.interrupted(e)  # writes the checkpoint
        if report_interrupt:
            print(line, file=sys.stderr)
        raise
    doc = _result_doc(s, run, results, t0)
    paths = write_outputs(run.folder, doc)
    run.checkpoint.remove()
    if s.verbose:
        print("\n".join(terminal_lines(results)))
        where = f"{s.workers} worker(s)" if s.ray is None else f"on Ray ({s.ray})"
        print(f"\nRun time {doc['run_seconds']:.1f} s, {where}. Files:")
        for kind in ("md", "json", "png"):
            print(f"  {paths[kind]}")
        if s.records is not None:
            print(f"  {os.path.join(s.records, RECORDS_FILE)} (game records)")
    return run.folder


def _result_doc(s: StudySettings, run: PreparedRun, results: list[dict], t0: float) -> dict:
    """The ``edge.json`` document of a finished run."""
    return {"seed": run.seed, "deals": len(run.deals), "deals_source": run.deals_source, "target": run.target,
            "boot": run.boot, "matches": run.matches,
            "configs": [{"solo": a, "sun": b} for a, b in run.configs], "workers": s.workers,
            "runner": runner_label(s.ray),
            "git": git_hash(), "run_seconds": run.checkpoint.elapsed + time.time() - t0,
            "resumed": s.resume is not None, "weights": run.checkpoint.weights, "results": results}


def _finished_run(folder: str) -> tuple:
    """``(settings, None, done, elapsed, seconds, weights, deals)`` of the finished edge run
    in ``folder`` (its ``edge.json``), as :func:`grow_run` needs them; ValueError if the
    file is not a finished edge run's output."""
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
    weights = check_shipped_weights(doc.get("weights"), Checkpoint.specs_of(settings),
                                    f"the edge run {os.path.join(folder, 'edge.json')!r}")
    return settings, old_deals, done, elapsed, seconds, weights, n_old


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
    check_grow(deals)
    ckpt_path = os.path.join(folder, CHECKPOINT)
    if os.path.isfile(ckpt_path):
        ckpt = Checkpoint.load(folder)
        settings, old_deals, done, elapsed = ckpt.settings, ckpt.deals, ckpt.done, ckpt.elapsed
        seconds, weights = ckpt.seconds, ckpt.weights
    elif os.path.isfile(os.path.join(folder, "edge.json")):
        settings, old_deals, done, elapsed, seconds, weights, n_old = _finished_run(folder)
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
    grown = Checkpoint(folder, settings, new_deals, done, elapsed, seconds, weights)
    grown.write()
    previous = os.path.join(folder, "edge.json")
    if os.path.isfile(previous):
        os.replace(previous, os.path.join(folder, "edge.previous.json"))

