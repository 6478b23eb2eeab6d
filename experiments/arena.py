"""``twilight arena``: a duplicate-deal round robin between agent specs.

Duplicate format (card luck cancels): every deal of a fixed deal set is played twice
per pairing (A, B), with the same cards on the same seats and the sides swapped.

| players | play 0 | play 1 |
|---|---|---|
| 4 (R2.1) | A on seats 0, 2 (Sun); B on 1, 3 (Moon) | B on seats 0, 2; A on 1, 3 |
| 3 (R7.1-R7.3) | A solo (seat 0, deciding for the new moon 2); B on the Sun seats 1, 3 | B solo; A on 1, 3 |

Seat 0 leads every deal. The score of a duplicate pair for A, in deal points, is the
mean over its two plays of (A's side deal score − B's side deal score) (R5). Reported per
pairing: mean points per deal for A with a 95% Student-t interval over duplicate pairs,
the number of deals, A's win rate (fraction of plays in which A's side outscored B's,
ties count half) and, in 3 players, the same per role (A as solo, A as the Sun side).
Ratings: openskill's Plackett-Luce model, updated once per duplicate pair (the sign of
the pair score decides the ranking; 0 is a tie), pairings interleaved deal by deal.

Agents draw from their own streams (``twilight_env.experiments.common``), so a seed reproduces the
run whatever ``--workers`` is. Output: ``arena.json`` (all figures and per-pair scores),
``arena.csv`` (one row per pairing) and ``ratings.csv`` in ``--out`` (a folder that holds
files is refused unless ``--force``); with ``--records DIR`` also
``DIR/arena.records.jsonl.gz``, every play of every deal as a deal record
(``docs/RECORDS.md``: the actions, agent specs by seat, and ``meta`` with the pairing,
A, B, deal index and play).

Long runs: the folder is made first and, while deals are played, holds
``arena.checkpoint.json`` (:class:`ArenaCheckpoint`: the settings, the deals and every
finished deal's result per pairing, written atomically at the start, every 20 s and on
Ctrl-C or SIGTERM). ``twilight arena --resume FOLDER`` plays only the missing deals and
writes the figures of an uninterrupted run; the checkpoint is removed at the end. The
checkpoint is checked in full (every setting, value range and result) before any deal
is played (docs/API.md, Study checkpoints).
"""

from __future__ import annotations

import argparse
import csv
import itertools
import os
import sys
import time
from dataclasses import dataclass

import numpy as np

from twilight_env.util.argtypes import MAX_DEALS, deal_count, interrupt_status, positive_int
from twilight_env.util.atomic import atomic_file, write_json
from twilight_env.rules.engine import State
from twilight_env.records.game_records import check_records_folder
from twilight_env.util.seeding import check_seed

from twilight_env.experiments.common import (RunCheckpoint, check_deal_source, check_int, check_keys, check_new_file, check_new_folder,
                     check_score_pair, check_specs, check_workers, default_workers, fmt_ci, git_hash, lockstep_ok,
                     mean_ci, out_dir, play_lockstep, play_seeded, resume_conflicts, run_tasks, text_table)
from twilight_env.util.distributed import add_ray_argument, prepare_runner, ray_runner, runner_label
from twilight_env.records.dealsets import check_deals, deal_set, run_seed, seed_or_deal_set


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("specs", nargs="*", metavar="SPEC",
                   help="agent specs, at least two, e.g. random heuristic pimc:worlds=32 (none with --resume)")
    p.add_argument("--players", type=int, choices=(3, 4), default=None, help="4 or 3 players (default 4)")
    p.add_argument("--deals", type=deal_count, default=None,
                   help=f"number of deals, each played twice per pairing (1..{MAX_DEALS:,}; default 200, or all of "
                        "--deals-file)")
    p.add_argument("--seed", type=seed_or_deal_set, default=None,
                   help="seed of the deals and the agents' streams, or a held-out deal set by name (heldout-1, "
                        "heldout-2, heldout-3: its seed) (default 0; with --deals-file, the seed saved in the file)")
    p.add_argument("--workers", type=positive_int, default=default_workers(),
                   help="worker processes (default: os.cpu_count(); 1 runs in this process)")
    p.add_argument("--out", default=None,
                   help="output folder (default out/arena__{seed}__{unixtime}); one that holds files needs --force")
    p.add_argument("--deals-file", default=None, help="play the deals of this JSON deal file")
    p.add_argument("--save-deals", default=None,
                   help="write the deals used to this JSON deal file (an existing file needs --force)")
    p.add_argument("--force", action="store_true",
                   help="write over the outputs in an existing --out folder and an existing --save-deals file")
    p.add_argument("--quiet", action="store_true",
                   help="no progress (a bar on a terminal, else a line every 30 s on stderr)")
    p.add_argument("--no-lockstep", action="store_true",
                   help="play deal by deal even with a batched agent (neural, policy); same results, slower")
    p.add_argument("--resume", default=None, metavar="FOLDER",
                   help="finish an interrupted run from the checkpoint in its output folder (its settings are "
                        "kept; only --workers, --ray and --quiet may be given with it; either runner may finish it)")
    p.add_argument("--records", default=None, metavar="DIR",
                   help="also write every play of every deal as a game record to DIR/arena.records.jsonl.gz "
                        "(docs/RECORDS.md; twilight replay reads it)")
    add_ray_argument(p)


def duplicate_seats(a: str, b: str, num_players: int, play: int) -> list[str]:
    """Agent spec by seat for play 0 or 1 of a duplicate pair (table in the module docstring).

    In 3 players seat 2 (the new moon) is given the solo's spec; ``play_deal`` lets the
    solo decide for it (R7.3).
    """
    first, second = (a, b) if play == 0 else (b, a)
    return [first, second, first, second]


def a_side(play: int) -> int:
    """Side (0: seats 0, 2; 1: seats 1, 3) that A holds in play 0 or 1."""
    return play


def _result(deal_index: int, pairing: int, states: list) -> dict:
    """A's points and both sides' scores in the two plays of one deal."""
    pts, sides = [], []
    for play, state in enumerate(states):
        s = state.side_scores()
        mine = a_side(play)
        pts.append(s[mine] - s[1 - mine])
        sides.append(list(s))
    return {"deal": deal_index, "pairing": pairing, "points": pts, "side_scores": sides}


RECORDS_FILE = "arena.records.jsonl.gz"
"""File name of the game records that ``--records DIR`` writes into DIR."""


def _records(deal_index: int, pairing: int, states: list, a: str, b: str, seed: int) -> list[dict]:
    """The deal records (``docs/RECORDS.md``) of the two plays of one deal."""
    from twilight_env.records.game_records import deal_record

    return [deal_record(st, None, agents=duplicate_seats(a, b, st.num_players, play), seed=seed,
                        meta={"study": "arena", "pairing": pairing, "a": a, "b": b, "deal": deal_index, "play": play})
            for play, st in enumerate(states)]


def _play_pair(task) -> list[dict]:
    """Worker: one deal, both plays, for one pairing. Returns A's points per play (and,
    when the task's optional 8th item is true, the plays' records under ``"records"``)."""
    deal_index, deal, a, b, num_players, seed, pairing, *keep = task
    states = []
    for play in (0, 1):
        state = State.from_deal(deal, 0, num_players)
        # the pairing enters the seat index so two pairings with the same spec differ
        specs = duplicate_seats(a, b, num_players, play)
        states.append(play_seeded(state, specs, seed, deal_index, 2 * pairing + play))
    r = _result(deal_index, pairing, states)
    if keep and keep[0]:
        r["records"] = _records(deal_index, pairing, states, a, b, seed)
    return [r]


def _play_pair_lockstep(task) -> list[dict]:
    """Worker: a block of deals of one pairing, both plays each, all played side by side
    (:func:`~twilight_env.experiments.common.play_lockstep`: batched agents decide for every deal of
    the block in one call). Same results as :func:`_play_pair` on each deal."""
    deal_indices, deals, a, b, num_players, seed, pairing, *keep = task
    games = [(State.from_deal(deal, 0, num_players), duplicate_seats(a, b, num_players, play), seed, d,
              2 * pairing + play)
             for d, deal in zip(deal_indices, deals) for play in (0, 1)]
    states = play_lockstep(games)
    out = [_result(d, pairing, states[2 * k:2 * k + 2]) for k, d in enumerate(deal_indices)]
    if keep and keep[0]:
        for k, (d, r) in enumerate(zip(deal_indices, out)):
            r["records"] = _records(d, pairing, states[2 * k:2 * k + 2], a, b, seed)
    return out


def _play_task(task) -> list[dict]:
    kind, body = task
    return _play_pair_lockstep(body) if kind == "block" else _play_pair(body)


LOCKSTEP_BLOCK = 100
"""Deals per worker task for pairings with a batched agent (``neural``): 200 games whose
decisions are scored together."""


def labels_of(specs: list[str]) -> list[str]:
    """Unique labels for the specs (a repeated spec gets ``#2``, ``#3``...)."""
    out, seen = [], {}
    for s in specs:
        seen[s] = seen.get(s, 0) + 1
        out.append(s if seen[s] == 1 else f"{s}#{seen[s]}")
    return out


def play_arena(specs: list[str], deals: list, num_players: int, seed: int, workers: int,
               progress: bool = True, lockstep: bool = True, checkpoint: "ArenaCheckpoint | None" = None,
               records: str | None = None) -> dict:
    """Play the round robin and compute all figures.

    Args:
        specs: agent specs (validated), at least two.
        deals: the deal set (lists of 4 hands of card codes).
        num_players: 4 or 3.
        seed: agents' streams.
        workers: worker processes (1: in this process).
        lockstep: play the deals of a pairing that involves a batched agent (``neural``)
            side by side in blocks, scoring their decisions together
            (:func:`~twilight_env.experiments.common.play_lockstep`); the results are the same either way.
        checkpoint: deals it holds are not played again, and each finished deal is
            recorded in it. Every deal is seeded by (seed, deal index, pairing), so the
            figures equal those of an uninterrupted run.
        records: a file path: write every play's deal record there (JSON lines, gzip for
            ``.gz``; :mod:`twilight_env.records.game_records`), in task order.

    Returns:
        dict with ``"pairings"`` (figures per pairing), ``"ratings"`` and per-pair data.

    Raises:
        KeyboardInterrupt: on Ctrl-C (the deals finished so far are in ``checkpoint``).
        ValueError: a seed that is not an int >= 0 (a bool included; the message names ``seed``).
    """
    import openskill.models  # noqa: F401  (the ratings' model: missing, it fails before any deal is played)

    seed = check_seed(seed, allow_none=False)
    labels = labels_of(specs)
    pairs = list(itertools.combinations(range(len(specs)), 2))
    # pairing -> deal -> {"points": A's points per play, "side_scores": per play}
    done: dict[int, dict[int, dict]] = {k: dict(checkpoint.finished(k)) if checkpoint else {}
                                        for k in range(len(pairs))}
    tasks = _arena_tasks(specs, deals, num_players, seed, workers, pairs, done, lockstep, records is not None)
    writer = None
    if records is not None:
        from twilight_env.records.game_records import RecordWriter

        writer = RecordWriter(records)

    def on_result(block: list[dict]) -> None:
        for r in block:
            if writer is not None:  # records leave the results as they arrive
                for rec in r.pop("records"):
                    writer.write(rec)
            kept = {"points": r["points"], "side_scores": r["side_scores"]}
            done[r["pairing"]][r["deal"]] = kept
            if checkpoint is not None:
                checkpoint.record(r["pairing"], r["deal"], kept)

    try:
        run_tasks(_play_task, tasks, workers, progress=progress, on_result=on_result, units=_task_deals,
                  desc=_progress_desc(len(pairs), len(deals)), done=sum(len(v) for v in done.values()))
    finally:
        if writer is not None:
            writer.close()
    pairings = _pairings(specs, labels, pairs, done, len(deals), num_players)
    return {"pairings": pairings, "ratings": rate(specs, pairs, pairings, len(deals))}


def _progress_desc(pairings: int, deals: int) -> str:
    """The progress lines' prefix, saying what their count is: every deal once per pairing
    (``"arena, 3 pairings x 20 deals"`` before ``"60 deals (60 to play)"``)."""
    return f"arena, {pairings} pairing{'s' if pairings != 1 else ''} x {deals} deals"


def _pairings(specs: list[str], labels: list[str], pairs: list, done: dict, n_deals: int,
              num_players: int) -> list[dict]:
    """The figures of each pairing ``pairs[k]`` from its finished deals ``done[k]``, in order."""
    pairings = []
    for k, (i, j) in enumerate(pairs):
        rs = [done[k][d] for d in range(n_deals)]
        pairings.append({"a": labels[i], "b": labels[j], "a_spec": specs[i], "b_spec": specs[j],
                         **pairing_figures([r["points"] for r in rs], [r["side_scores"] for r in rs], num_players)})
    return pairings


def _task_deals(task: tuple) -> int:
    """Deals (of one pairing) in a task of :func:`_arena_tasks`: a block's, or 1."""
    kind, args = task
    return len(args[0]) if kind == "block" else 1


def _arena_tasks(specs: list[str], deals: list, num_players: int, seed: int, workers: int, pairs: list,
                 done: dict, lockstep: bool, keep_records: bool) -> list[tuple]:
    """The worker tasks of the deals not in ``done``: per pairing, blocks of deals
    (``"block"``, played side by side) where a batched agent plays and ``lockstep`` is on,
    single deals (``"deal"``) otherwise."""
    tasks = []
    for k, (i, j) in enumerate(pairs):
        todo = [d for d in range(len(deals)) if d not in done[k]]
        if lockstep and lockstep_ok([specs[i], specs[j]]):
            # blocks small enough that every worker gets some
            size = max(1, min(LOCKSTEP_BLOCK, -(-len(todo) // max(1, workers))))
            for start in range(0, len(todo), size):
                idx = todo[start:start + size]
                tasks.append(("block", (idx, [deals[d] for d in idx], specs[i], specs[j], num_players, seed, k,
                                        keep_records)))
        else:
            tasks.extend(("deal", (d, deals[d], specs[i], specs[j], num_players, seed, k, keep_records))
                         for d in todo)
    return tasks


def _win_rate(points: np.ndarray) -> float:
    """Share of plays with points above 0, a tie counting half."""
    return float(np.mean(np.where(points > 0, 1.0, np.where(points == 0, 0.5, 0.0))))


def pairing_figures(points: list, side_scores: list, num_players: int) -> dict:
    """The figures of one pairing from A's points per play of each deal.

    Args:
        points: ``(deals, 2)`` A's side deal score minus B's, play 0 then play 1 (deal points).
        side_scores: per deal, both plays' ``[side 0, side 1]`` deal scores (kept as given).
        num_players: 3 adds the figures per role (A solo in play 0, A on the Sun side in play 1).

    Returns:
        ``deals``; ``mean``, ``ci_low``, ``ci_high`` (mean pair score, 95% Student-t
        interval; deal points per deal); ``win_rate`` (share of plays A's side won, ties
        half); ``pair_scores`` (per deal); ``points``; ``side_scores``; in 3 players ``a_as_solo`` and
        ``a_as_sun`` (``mean``, ``ci_low``, ``ci_high``, ``win_rate`` per play).
    """
    pts = np.array(points, dtype=float)  # (deals, 2): A's points per play
    pair_scores = pts.mean(axis=1)
    m, lo, hi = mean_ci(pair_scores)
    entry = {"deals": len(pts), "mean": m, "ci_low": lo, "ci_high": hi, "win_rate": _win_rate(pts),
             "pair_scores": pair_scores.tolist(), "points": pts.tolist(), "side_scores": side_scores}
    if num_players == 3:
        for role, col in (("solo", 0), ("sun", 1)):
            rm, rlo, rhi = mean_ci(pts[:, col])
            entry[f"a_as_{role}"] = {"mean": rm, "ci_low": rlo, "ci_high": rhi, "win_rate": _win_rate(pts[:, col])}
    return entry


RATING_ORDERS = 16
"""Orders of the duplicate pairs over which :func:`rate` averages the ratings."""


def rate(specs: list[str], pairs: list, pairings: list[dict], num_deals: int) -> list[dict]:
    """OpenSkill Plackett-Luce ratings, one update per duplicate pair (the sign of its
    score ranks A and B, 0 a tie); rows ``{"agent", "spec", "mu", "sigma", "ordinal"}``,
    highest ordinal first.

    The model updates online, so its result depends on the order of the games, and the
    last ones weigh most (50 wins then 30 losses rate an agent far below the same games in
    the other order). The games are therefore rated in :data:`RATING_ORDERS` seeded random
    orders (deal by deal, the pairings interleaved within a deal; the deals first sorted by
    their results) and ``mu`` and ``sigma`` averaged over them: the same figures for the
    same results, whatever the order of the deals."""
    from openskill.models import PlackettLuce

    labels = labels_of(specs)
    model = PlackettLuce()
    rng = np.random.default_rng(0)
    # a canonical order of the deals (by their results) before the seeded shuffles: deals
    # given in another order are rated alike
    canon = sorted(range(num_deals), key=lambda d: tuple(p["pair_scores"][d] for p in pairings))
    mu = {lab: 0.0 for lab in labels}
    sigma = {lab: 0.0 for lab in labels}
    for _ in range(RATING_ORDERS):
        ratings = {lab: model.rating(name=lab) for lab in labels}
        for d in (canon[int(x)] for x in rng.permutation(num_deals)):
            for k, (i, j) in enumerate(pairs):
                score = pairings[k]["pair_scores"][int(d)]
                a, b = labels[i], labels[j]
                ranks = [0, 1] if score > 0 else [1, 0] if score < 0 else [0, 0]
                (ra,), (rb,) = model.rate([[ratings[a]], [ratings[b]]], ranks=ranks)
                ratings[a], ratings[b] = ra, rb
        for lab in labels:
            mu[lab] += ratings[lab].mu / RATING_ORDERS
            sigma[lab] += ratings[lab].sigma / RATING_ORDERS
    return sorted(({"agent": lab, "spec": specs[n], "mu": mu[lab], "sigma": sigma[lab],
                    "ordinal": mu[lab] - 3 * sigma[lab]} for n, lab in enumerate(labels)),
                  key=lambda r: -r["ordinal"])


RATINGS_NOTE = ("Ratings: OpenSkill's Plackett-Luce model over every duplicate pair's result (win, loss or "
                "draw),\naveraged over 16 orders of the deals; mu is the skill estimate, sigma its "
                "uncertainty,\nordinal = mu - 3 sigma (the table's order, a cautious rank).")
"""The line ``twilight arena`` prints under its ratings table."""


class ArenaCheckpoint(RunCheckpoint):
    """The finished deals of an ``arena`` run in ``FOLDER/arena.checkpoint.json``
    (:class:`~twilight_env.experiments.common.RunCheckpoint`): the settings (specs, players, seed,
    lockstep, the deals' source, the command's arguments), the deals and, per pairing
    index, each finished deal's ``{"points", "side_scores"}``."""

    NAME = "arena.checkpoint.json"
    KIND = "twilight-arena-checkpoint"
    COMMAND = "twilight arena"
    RESULT_FILE = "arena.json"

    SETTINGS = ("specs", "num_players", "seed", "lockstep", "deals_source", "arguments")

    @classmethod
    def specs_of(cls, settings: dict) -> list[str]:
        """The run's agent specs (``settings["specs"]``)."""
        return list(settings["specs"])

    @classmethod
    def parse(cls, doc: dict) -> tuple[dict, list, dict]:
        """Check every setting (``specs`` at least two strings, ``num_players`` 3 or 4 and
        the same in the deals' source and the saved arguments, ``seed`` >= 0, ``lockstep``
        true or false, no unknown setting), the deals (valid, and the seed's own deals
        when drawn from a seed) and every result: both plays' side scores a pair one deal
        can give (R5) and A's points their difference."""
        st = check_keys(doc["settings"], "'settings'", cls.SETTINGS)
        specs = st["specs"]
        if (not isinstance(specs, list) or len(specs) < 2
                or not all(isinstance(x, str) and x.strip() for x in specs)):
            raise ValueError(f"settings 'specs' must be a list of at least two agent specs, got {specs!r}")
        if st["num_players"] not in (3, 4) or isinstance(st["num_players"], bool):
            raise ValueError(f"settings 'num_players' must be 3 or 4, got {st['num_players']!r}")
        players = st["num_players"]
        check_int(st["seed"], "settings 'seed'", 0)
        if not isinstance(st["lockstep"], bool):
            raise ValueError(f"settings 'lockstep' must be true or false, got {st['lockstep']!r}")
        if not isinstance(st["arguments"], dict):
            raise ValueError("settings 'arguments' must be an object")
        if st["arguments"].get("players", players) != players:
            raise ValueError(f"settings 'num_players' is {players} but the run was started with --players "
                             f"{st['arguments'].get('players')!r} (settings 'arguments'); were the settings edited?")
        deals = check_deals(doc["deals"], "its deals")
        if not deals:
            raise ValueError("it holds no deals; a run has at least 1")
        check_deal_source(st["deals_source"], "settings 'deals_source'", players, deals, st["seed"])
        _check_arguments(st)
        pairings = len(specs) * (len(specs) - 1) // 2
        if not isinstance(doc["done"], dict):
            raise ValueError("'done' is not an object")
        done = {}
        for k, v in doc["done"].items():
            if k not in {str(p) for p in range(pairings)}:
                raise ValueError(f"it holds results of pairing {k!r}, but its {len(specs)} specs make "
                                 f"{pairings} pairing(s) (0..{pairings - 1})")
            if not isinstance(v, dict):
                raise ValueError(f"the results of pairing {k} are not an object")
            done[k] = {}
            for d, r in v.items():
                if not (isinstance(d, str) and d.isdigit() and int(d) < len(deals)):
                    raise ValueError(f"the results of pairing {k} name deal {d!r}; the run's deals are "
                                     f"0..{len(deals) - 1}")
                try:
                    check_keys(r, f"the result of deal {d} of pairing {k}", ("points", "side_scores"))
                    pts, sides = r["points"], r["side_scores"]
                    if not isinstance(sides, list) or len(sides) != 2 or not isinstance(pts, list) or len(pts) != 2:
                        raise ValueError("two plays expected")
                    sides = [check_score_pair(sides[play], f"side_scores of play {play}") for play in (0, 1)]
                    for play in (0, 1):
                        mine = a_side(play)
                        if pts[play] != sides[play][mine] - sides[play][1 - mine] or isinstance(pts[play], bool):
                            raise ValueError(f"points of play {play} is {pts[play]!r}, but its side scores "
                                             f"{sides[play]} give {sides[play][mine] - sides[play][1 - mine]}")
                except ValueError as e:
                    raise ValueError(f"a malformed result for deal {d} of pairing {k}: {e}") from None
                done[k][int(d)] = {"points": list(pts), "side_scores": sides}
        return st, deals, done


def _check_arguments(st: dict) -> None:
    """Cross-check an arena checkpoint's settings with the command's saved arguments
    (``settings["arguments"]``): the specs it was started with, in that order (the pairing
    indices of the results follow them), and the seed.

    Raises:
        ValueError: naming the setting that differs.
    """
    args = st["arguments"]
    given = args.get("specs")
    if given is not None:
        if not isinstance(given, list) or [x.strip() if isinstance(x, str) else x for x in given] != st["specs"]:
            raise ValueError(f"settings 'specs' is {st['specs']!r}, but the run was started with {given!r} "
                             "(settings 'arguments'); the results are stored per pairing of those specs; were the "
                             "settings edited?")
    seed = args.get("seed")
    if seed is not None and seed != st["seed"]:
        raise ValueError(f"settings 'seed' is {st['seed']!r}, but the run was started with --seed {seed!r} "
                         "(settings 'arguments'); were the settings edited?")


def _pairing_rows(res: dict, num_players: int) -> tuple[list[str], list[list]]:
    header = ["A", "B", "deals", "A points/deal [95% CI]", "A win rate"]
    if num_players == 3:
        header += ["A as solo", "A as Sun"]
    rows = []
    for p in res["pairings"]:
        row = [p["a"], p["b"], p["deals"], fmt_ci(p["mean"], p["ci_low"], p["ci_high"], signed=True), f"{p['win_rate']:.3f}"]
        if num_players == 3:
            for role in ("solo", "sun"):
                r = p[f"a_as_{role}"]
                row.append(fmt_ci(r["mean"], r["ci_low"], r["ci_high"], signed=True))
        rows.append(row)
    return header, rows


@dataclass
class _Setup:
    """What a ``twilight arena`` invocation plays: a new run's settings, or a resumed one's."""

    specs: list
    players: int
    seed: int
    lockstep: bool
    meta: dict
    deals: list
    folder: str
    arguments: dict
    ckpt: ArenaCheckpoint


def _resumed_setup(args) -> _Setup:
    resume_conflicts((("specs", args.specs), ("--players", args.players), ("--deals", args.deals),
                      ("--seed", args.seed), ("--out", args.out), ("--deals-file", args.deals_file),
                      ("--save-deals", args.save_deals), ("--no-lockstep", args.no_lockstep),
                      ("--force", args.force)), allowed="--workers, --ray and --quiet")
    ckpt = ArenaCheckpoint.load(args.resume)
    st = ckpt.settings
    return _Setup(check_specs(st["specs"], num_players=st["num_players"]), st["num_players"], st["seed"], st["lockstep"],
                  st["deals_source"],
                  ckpt.deals, args.resume, st["arguments"], ckpt)


def _new_setup(args) -> _Setup:
    """Check a new run's arguments, draw its deals, make its folder and write the checkpoint
    (so the folder is resumable from the start)."""
    players = args.players or 4
    specs = check_specs(args.specs, num_players=players)
    if len(specs) < 2:
        raise ValueError("arena needs at least two agent specs (or --resume FOLDER)")
    n = args.deals
    if n is None and not args.deals_file:
        n = 200
    if args.out:
        check_new_folder(args.out, "--out", args.force)
    if args.save_deals:
        check_new_file(args.save_deals, "--save-deals", args.force)
    if getattr(args, "records", None) is not None:  # before any folder is made or deal played
        check_records_folder(args.records, RECORDS_FILE, "--records", args.force)
    deals, meta = deal_set(n, args.seed, players, args.deals_file, args.save_deals)
    seed = run_seed(args.seed, meta)
    prepare_runner(args.ray)  # a refused --ray address makes no folder
    folder = out_dir(args.out, "arena", seed, args.force)
    lockstep = not args.no_lockstep
    arguments = {k: v for k, v in vars(args).items() if k != "func"}
    arguments["players"] = players
    settings = {"specs": specs, "num_players": players, "seed": seed, "lockstep": lockstep,
                "deals_source": meta, "arguments": arguments}
    ckpt = ArenaCheckpoint(folder, settings, [[list(h) for h in d] for d in deals])
    ckpt.write()
    return _Setup(specs, players, seed, lockstep, meta, deals, folder, arguments, ckpt)


def _records_file(args) -> str | None:
    """The records file of ``--records DIR`` (the folder made), or None.

    Raises:
        ValueError: ``--records`` given with ``--resume``.
    """
    records = getattr(args, "records", None)
    if records is None:
        return None
    if args.resume is not None:
        raise ValueError("--records cannot be given with --resume: the records of the deals played before "
                         "the interrupt are not in the checkpoint")
    os.makedirs(records, exist_ok=True)
    return os.path.join(records, RECORDS_FILE)


def run(args) -> int:
    """``twilight arena``: play (or, with ``--resume``, finish) a round robin and write its files.

    Ctrl-C or SIGTERM saves the finished deals in the checkpoint, prints one line that
    says how to resume, and returns 130 (143 for SIGTERM).

    Raises:
        ValueError: bad agent spec, bad deal file, an output path that exists (without
            ``--force``), settings given with ``--resume``, or an unreadable checkpoint.
    """
    workers = check_workers(args.workers)
    su = _resumed_setup(args) if args.resume is not None else _new_setup(args)
    records = _records_file(args)
    t0 = time.time()
    try:
        with ray_runner(args.ray):
            res = play_arena(su.specs, su.deals, su.players, su.seed, workers, progress=not args.quiet,
                             lockstep=su.lockstep, checkpoint=su.ckpt, records=records)
    except KeyboardInterrupt as e:
        print(su.ckpt.interrupted(e), file=sys.stderr)
        return interrupt_status(e)
    elapsed = su.ckpt.elapsed + time.time() - t0
    doc = {
        "arguments": su.arguments,
        "specs": su.specs, "num_players": su.players, "deals": len(su.deals), "seed": su.seed,
        "deals_source": su.meta, "workers": workers, "runner": runner_label(args.ray), "run_seconds": elapsed,
        "git": git_hash(), "resumed": args.resume is not None, "results": res,
    }
    write_outputs(su.folder, doc)
    print(f"Duplicate arena, {su.players} players, {len(su.deals)} deals x 2 plays per pairing, "
          f"seed {su.seed}, {elapsed:.1f} s")
    print(text_table(*_pairing_rows(res, su.players)))
    print()
    print(text_table(["agent", "mu", "sigma", "ordinal"],
                     [[r["agent"], f"{r['mu']:.2f}", f"{r['sigma']:.2f}", f"{r['ordinal']:.2f}"]
                      for r in res["ratings"]]))
    print(f"\n{RATINGS_NOTE}\nA points/deal: A's side deal points minus B's, mean over duplicate pairs, "
          f"95% t interval.\nFiles: {su.folder}/arena.json, arena.csv, ratings.csv"
          + (f"; records: {records}" if records else ""))
    su.ckpt.remove()
    return 0


def write_outputs(folder: str, doc: dict) -> None:
    """Write ``arena.json`` (``doc``), ``arena.csv`` (one row per pairing; in 3 players
    also the figures per role) and ``ratings.csv`` into ``folder``, each atomically
    (:mod:`twilight_env.util.atomic`: a full disk leaves the previous file whole and raises
    a one-line ``WriteError`` naming the file)."""
    res, players = doc["results"], doc["num_players"]
    write_json(os.path.join(folder, "arena.json"), doc, arrays_inline=True)
    with atomic_file(os.path.join(folder, "arena.csv"), newline="") as f:
        w = csv.writer(f)
        cols = ["a", "b", "deals", "mean", "ci_low", "ci_high", "win_rate"]
        extra = ["solo_mean", "solo_ci_low", "solo_ci_high", "sun_mean", "sun_ci_low", "sun_ci_high"] \
            if players == 3 else []
        w.writerow(cols + extra)
        for p in res["pairings"]:
            row = [p[c] for c in cols]
            if players == 3:
                for role in ("solo", "sun"):
                    r = p[f"a_as_{role}"]
                    row += [r["mean"], r["ci_low"], r["ci_high"]]
            w.writerow(row)
    with atomic_file(os.path.join(folder, "ratings.csv"), newline="") as f:
        w = csv.writer(f)
        w.writerow(["agent", "spec", "mu", "sigma", "ordinal"])
        for r in res["ratings"]:
            w.writerow([r["agent"], r["spec"], r["mu"], r["sigma"], r["ordinal"]])
