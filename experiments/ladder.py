"""``twilight ladder``: a strength ladder of agents, on held-out duplicate deals.

The rungs are agent specs in the order they are expected to rank, weakest first (by
default ``random < heuristic < neural:default < pimc < ismcts``; agents that cannot be
built here, e.g. ``neural`` without torch, are left out with a note). Each pair of
consecutive rungs plays a duplicate match (``twilight arena``'s format: every deal twice
with the sides swapped, R2.1 / R7.1-R7.3) on the same deal set, by default the named
held-out set ``heldout-1`` (``twilight_env.records.dealsets.HELDOUT_SEEDS``), which no training
run, evaluation during training or tuning uses.

Figures, per step (upper rung against the one below, 95% intervals):

- the margin, the upper rung's deal points per deal (Student-t over duplicate pairs);
  the step **holds** when the whole interval is above 0;
- the upper rung's win rate (plays its side outscored the other; ties count half).

Ratings, per rung: the **points rating**, the sum of the margins below it (the bottom
rung is 0: deal points per deal above the bottom rung along the ladder), and an **Elo
rating**, the sum of ``400 log10(w / (1 - w))`` over the steps below it, ``w`` being the
step's win rate (clipped to [0.001, 0.999]: above a step won on every play the Elo
rating is printed as a lower bound, ``>= 1200``). Both intervals come from one percentile bootstrap that resamples the
deals (``--boot`` resamples): every step is played on the same deals, so resampling
deals keeps the steps' correlation. Consecutive rungs only: a ladder measures each step,
not every pair (``twilight arena`` plays round robins).

Output folder (default ``out/ladder__{seed}__{unixtime}``): ``ladder.json`` (every
figure, the per-deal pair scores of every step, run times), ``ladder.md`` (table),
``ladder.png`` (ratings with intervals). Each finished step is saved at once
(``ladder.steps.json``), and ``twilight ladder --resume FOLDER`` plays only the steps
still missing (a step interrupted midway is played again from its start).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from dataclasses import dataclass

import numpy as np

from twilight_env.util.argtypes import MAX_DEALS, deal_count, non_negative_int
from twilight_env.util.atomic import save_figure, write_json, write_text
from twilight_env.util.seeding import check_seed

from twilight_env.experiments.common import (DIGEST_KEY, check_deal_file, check_deal_source, check_digest, check_int,
                     check_keys, check_seconds, check_specs, check_workers, default_workers, fmt_ci, git_hash,
                     markdown_table, mean_ci, out_dir, possible_margin, read_progress_file, text_table, with_digest,
                     write_json_atomic)
from twilight_env.records.dealsets import HELDOUT_SEEDS, check_deals, deal_set, heldout_seed
from twilight_env.util.distributed import add_ray_argument, prepare_runner, ray_runner, runner_label

DEFAULT_RUNGS = ("random", "heuristic", "neural:default", "pimc", "ismcts")
"""Rungs by default, weakest first; those that cannot be built here are left out."""
DEFAULT_DEALS = 100
DEFAULT_BOOT = 2000
MAX_BOOT = 100_000
"""Most bootstrap resamples (``--boot``), checked before any step is played."""
STEPS_FILE = "ladder.steps.json"
STEPS_KIND = "twilight-ladder-steps"
BOOT_STREAM = 3
"""Tag of the bootstrap's random stream (distinct from deals, agents and edge's bootstrap)."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("rungs", nargs="*", metavar="SPEC",
                   help=f"agent specs, weakest first (default: {' '.join(DEFAULT_RUNGS)}, those available here)")
    p.add_argument("--players", type=int, choices=(3, 4), default=3, help="3 or 4 players (default 3)")
    p.add_argument("--deals", type=deal_count, default=None,
                   help=f"deals per step, each played twice (2..{MAX_DEALS:,}; default {DEFAULT_DEALS}, or all of "
                        "--deals-file)")
    p.add_argument("--deal-set", default="heldout-1", choices=sorted(HELDOUT_SEEDS),
                   help="named held-out deal set (default heldout-1); --seed or --deals-file replace it")
    p.add_argument("--seed", type=non_negative_int, default=None,
                   help="seed of the deals and the agents instead of a named held-out set")
    p.add_argument("--deals-file", default=None, help="play the deals of this JSON deal file")
    p.add_argument("--boot", type=int, default=None, help=f"bootstrap resamples of the deals (default {DEFAULT_BOOT})")
    p.add_argument("--workers", type=int, default=default_workers(),
                   help="worker processes (default: os.cpu_count(); 1 runs in this process)")
    p.add_argument("--out", default=None, help="output folder (default out/ladder__{seed}__{unixtime})")
    p.add_argument("--force", action="store_true", help="write into an --out folder that already holds files")
    p.add_argument("--quiet", action="store_true",
                   help="no progress (a bar on a terminal, else a line every 30 s on stderr)")
    p.add_argument("--resume", default=None, metavar="FOLDER",
                   help="finish an interrupted ladder: play only the steps missing from FOLDER (its settings are "
                        "kept; only --workers, --ray and --quiet may be given with it)")
    add_ray_argument(p)


def default_rungs() -> tuple[list[str], list[str]]:
    """The default rungs that can be built here, and the names of those left out."""
    from twilight_env.agents.base import agent_name
    from twilight_env.experiments.common import agent_available

    keep, left = [], []
    for spec in DEFAULT_RUNGS:
        (keep if agent_available(agent_name(spec)) else left).append(spec)
    return keep, left


# ---------------------------------------------------------------------------------
# figures
# ---------------------------------------------------------------------------------

def _win_rate(points: np.ndarray) -> float:
    """Share of plays the first agent's side won; ties half. ``points``: (deals, 2)."""
    return float(np.mean(np.where(points > 0, 1.0, np.where(points == 0, 0.5, 0.0))))


ELO_CLIP = 1e-3
"""Win rates are clipped to ``[ELO_CLIP, 1 - ELO_CLIP]`` before taking their Elo (:func:`elo_of`)."""


def elo_of(w: float) -> float:
    """Elo difference ``400 log10(w / (1 - w))`` of a win rate, clipped to (0.001, 0.999):
    a step won every play reads about +1200, which is a lower bound (:func:`elo_cell`)."""
    w = min(max(w, ELO_CLIP), 1 - ELO_CLIP)
    return 400.0 * math.log10(w / (1 - w))


def elo_cell(rating: dict, steps_below: list[dict]) -> str:
    """The Elo rating of a rung as printed: ``"350 [210, 500]"``, or a bound where a
    step below it was won or lost on every play (its win rate clipped by :func:`elo_of`, so
    the rating and its interval are capped, not measured): ``">= 1200 (a step below won
    every play)"``, the lower end of the interval being a lower bound of the rating; an
    interval end reached by such resamples only (``elo_ci_capped``) reads ``"512 [338, >= 1200]"``.

    Args:
        rating: the rung's entry of :func:`ratings` (``elo``, ``elo_ci``, ``elo_ci_capped``:
            whether each end is a bound; absent in files written before, read as measured).
        steps_below: the figures of the steps below the rung (``win_rate``, ``upper``).
    """
    won = [s["upper"] for s in steps_below if s["win_rate"] >= 1 - ELO_CLIP]
    lost = [s["upper"] for s in steps_below if s["win_rate"] <= ELO_CLIP]
    if won and lost:
        return "unbounded (steps below won and lost every play)"
    if won:
        return f">= {rating['elo_ci'][0]:.0f} ({', '.join(won)} won every play)"
    if lost:
        return f"<= {rating['elo_ci'][1]:.0f} ({', '.join(lost)} lost every play)"
    low_capped, high_capped = rating.get("elo_ci_capped", (False, False))
    if low_capped or high_capped:  # a resample won or lost a step on every play: that end is a bound
        lo, hi = rating["elo_ci"]
        return f"{rating['elo']:.0f} [{'<= ' if low_capped else ''}{lo:.0f}, {'>= ' if high_capped else ''}{hi:.0f}]"
    return fmt_ci(rating["elo"], *rating["elo_ci"], digits=0)


def ratings(steps: list[dict], boot: int, seed: int, confidence: float = 0.95) -> list[dict]:
    """Points and Elo ratings of the rungs with percentile-bootstrap intervals.

    Args:
        steps: per step k (rung k+1 against rung k), ``"points"``: the upper rung's
            points per play, shape (deals, 2), all steps on the same deals.
        boot: bootstrap resamples of the deals.
        seed: the run's seed (the bootstrap stream is (seed, ``BOOT_STREAM``)).

    Returns:
        one dict per rung (len(steps) + 1), bottom first: ``points``, ``points_ci``,
        ``elo``, ``elo_ci`` (the bottom rung is 0 with interval [0, 0]).

    Raises:
        ValueError: when the steps are not played on the same number of deals, or
            ``boot`` < 1.
    """
    pts = [np.asarray(s["points"], dtype=float) for s in steps]
    n = {p.shape[0] for p in pts}
    if len(n) != 1:
        raise ValueError(f"every step must be played on the same deals; got deal counts {sorted(n)}")
    if isinstance(boot, bool) or not isinstance(boot, int) or boot < 1:
        raise ValueError(f"--boot must be a positive integer, got {boot!r}")
    deals = n.pop()
    margins = np.array([p.mean() for p in pts])
    elos = np.array([elo_of(_win_rate(p)) for p in pts])
    rng = np.random.default_rng([seed, BOOT_STREAM])
    bm = np.empty((boot, len(pts)))
    be = np.empty((boot, len(pts)))
    bw = np.empty((boot, len(pts)))  # resampled win rates: where they clip, the Elo is a cap
    for b in range(boot):
        idx = rng.integers(0, deals, deals)
        for k, p in enumerate(pts):
            bm[b, k] = p[idx].mean()
            bw[b, k] = _win_rate(p[idx])
            be[b, k] = elo_of(bw[b, k])
    lo_q, hi_q = 100 * (1 - confidence) / 2, 100 * (1 + confidence) / 2
    out = [{"points": 0.0, "points_ci": [0.0, 0.0], "elo": 0.0, "elo_ci": [0.0, 0.0]}]
    for k in range(len(pts)):
        cm, ce = bm[:, :k + 1].sum(axis=1), be[:, :k + 1].sum(axis=1)
        out.append({"points": float(margins[:k + 1].sum()),
                    "points_ci": [float(np.percentile(cm, lo_q)), float(np.percentile(cm, hi_q))],
                    "elo": float(elos[:k + 1].sum()),
                    "elo_ci": [float(np.percentile(ce, lo_q)), float(np.percentile(ce, hi_q))]})
        out[-1]["elo_ci_capped"] = _capped_ends(ce, bw[:, :k + 1], *out[-1]["elo_ci"])
    return out


def _capped_ends(ce: np.ndarray, bw: np.ndarray, lo: float, hi: float) -> list[bool]:
    """Whether each end of a rung's Elo interval is a bound rather than a measurement: the
    upper end when a resample at or below it had a step won on every play (its Elo clipped
    by :func:`elo_of`; unclipped it would lie above), the lower end likewise for a step lost
    on every play. ``ce``: (boot,) summed Elo per resample; ``bw``: (boot, steps) win rates."""
    won, lost = (bw >= 1 - ELO_CLIP).any(axis=1), (bw <= ELO_CLIP).any(axis=1)
    return [bool(np.any(lost & (ce >= lo))), bool(np.any(won & (ce <= hi)))]


def step_figures(pairing: dict, num_players: int) -> dict:
    """The figures of one step from ``play_arena``'s pairing entry (upper rung = A)."""
    pts = np.array([[p for p in pair] for pair in pairing["points"]], dtype=float)
    m, lo, hi = mean_ci(pts.mean(axis=1))
    fig = {"upper": pairing["a_spec"], "lower": pairing["b_spec"], "deals": int(pts.shape[0]),
           "margin": m, "ci_low": lo, "ci_high": hi, "holds": bool(lo > 0), "win_rate": _win_rate(pts),
           "points": pts.tolist(), "seconds": pairing["seconds"]}
    if num_players == 3:
        for role, col in (("solo", 0), ("sun", 1)):
            rm, rlo, rhi = mean_ci(pts[:, col])
            fig[f"upper_as_{role}"] = {"mean": rm, "ci_low": rlo, "ci_high": rhi}
    return fig


# ---------------------------------------------------------------------------------
# playing
# ---------------------------------------------------------------------------------

def play_step(upper: str, lower: str, deals: list, num_players: int, seed: int, workers: int, step: int,
              progress: bool) -> dict:
    """Play one step (upper against lower) on ``deals``; returns its pairing entry with
    ``points`` (the upper rung's points per play, (deals, 2)) and ``seconds``."""
    from twilight_env.experiments.arena import play_arena

    t0 = time.time()
    # the step index seeds the agents' streams, so two steps with equal specs differ
    res = play_arena([upper, lower], deals, num_players, seed + 7919 * step, workers, progress=progress)
    entry = dict(res["pairings"][0])
    entry["seconds"] = time.time() - t0
    return entry


def _load_steps(folder: str) -> dict:
    """Read and check ``FOLDER/ladder.steps.json`` before anything is played.

    Checked: the file's JSON (one line naming it), its keys (unknown ones refused), every
    setting (``rungs`` at least two specs, ``num_players`` 3 or 4 and the same in the
    deals' source, ``seed`` >= 0, ``boot`` >= 1), the deals (valid, as many as
    ``num_deals``, the seed's own deals when drawn from a seed) and every finished step
    (its rungs, one pair of A's points per deal, each a difference one deal can give,
    R5; its seconds). Each step's figures are recomputed from its points.

    Raises:
        ValueError: naming the file, the field and the allowed values.
    """
    path = os.path.join(folder, STEPS_FILE)
    doc = read_progress_file(folder, STEPS_FILE, STEPS_KIND, 1, "ladder progress file",
                             "twilight ladder progress file", "ladder.json")
    verified = check_digest(doc, path, "ladder progress file")
    try:
        check_keys(doc, "the file", ("kind", "version", "settings", "deals", "steps"), ("num_deals", DIGEST_KEY))
        st = check_keys(doc["settings"], "'settings'", ("rungs", "num_players", "seed", "boot", "source"),
                        ("left_out",))
        rungs = st["rungs"]
        if not isinstance(rungs, list) or len(rungs) < 2 or not all(isinstance(r, str) and r.strip() for r in rungs):
            raise ValueError(f"settings 'rungs' must be a list of at least two agent specs, got {rungs!r}")
        if st["num_players"] not in (3, 4) or isinstance(st["num_players"], bool):
            raise ValueError(f"settings 'num_players' must be 3 or 4, got {st['num_players']!r}")
        check_int(st["seed"], "settings 'seed'", 0)
        check_int(st["boot"], "settings 'boot'", 1, MAX_BOOT)
        left_out = st.get("left_out", [])
        if not isinstance(left_out, list) or not all(isinstance(x, str) for x in left_out):
            raise ValueError(f"settings 'left_out' must be a list of agent specs, got {left_out!r}")
        deals = check_deals(doc["deals"], "its deals")
        if len(deals) < 2:
            raise ValueError(f"it holds {len(deals)} deal(s); a ladder plays at least 2")
        if "num_deals" in doc and check_int(doc["num_deals"], "'num_deals'", 2) != len(deals):
            raise ValueError(f"'num_deals' is {doc['num_deals']} but the file holds {len(deals)} deals; the deal "
                             "list was shortened or lengthened by hand")
        check_deal_source(st["source"], "settings 'source'", st["num_players"], deals, st["seed"])
        if not verified:
            check_deal_file(st["source"], "settings 'source'", deals)
        name = st["source"].get("name")
        if name is not None and (name not in HELDOUT_SEEDS or st["source"].get("seed") != heldout_seed(name)):
            raise ValueError(f"settings 'source' names the deal set {name!r} with seed {st['source'].get('seed')!r}; "
                             f"the named sets are {', '.join(f'{k} (seed {heldout_seed(k)})' for k in HELDOUT_SEEDS)}")
        steps = doc["steps"]
        if not isinstance(steps, list) or len(steps) > len(rungs) - 1:
            raise ValueError(f"'steps' must be a list of at most {len(rungs) - 1} finished step(s), got "
                             f"{type(steps).__name__}" + (f" of {len(steps)}" if isinstance(steps, list) else ""))
        checked = [_check_step(k, step, rungs, len(deals), st["num_players"]) for k, step in enumerate(steps)]
    except KeyError as e:
        raise ValueError(f"ladder progress file {path!r} is malformed: the key {e} is missing") from None
    except (TypeError, ValueError) as e:
        raise ValueError(f"ladder progress file {path!r} is malformed: {e}") from None
    return dict(doc, deals=deals, steps=checked)


def _check_step(k: int, step, rungs: list[str], num_deals: int, num_players: int) -> dict:
    """Finished step ``k`` of a progress file, checked (its rungs, one pair of A's points
    per deal, each a difference one deal can give, R5; its seconds), with its figures
    recomputed from its points (:func:`step_figures`).

    Raises:
        ValueError: naming the step, the field and the allowed values.
    """
    if not isinstance(step, dict):
        raise ValueError(f"step {k} must be an object")
    if step.get("upper") != rungs[k + 1] or step.get("lower") != rungs[k]:
        raise ValueError(f"step {k} plays {step.get('upper')!r} against {step.get('lower')!r}; the rungs "
                         f"say {rungs[k + 1]!r} against {rungs[k]!r}")
    pts = step.get("points")
    if (not isinstance(pts, list) or len(pts) != num_deals
            or any(not isinstance(p, list) or len(p) != 2 for p in pts)):
        raise ValueError(f"step {k} 'points' must hold one pair (two plays) per deal, {num_deals} pairs")
    for d, pair in enumerate(pts):
        for x in pair:
            if not (isinstance(x, (int, float)) and not isinstance(x, bool) and float(x).is_integer()
                    and possible_margin(int(x))):
                raise ValueError(f"step {k} 'points' of deal {d} holds {x!r}; a play's points are one "
                                 "side's deal score minus the other's, integers in -360..360 (R5)")
    seconds = check_seconds(step.get("seconds"), f"step {k} 'seconds'")
    return step_figures({"a_spec": rungs[k + 1], "b_spec": rungs[k], "seconds": seconds,
                         "points": [[int(x) for x in p] for p in pts]}, num_players)


@dataclass
class LadderSettings:
    """A ladder run: the ``twilight ladder`` flags as fields (module docstring)."""

    rungs: list[str] | None = None
    """Agent specs, weakest first; None or empty: :data:`DEFAULT_RUNGS` that can be built here (specs)."""
    num_players: int = 3
    """Variant: 3 or 4 players."""
    deals: int | None = None
    """Deals per step, each played twice (deals, >= 2; default :data:`DEFAULT_DEALS`, or all of ``deals_file``)."""
    deal_set_name: str = "heldout-1"
    """Named held-out deal set; ``seed`` or ``deals_file`` replace it (name)."""
    seed: int | None = None
    """Seed of the deals and the agents instead of a named set (integer >= 0)."""
    deals_file: str | None = None
    """JSON deal file to play instead (path)."""
    boot: int | None = None
    """Bootstrap resamples of the deals (resamples, 1..:data:`MAX_BOOT`; default :data:`DEFAULT_BOOT`)."""
    workers: int = 1
    """Worker processes; 1 plays in this process (processes)."""
    out: str | None = None
    """Output folder (default ``out/ladder__{seed}__{unixtime}``) (path)."""
    progress: bool = True
    """Show a progress bar per step (flag)."""
    verbose: bool = True
    """Print each step, the table and the summary (flag)."""
    resume: str | None = None
    """Finish the interrupted ladder in this folder; only ``workers``, ``ray``, ``progress`` and
    ``verbose`` may be given with it (path)."""
    ray: str | None = None
    """Ray cluster address to play on (``twilight_env.util.distributed``), or None for local processes."""
    force: bool = False
    """Write into an ``out`` folder that already holds files (flag)."""


@dataclass
class _Ladder:
    """What a run plays: a new ladder's checked settings and deals, or a resumed one's with its finished steps."""

    rungs: list[str]
    num_players: int
    seed: int
    boot: int
    meta: dict
    deals: list
    done: list
    folder: str
    left_out: list[str]

    def progress_doc(self) -> dict:
        """The progress file's content (``ladder.steps.json``)."""
        settings = {"rungs": self.rungs, "num_players": self.num_players, "seed": self.seed, "boot": self.boot,
                    "source": self.meta, "left_out": self.left_out}
        return {"kind": STEPS_KIND, "version": 1, "settings": settings, "deals": self.deals,
                "num_deals": len(self.deals), "steps": self.done}


def run_ladder(rungs: list[str] | None = None, **settings) -> str:
    """Play the ladder (module docstring) and write its outputs; returns the folder.

    ``run_ladder(rungs, **settings)`` is ``play_ladder(LadderSettings(rungs, **settings))``:
    ``settings`` are :class:`LadderSettings` fields (an unknown name raises ``TypeError``).

    Raises:
        ValueError: as :func:`play_ladder`.
    """
    return play_ladder(LadderSettings(rungs, **settings))


def play_ladder(settings: LadderSettings) -> str:
    """Play the ladder (module docstring) and write its outputs; returns the folder.

    Raises:
        ValueError: fewer than two rungs, a bad spec (listing the valid agents), a bad
            number, deal file or progress file, or settings given with ``resume``.
        ImportError: a package the ladder needs (ratings, intervals, plot, progress bar;
            the ``study`` extra) is missing; raised before any folder is made.
    """
    from twilight_env.util.extras import COMMAND_NEEDS, require

    for module in COMMAND_NEEDS["ladder"]:
        require(module, "study", "the ladder")
    t0 = time.time()
    s = settings
    workers = check_workers(s.workers)
    seed = check_seed(s.seed)
    lad = _resumed_ladder(s, seed) if s.resume is not None else _new_ladder(s, seed)
    path = os.path.join(lad.folder, STEPS_FILE)
    try:
        with ray_runner(s.ray):
            for k in range(len(lad.done), len(lad.rungs) - 1):
                upper, lower = lad.rungs[k + 1], lad.rungs[k]
                if s.verbose:
                    print(f"step {k + 1}/{len(lad.rungs) - 1}: {upper} against {lower}", file=sys.stderr)
                entry = play_step(upper, lower, lad.deals, lad.num_players, lad.seed, workers, k, s.progress)
                lad.done.append(step_figures(entry, lad.num_players))
                write_json_atomic(path, with_digest(lad.progress_doc()))
    except KeyboardInterrupt:
        write_json_atomic(path, with_digest(lad.progress_doc()))
        print(f"\ninterrupted: {len(lad.done)} finished step(s) saved in {path}; "
              f"continue with: twilight ladder --resume {lad.folder}", file=sys.stderr)
        raise
    rates = ratings(lad.done, lad.boot, lad.seed)
    doc = {"rungs": lad.rungs, "left_out": lad.left_out, "num_players": lad.num_players, "deals": len(lad.deals),
           "seed": lad.seed, "deals_source": lad.meta, "boot": lad.boot, "runner": runner_label(s.ray),
           "workers": workers, "git": git_hash(), "run_seconds": sum(st["seconds"] for st in lad.done),
           "resumed": s.resume is not None, "steps": lad.done,
           "ratings": [dict(r, spec=spec) for r, spec in zip(rates, lad.rungs)]}
    write_outputs(lad.folder, doc)
    if os.path.exists(path):
        os.remove(path)
    if s.verbose:
        header, rows = table_rows(doc)
        print(text_table(header, rows))
        print(f"\n{summary(doc)}\nFiles: {lad.folder}/ladder.md, ladder.json, ladder.png "
              f"({time.time() - t0:.0f} s this sitting)")
    return lad.folder


def _resumed_ladder(s: LadderSettings, seed: int | None) -> _Ladder:
    """The ladder saved in ``s.resume`` (checked in full by :func:`_load_steps`).

    Raises:
        ValueError: settings given beside ``resume``, or a bad progress file.
    """
    given = [k for k, v in (("rungs", s.rungs), ("--deals", s.deals), ("--seed", seed), ("--deals-file", s.deals_file),
                            ("--boot", s.boot), ("--out", s.out), ("--force", s.force or None)) if v not in (None, [])]
    if given:
        raise ValueError(f"--resume keeps the settings saved in the folder; do not give {', '.join(given)} "
                         "with it (only --workers, --ray and --quiet)")
    doc = _load_steps(s.resume)
    st = doc["settings"]
    check_specs(st["rungs"], num_players=st["num_players"])
    return _Ladder(st["rungs"], st["num_players"], st["seed"], st["boot"], st["source"], doc["deals"], doc["steps"],
                   s.resume, st.get("left_out", []))


def _new_ladder(s: LadderSettings, seed: int | None) -> _Ladder:
    """Check a new ladder's settings, draw its deals and make its folder.

    Raises:
        ValueError: fewer than two rungs, a bad spec, ``boot`` or ``deals``, a bad deal
            file, a refused ``ray`` address (before any folder is made).
    """
    left_out: list[str] = []
    rungs = s.rungs
    if not rungs:
        rungs, left_out = default_rungs()
    rungs = check_specs(rungs, num_players=s.num_players)
    if len(rungs) < 2:
        raise ValueError(f"a ladder needs at least two rungs, got {rungs}")
    boot = DEFAULT_BOOT if s.boot is None else s.boot
    check_int(boot, "--boot", 1, MAX_BOOT)
    n = s.deals if s.deals is not None or s.deals_file else DEFAULT_DEALS
    if n is not None and n < 2:
        raise ValueError(f"--deals must be at least 2 (intervals need two deals), got {n}")
    name = None
    if seed is None and not s.deals_file:
        seed, name = heldout_seed(s.deal_set_name), s.deal_set_name
    deal_list, meta = deal_set(n, seed, s.num_players, s.deals_file)
    seed = seed if seed is not None else (meta["seed"] if meta["seed"] is not None else 0)
    meta = dict(meta, name=name)
    prepare_runner(s.ray)  # a refused --ray address makes no folder
    folder = out_dir(s.out, "ladder", seed, s.force)
    return _Ladder(rungs, s.num_players, seed, boot, meta, deal_list, [], folder, left_out)


# ---------------------------------------------------------------------------------
# output
# ---------------------------------------------------------------------------------

def table_rows(doc: dict) -> tuple[list[str], list[list[str]]]:
    header = ["rung", "agent", "margin over the rung below [95% CI]", "holds", "win rate", "points rating [CI]",
              "Elo [CI]", "step time"]
    rows = []
    for k, (spec, r) in enumerate(zip(doc["rungs"], doc["ratings"])):
        if k == 0:
            rows.append([str(k), spec, "–", "–", "–", "0", "0", "–"])
            continue
        s = doc["steps"][k - 1]
        rows.append([str(k), spec, fmt_ci(s["margin"], s["ci_low"], s["ci_high"], signed=True),
                     "yes" if s["holds"] else "no", f"{s['win_rate']:.3f}",
                     fmt_ci(r["points"], *r["points_ci"], signed=True), elo_cell(r, doc["steps"][:k]),
                     f"{s['seconds']:.0f} s"])
    return header, rows


def summary(doc: dict) -> str:
    failing = [f"{s['upper']} over {s['lower']}" for s in doc["steps"] if not s["holds"]]
    src = doc["deals_source"]
    where = src.get("name") or (f"file {src['path']}" if src.get("path") else f"seed {doc['seed']}")
    text = (f"{doc['num_players']} players, {doc['deals']} deals ({where}) x 2 plays per step; "
            f"top rung: {doc['rungs'][-1]}. ")
    text += ("Every step holds (its interval is above 0)." if not failing
             else f"Steps whose interval is not above 0: {', '.join(failing)}.")
    if doc.get("left_out"):
        text += f" Left out (cannot be built here): {', '.join(doc['left_out'])}."
    return text


def write_outputs(folder: str, doc: dict) -> None:
    write_json(os.path.join(folder, "ladder.json"), doc, arrays_inline=True)  # atomically (twilight_env.util.atomic)
    header, rows = table_rows(doc)
    lines = [f"# Strength ladder, {doc['num_players']} players", "", markdown_table(header, rows), "",
             summary(doc), "",
             "Margin: the upper rung's deal points per deal against the rung below, duplicate deals, Student-t "
             "interval; a step holds when its interval is above 0. Points rating: margins summed up the ladder. "
             "Elo: 400 log10(w / (1 - w)) of each step's win rate w, summed. Rating intervals: percentile "
             f"bootstrap over the deals ({doc['boot']} resamples); an end written >= or <= is a bound (resamples "
             "that won or lost a step on every play have that step's Elo capped near 1200).", "",
             f"Run time {doc['run_seconds']:.0f} s ({doc['runner']}, {doc['workers']} worker(s))."]
    write_text(os.path.join(folder, "ladder.md"), "\n".join(lines) + "\n")
    plot(doc, os.path.join(folder, "ladder.png"))


def deal_set_label(doc: dict) -> str:
    """The deal set of a ladder for titles: its name (``heldout-1``), else the file, else the seed."""
    src = doc.get("deals_source") or {}
    names = {heldout_seed(k): k for k in HELDOUT_SEEDS}
    if src.get("name"):
        return src["name"]
    if src.get("path"):
        return f"file {os.path.basename(src['path'])}"
    return names.get(doc["seed"], f"seed {doc['seed']}")


def plot(doc: dict, path: str) -> None:
    """Ratings with their bootstrap intervals: points (left) and Elo (right) by rung."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rungs, rates = doc["rungs"], doc["ratings"]
    x = np.arange(len(rungs))
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for ax, key, label in ((axes[0], "points", "deal points per deal above the bottom rung"),
                           (axes[1], "elo", "Elo above the bottom rung")):
        y = np.array([r[key] for r in rates])
        lo = np.array([r[f"{key}_ci"][0] for r in rates])
        hi = np.array([r[f"{key}_ci"][1] for r in rates])
        ax.errorbar(x, y, yerr=[y - lo, hi - y], fmt="o-", capsize=4)
        for k, step in enumerate(doc["steps"]):  # a step whose interval holds 0 is drawn red and named
            if not step["holds"]:
                ax.plot(x[k:k + 2], y[k:k + 2], color="tab:red", lw=2.5, zorder=3)
                ax.annotate("step does not hold", ((x[k] + x[k + 1]) / 2, (y[k] + y[k + 1]) / 2),
                            color="tab:red", fontsize=8, ha="center", va="bottom",
                            xytext=(0, 6), textcoords="offset points")
        ax.set_xticks(x, rungs, rotation=20, ha="right")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    fig.suptitle(f"Strength ladder, {doc['num_players']} players, {doc['deals']} duplicate deals per step "
                 f"({deal_set_label(doc)}), 95% bootstrap intervals")
    fig.tight_layout()
    save_figure(fig, path, dpi=110)
    plt.close(fig)


def run(args) -> int:
    try:
        play_ladder(LadderSettings(args.rungs, args.players, args.deals, args.deal_set, args.seed, args.deals_file,
                                   args.boot, args.workers, args.out, progress=not args.quiet, resume=args.resume,
                                   ray=args.ray, force=args.force))
    except KeyboardInterrupt:
        return 130
    return 0
