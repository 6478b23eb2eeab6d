"""``twilight edge --scoring individual``: the solo against the Sun players under the
3-player ``three_player_scoring="individual"`` variant (R8).

Under this variant every seat scores only the tricks its own seat took, with its own
cult's sanctuaries among them (R5 applied per seat), and the new moon's tricks form a
fourth score line that can even win the match. So the solo no longer profits from the
tricks of the hand it plays for the new moon, and the two Sun players no longer share a
score. The study asks the plain study's question (:mod:`twilight_env.experiments.edge.solo_edge`) under
these rules.

Design
------
The deals, the seating and the three plays per deal (one per solo hand, R7.4 rotation)
are those of :mod:`twilight_env.experiments.edge.solo_edge`, with the same random streams per
(seed, deal, configuration, play): an agent that does not read the scoring rules (every
agent but ``ismcts:backend=numba,scoring=individual``) plays exactly the deals it plays
in ``twilight edge`` with the same seed, and only the scoring differs. An agent that
does (``scoring=individual``: each decider of the search maximizes its own line) plays
the variant as its rules reward.

Per play the four lines' deal points are kept: seat 0 (the solo), seat 1 (the Sun player
on the solo's left), seat 2 (the new moon), seat 3 (the Sun player on its right); and,
for comparison, the same play's Moon and Sun points under team scoring (R5, R7.5).

Figures (deal points; 95% intervals)
------------------------------------
- Mean points per deal of the solo, a Sun player (mean of the two) and the new moon,
  and the paired difference solo − Sun player: each deal's three plays averaged, then a
  Student-t interval over the N deals (the primary figure).
- P(the solo's line is strictly the highest of the four in a play): share of the 3N
  plays, Wilson interval.
- A fixed-solo match to the target (R6.1, R7.6): one player is the solo every deal; four
  lines (solo, Sun left, new moon, Sun right) are credited a drawn play's points; after a
  deal in which a total reaches the target, the highest total wins, a tie for it plays
  on. Reported: P(solo wins), P(a Sun player wins), P(new moon wins), mean deals per
  match; intervals by the percentile bootstrap over deals (as :mod:`twilight_env.experiments.edge.solo_edge`).
- The same plays under team scoring: Moon − Sun (paired, Student-t).

Output folder (default ``out/individual__{seed}__{unixtime}``): ``individual.json`` (all
figures, settings, per-play points) and ``individual.md``. While deals are played the
folder holds ``individual.checkpoint.json`` (atomic, every 20 s and on Ctrl-C or
SIGTERM); ``twilight edge --resume FOLDER`` finishes an interrupted run with the figures
of an uninterrupted one, on either runner (local processes or ``--ray``).
"""

from __future__ import annotations

import math
import os
import sys
import time
from typing import Sequence

import numpy as np

from twilight_env.rules.engine import State
from twilight_env.util.atomic import write_json, write_text
from twilight_env.util.jsonfile import JsonFileError, read_json

from twilight_env.experiments.common import (MAX_DEAL_SCORE, check_score_pair, check_shipped_weights, fmt_ci, git_hash,
                                             markdown_table, mean_ci, play_seeded, possible_deal_score, run_tasks,
                                             wilson_ci)
from twilight_env.records.dealsets import deal_set
from twilight_env.util.distributed import ray_runner, runner_label
from twilight_env.experiments.edge.core import (INDIVIDUAL_CHECKPOINT, INDIVIDUAL_RESULT, MIN_BOOTSTRAP_DEALS,
                                                PreparedRun, StudyCheckpoint, StudySettings, check_grow, config_key,
                                                is_individual_run, prepare_run, rotated_deal, terminal_blocks, wrap)
from twilight_env.experiments.edge.matches import BOOT_STREAM, percentile_ci, simulate_highest_total

LINES = ("solo", "sun_left", "new_moon", "sun_right")
"""The four score lines by seat (R8): seat 0 the solo, 1 and 3 the Sun players, 2 the new moon."""
CHECKPOINT = INDIVIDUAL_CHECKPOINT
"""File name of a run's checkpoint in its output folder (removed when the run finishes)."""
RESULT = INDIVIDUAL_RESULT
"""File name of a finished run's figures."""
INDIVIDUAL_STREAM = 8
"""Tag that keeps this study's bootstrap draws apart from the plain study's."""


def _play_deal(task) -> tuple:
    """Worker: the three plays of one deal; per play the 4 seats' individual points (R8)
    and the Moon and Sun team points (R5)."""
    deal_index, deal, solo, sun, seed, config = task
    plays = []
    for r in range(3):
        state = State.from_deal(rotated_deal(deal, r), 0, 3)
        state = play_seeded(state, [solo, sun, solo, sun], seed, deal_index, 3 * config + r)
        plays.append([int(x) for x in state.seat_scores()] + [int(x) for x in state.side_scores()])
    return deal_index, plays


class Checkpoint(StudyCheckpoint):
    """The finished deals of a ``--scoring individual`` run (``individual.checkpoint.json``):
    per configuration key and deal, 3 plays × (4 seat points, Moon and Sun team points)."""

    NAME = CHECKPOINT
    KIND = "twilight-edge-individual-checkpoint"
    RESULT_FILE = RESULT
    EXTRA_SETTINGS = {"scoring": "individual"}

    @classmethod
    def parse(cls, doc: dict) -> tuple[dict, list, dict]:
        st, deals, raw = cls.parse_common(doc)
        done = {}
        for k, v in raw.items():
            done[k] = {}
            for d, plays in v.items():
                if (not isinstance(plays, list) or len(plays) != 3
                        or any(not isinstance(p, list) or len(p) != 6
                               or any(isinstance(x, bool) or not isinstance(x, int) for x in p) for p in plays)):
                    raise ValueError(f"a malformed result for deal {d} (3 plays of 6 non-negative ints expected)")
                for r, p in enumerate(plays):
                    check_plays(p, f"deal {d}, play {r}")
                done[k][int(d)] = [list(p) for p in plays]
        return st, deals, done


def check_plays(p: list, where: str) -> None:
    """Check one play's ``[solo, Sun left, new moon, Sun right, Moon team, Sun team]`` deal
    points against what a deal can produce: each seat's line a deal score (R5 per seat,
    R8), the team pair a pair of deal scores, and each side's seat lines at most its team
    score (souls × multiplier of a side is at least the sum over its seats).

    Raises:
        ValueError: naming ``where`` and what no deal can give.
    """
    for i, x in enumerate(p[:4]):
        if not possible_deal_score(x):
            raise ValueError(f"the {LINES[i]} line of {where} is {x!r}; a seat's deal points are souls × "
                             f"multiplier, 0..{MAX_DEAL_SCORE} (R5, R8)")
    check_score_pair(p[4:6], f"the (Moon, Sun) team points of {where}")
    if p[0] + p[2] > p[4] or p[1] + p[3] > p[5]:
        raise ValueError(f"the seat lines of {where} ({p[:4]}) exceed their sides' team points ({p[4:6]}); no "
                         "deal gives that (R5, R8)")


def simulate_lines(points: np.ndarray, rng: np.random.Generator, matches: int, target: int = 1000,
                   max_deals: int = 5000) -> dict:
    """Fixed-solo matches (R6.1, R7.6) under individual scoring (R8) from pools of plays.

    Args:
        points: int array ``(B, P, 4)``: B pools of P plays, each the four lines' deal
            points (solo, Sun left, new moon, Sun right).
        rng: draws the plays.
        matches: matches per pool.
        target: match target; after a deal in which some total reaches it, the strictly
            highest total wins; a tie for the highest plays on.
        max_deals: safety stop.

    Returns:
        dict of arrays over the pools: ``"p_win"`` (B, 4) share of decided matches won by
        each line, ``"totals"`` (B, 4) mean final totals, ``"deals"`` (B,) mean deals per
        decided match, ``"undecided"`` (B,) (:func:`twilight_env.experiments.edge.solo_edge.simulate_highest_total`).
    """
    points = np.asarray(points, dtype=np.int64)
    B, P, _ = points.shape
    return simulate_highest_total(lambda k, b, j: points[b, j], 4, B, P, rng, matches, target, max_deals)


def figures(plays: np.ndarray, seed: int, config: int, target: int = 1000, boot: int = 200,
            matches: int = 1000) -> dict:
    """The study's figures (module docstring) from ``plays``, int array ``(N, 3, 6)``."""
    plays = np.asarray(plays, dtype=np.int64)
    N = plays.shape[0]
    seat = plays[:, :, :4].astype(float)
    solo, sun, moon_line = seat[:, :, 0], (seat[:, :, 1] + seat[:, :, 3]) / 2, seat[:, :, 2]
    out: dict = {}
    for key, x in (("solo", solo), ("sun_player", sun), ("new_moon", moon_line), ("diff", solo - sun)):
        m, lo, hi = mean_ci(x.mean(axis=1))
        out[key] = {"mean": m, "ci_low": lo, "ci_high": hi}
    out["diff"]["sd_per_deal"] = float((solo - sun).mean(axis=1).std(ddof=1)) if N > 1 else math.nan
    top = (seat[:, :, 0] > seat[:, :, 1:].max(axis=2)).sum()
    p, lo, hi = wilson_ci(int(top), int(seat[:, :, 0].size))
    out["p_solo_highest"] = {"p": p, "ci_low": lo, "ci_high": hi, "plays": int(seat[:, :, 0].size)}
    m, lo, hi = mean_ci((plays[:, :, 4] - plays[:, :, 5]).astype(float).mean(axis=1))
    out["team_diff_same_plays"] = {"mean": m, "ci_low": lo, "ci_high": hi}
    rng = np.random.default_rng(np.random.SeedSequence((int(seed), BOOT_STREAM, int(config), INDIVIDUAL_STREAM)))
    lines = plays[:, :, :4]
    full = lines.reshape(1, -1, 4)
    idx = rng.integers(N, size=(boot, N))
    fx = simulate_lines(full, rng, 50 * matches, target)
    fb = simulate_lines(lines[idx].reshape(boot, -1, 4), rng, matches, target)
    pw = fx["p_win"][0]
    sun_b = fb["p_win"][:, 1] + fb["p_win"][:, 3]
    out["matches"] = {
        "target": target, "bootstrap_resamples": boot, "matches_per_resample": matches, "matches": 50 * matches,
        "p_solo_wins": float(pw[0]), "p_solo_wins_ci": list(percentile_ci(fb["p_win"][:, 0])),
        "p_sun_player_wins": float(pw[1] + pw[3]), "p_sun_player_wins_ci": list(percentile_ci(sun_b)),
        "p_new_moon_wins": float(pw[2]), "p_new_moon_wins_ci": list(percentile_ci(fb["p_win"][:, 2])),
        "mean_deals": float(fx["deals"][0]), "undecided": int(fx["undecided"][0])}
    return out


def _ci(d: dict) -> str:
    return fmt_ci(d["mean"], d["ci_low"], d["ci_high"], signed=True)


def verdict(fig: dict, label: str, n: int) -> str:
    """One sentence with the answer and its uncertainty for one configuration: the solo
    against a Sun player, which line is highest on average, and the match chances."""
    d, mt = fig["diff"], fig["matches"]
    if d["ci_low"] > 0:
        who = "the solo's line leads a Sun player's"
    elif d["ci_high"] < 0:
        who = "a Sun player's line leads the solo's"
    else:
        who = "neither the solo's nor a Sun player's line is ahead at 95%"
    means = {"the solo": fig["solo"]["mean"], "a Sun player": fig["sun_player"]["mean"],
             "the new moon": fig["new_moon"]["mean"]}
    top = max(means, key=means.get)
    lo, hi = mt["p_solo_wins_ci"]
    small = (f" With fewer than {MIN_BOOTSTRAP_DEALS} deals the bootstrap match interval is not reliable "
             "(too narrow); use more deals." if n < MIN_BOOTSTRAP_DEALS else "")
    return (f"{label}, individual scoring (R8), {n} deals: {who}: solo − Sun player {_ci(d)} points per deal; "
            f"the highest line on average is {top}'s ({means[top]:.1f} points per deal); in a fixed-solo match to "
            f"{mt['target']} the solo wins with probability {mt['p_solo_wins']:.3f} [{lo:.3f}, {hi:.3f}], a Sun "
            f"player {mt['p_sun_player_wins']:.3f}, the new moon {mt['p_new_moon_wins']:.3f}.{small}")


def table_rows(results: list[dict]) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the table (``individual.md``, the command's output, the notebook)."""
    header = ["agents", "N", "solo", "Sun player", "new moon", "solo − Sun player", "P(solo line highest)",
              "P(solo wins), fixed solo", "P(a Sun player wins)", "P(new moon wins)", "team Moon − Sun, same plays"]
    rows = []
    for r in results:
        f, mt = r["figures"], r["figures"]["matches"]
        ph = f["p_solo_highest"]

        def p(key):
            lo, hi = mt[f"{key}_ci"]
            return f"{mt[key]:.3f} [{lo:.3f}, {hi:.3f}]"

        rows.append([r["label"], str(r["deals"]), f"{f['solo']['mean']:.1f}", f"{f['sun_player']['mean']:.1f}",
                     f"{f['new_moon']['mean']:.1f}", _ci(f["diff"]),
                     f"{ph['p']:.3f} [{ph['ci_low']:.3f}, {ph['ci_high']:.3f}]",
                     p("p_solo_wins"), p("p_sun_player_wins"), p("p_new_moon_wins"),
                     _ci(f["team_diff_same_plays"])])
    return header, rows


def run_study(settings: StudySettings | Sequence[str] | None = None, **options) -> str:
    """Run the study (what ``twilight edge --scoring individual`` does); returns the folder.

    Args:
        settings: a :class:`~twilight_env.experiments.edge.core.StudySettings` (its
            ``scoring`` is taken as ``"individual"``), or the agent specs with the other
            settings as keywords, as :func:`twilight_env.experiments.edge.solo_edge.run_study`
            (no ``records``, no ``save_deals``).

    Raises:
        ValueError: bad settings (:class:`StudySettings`), a bad deal file, an unreadable
            or malformed checkpoint, or an output folder that holds files (without ``force``).
        TypeError: a keyword that is no setting.
    """
    t0 = time.time()
    s = StudySettings.of(settings, **{**options, "scoring": "individual"})
    run = prepare_run(s, Checkpoint, "individual")
    try:
        with ray_runner(s.ray):
            results = [_play_config(s, run, solo, sun) for solo, sun in run.configs]
    except KeyboardInterrupt as e:
        print(run.checkpoint.interrupted(e), file=sys.stderr)
        raise
    doc = {"study": "edge", "scoring": "individual", "seed": run.seed, "deals": len(run.deals),
           "deals_source": run.deals_source, "target": run.target, "boot": run.boot, "matches": run.matches,
           "configs": [{"solo": a, "sun": b} for a, b in run.configs], "workers": s.workers,
           "runner": runner_label(s.ray), "git": git_hash(), "run_seconds": run.checkpoint.elapsed + time.time() - t0,
           "resumed": s.resume is not None, "plays_columns": list(LINES) + ["moon_team", "sun_team"],
           "weights": run.checkpoint.weights, "results": results}
    write_json(os.path.join(run.folder, RESULT), doc, arrays_inline=True)  # atomically (twilight_env.util.atomic)
    write_markdown(run.folder, doc)
    run.checkpoint.remove()
    if s.verbose:
        print("\n".join(terminal_lines(results)))
        where = f"with {s.workers} worker(s)" if s.ray is None else f"on Ray ({s.ray})"
        print(f"\nRun time {doc['run_seconds']:.1f} s, {where}. Files:")
        for name in ("individual.md", RESULT):
            print(f"  {os.path.join(run.folder, name)}")
    return run.folder


def terminal_lines(results: list[dict]) -> list[str]:
    """What ``twilight edge --scoring individual`` prints at the end, within
    :data:`~twilight_env.experiments.edge.core.TERMINAL_WIDTH` characters a line: the
    table of ``individual.md`` as one block per configuration, then the answers, wrapped
    (the file keeps the wide table)."""
    header, rows = table_rows(results)
    out = terminal_blocks(header, rows)
    for r in results:
        out += [""] + wrap(r["answer"])
    return out


def _play_config(s: StudySettings, run: PreparedRun, solo: str, sun: str) -> dict:
    """Play (the missing deals of) one configuration and return its result entry."""
    t1 = time.time()
    ckpt, deal_list = run.checkpoint, run.deals
    key = config_key(solo, sun)
    done = dict(ckpt.finished(key))
    tasks = [(d, deal_list[d], solo, sun, run.seed, key) for d in range(len(deal_list)) if d not in done]
    label = solo if solo == sun else f"{solo} / {sun}"
    ckpt.start(key)
    res = run_tasks(_play_deal, tasks, s.workers, desc=f"individual {label}", progress=s.progress,
                    on_result=lambda r: ckpt.record(key, r[0], r[1]), done=len(deal_list) - len(tasks))
    ckpt.stop()
    for d, plays in res:
        done[d] = plays
    plays = np.array([done[d] for d in range(len(deal_list))], dtype=np.int64)
    fig = figures(plays, run.seed, key, run.target, run.boot, run.matches)
    return {"label": label, "solo_spec": solo, "sun_spec": sun, "deals": len(deal_list), "figures": fig,
            "answer": verdict(fig, label, len(deal_list)), "plays": plays.tolist(),
            "play_seconds": ckpt.play_seconds(key), "play_seconds_this_sitting": time.time() - t1}


def write_markdown(folder: str, doc: dict) -> str:
    """Write ``individual.md`` (table, how to read it, the verdicts, run time) from an
    ``individual.json`` document; returns its path."""
    header, rows = table_rows(doc["results"])
    runner = doc.get("runner", "local")
    where = f"with {doc['workers']} worker(s)" if runner == "local" else f"on {runner}"
    lines = [f"# Solo vs Sun players under individual scoring (R8), 3 players (seed {doc['seed']}, N = "
             f"{doc['deals']} deals × 3 plays)", "", markdown_table(header, rows), "",
             "Deal points per deal, mean [95% CI]. Each seat scores only the tricks it took (R8); the new moon's "
             "tricks are a fourth line. Solo − Sun player: each deal's three plays averaged, Student-t interval "
             "over deals; P(solo line highest): share of plays, Wilson interval; match figures: simulated "
             f"fixed-solo matches to {doc['target']}, percentile bootstrap over deals. Last column: the same plays "
             "scored by side (R5, R7.5).", ""]
    lines += [f"- {verdict(r['figures'], r['label'], doc['deals'])}" for r in doc["results"]]
    lines.append(f"\nRun time {doc['run_seconds']:.1f} s {where}.")
    path = os.path.join(folder, "individual.md")
    write_text(path, "\n".join(lines) + "\n")
    return path


def grow_run(folder: str, deals: int) -> None:
    """Grow the run in ``folder`` to ``deals`` deals, keeping every deal it has played
    (``twilight edge --resume FOLDER --deals N``, as :func:`twilight_env.experiments.edge.solo_edge.grow_run`):
    the first n deals of a seed are the n deals of that seed and every deal is seeded by
    (seed, deal, configuration), so the grown run ends with the figures of one run of
    ``deals`` deals. A finished run's ``individual.json`` becomes ``individual.previous.json``.

    Raises:
        ValueError: no run in the folder, deals from a file, N not larger than the run's
            deals, or deals that disagree with the seed's sequence.
    """
    check_grow(deals)
    result = os.path.join(folder, RESULT)
    if os.path.isfile(os.path.join(folder, CHECKPOINT)):
        ckpt = Checkpoint.load(folder)
        settings, old, done, elapsed = ckpt.settings, ckpt.deals, ckpt.done, ckpt.elapsed
        seconds, n_old, weights = ckpt.seconds, len(old), ckpt.weights
    elif os.path.isfile(result):
        try:
            doc = read_json(result, "individual-scoring result")
            settings = {"configs": [[c["solo"], c["sun"]] for c in doc["configs"]], "seed": int(doc["seed"]),
                        "target": int(doc["target"]), "boot": int(doc["boot"]), "matches": int(doc["matches"]),
                        "deals_source": doc["deals_source"], "scoring": "individual"}
            done = {str(config_key(r["solo_spec"], r["sun_spec"])): dict(enumerate(r["plays"]))
                    for r in doc["results"]}
            elapsed, n_old, old = float(doc["run_seconds"]), int(doc["deals"]), None
            seconds = {str(config_key(r["solo_spec"], r["sun_spec"])): float(r.get("play_seconds", 0.0))
                       for r in doc["results"]}
        except JsonFileError:
            raise
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            raise ValueError(f"{result!r} is not a readable individual-scoring result: {type(e).__name__}: {e}") from None
        weights = check_shipped_weights(doc.get("weights"), Checkpoint.specs_of(settings),
                                        f"the individual-scoring run {result!r}")
    else:
        raise ValueError(f"no individual-scoring run in {folder!r} (neither {CHECKPOINT} nor {RESULT})")
    if settings["deals_source"].get("source") != "seed":
        raise ValueError(f"the run in {folder!r} plays deals from a file; only runs of generated deals (--seed) "
                         "can grow with --resume --deals")
    if deals <= n_old:
        raise ValueError(f"the run in {folder!r} holds {n_old} deals; --deals with --resume grows it, so give "
                         f"more than {n_old} (got {deals})")
    new, _ = deal_set(deals, int(settings["seed"]), 3)
    new = [[list(h) for h in d] for d in new]
    if old is not None and [[list(h) for h in d] for d in old] != new[:n_old]:
        raise ValueError(f"the deals of the run in {folder!r} are not the first {n_old} deals of seed "
                         f"{settings['seed']}; the run cannot grow")
    Checkpoint(folder, settings, new, done, elapsed, seconds, weights).write()
    for name in (RESULT, "individual.md"):  # the finished run's outputs, kept under another name
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            os.replace(path, os.path.join(folder, name.replace("individual.", "individual.previous.")))


__all__ = ["Checkpoint", "LINES", "figures", "grow_run", "is_individual_run", "run_study", "simulate_lines"]
