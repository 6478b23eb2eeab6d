"""``twilight edge --ladder FOLDER``: the solo-vs-Sun edge at every rung of a strength ladder.

For each rung of a finished 3-player ``twilight ladder`` run (``random`` is skipped: its
edge says nothing about the game), the edge study (:mod:`twilight_env.experiments.edge.solo_edge`) plays
the rung's agent on all three chairs on the held-out deal set ``heldout-2`` (by default;
the ladder itself plays ``heldout-1``), each rung in its own folder
``FOLDER_OUT/edge_{k}_{agent}/``. A rung already finished there is read back, and a rung
interrupted midway resumes from its checkpoint, so long studies are spread over several
sittings by running the same command with ``--out FOLDER_OUT`` (the folder it printed:
without ``--out`` each run starts a new folder); Ctrl-C or SIGTERM prints that command
(:func:`continue_command`). Asking a finished rung for more deals
(``--rung-deals SPEC=N``) grows its run, playing only the new deals
(:func:`twilight_env.experiments.edge.solo_edge.grow_run`).

Outputs in ``FOLDER_OUT`` (default ``out/edge_ladder__{seed}__{unixtime}``):

- ``edge_vs_strength.json`` / ``.md``: per rung its ladder rating (points and Elo, with
  intervals), Moon − Sun deal points per deal with its 95% interval and half-width,
  P(Moon > Sun), P(solo wins a fixed-solo match to the target), the deals played and the
  hours they took, and, where the half-width is above ``TARGET_HALF_WIDTH`` (2 deal
  points), the deals that reaching it needs (the half-width shrinks as 1/sqrt(N)) and
  the hours that takes here and on N Ray workers (assuming time per deal stays as
  measured after start-up, and N workers play N times as fast);
- the difference between the top two rungs' edges, paired by deal: every rung plays the
  first N deals of the same deal set, so the difference is taken deal by deal over the
  deals both rungs played, with a Student-t 95% interval (the Welch interval over all
  deals of both runs, which ignores the pairing, is given beside it);
- with ``--off-ladder``, agents that are not rungs, each with its edge minus the top
  rung's, paired by deal the same way;
- ``edge_vs_strength.png``: the edge (y, with intervals) against the ladder's points
  rating (x, with intervals).
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
import sys
import time
import types
from dataclasses import dataclass
from typing import Mapping

import numpy as np

from twilight_env.util.distributed import check_address
from twilight_env.util.atomic import save_figure, write_json, write_text
from twilight_env.util.jsonfile import JsonFileError, read_json

from twilight_env.agents.base import agent_name, same_agent
from twilight_env.experiments.common import check_workers, fmt_ci, markdown_table, mean_ci, out_dir
from twilight_env.records.dealsets import heldout_seed
from twilight_env.experiments.edge import solo_edge
from twilight_env.experiments.edge.interim import interim_row
from twilight_env.experiments.edge.core import (deal_diffs, CHECKPOINT, DEFAULT_BOOT, DEFAULT_MATCHES, finished_run,
                                                terminal_blocks, wrap)
from twilight_env.experiments.edge.matches import check_match_settings

TARGET_HALF_WIDTH = 2.0
"""Deal points per deal: the study's target half-width of the Moon − Sun interval."""
DEFAULT_DEAL_SET = "heldout-2"


def _slug(spec: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.=-]+", "_", spec)


def load_ladder(folder: str) -> dict:
    """The ``ladder.json`` of a finished 3-player ladder run.

    Raises:
        ValueError: no readable ladder.json, or a 4-player ladder (the edge is a 3-player
            question, R7).
    """
    path = os.path.join(folder, "ladder.json")
    try:
        doc = read_json(path, "ladder output")
    except JsonFileError as e:
        raise ValueError(f"--ladder {folder!r}: no readable ladder.json ({e}); run `twilight ladder` first") from None
    if not isinstance(doc, dict):
        raise ValueError(f"--ladder {folder!r}: its ladder.json holds a JSON {type(doc).__name__}, not a ladder "
                         "run's output; run `twilight ladder` first")
    if doc.get("num_players") != 3:
        raise ValueError(f"--ladder {folder!r} is a {doc.get('num_players')}-player ladder; the edge study needs a "
                         "3-player one (`twilight ladder --players 3`)")
    return doc


def projection(half_width: float, deals: int, seconds: float, workers: tuple[int, ...] = (8, 32),
               used: int = 1) -> dict:
    """Deals and hours needed for a half-width of ``TARGET_HALF_WIDTH`` (1/sqrt(N) scaling).

    ``seconds`` is the wall time ``deals`` deals take with ``used`` workers, start-up left
    out (:func:`run_seconds`), or None when the run was too short to time; N workers are
    taken to play N / ``used`` times as fast (on paper).

    Returns:
        ``{"deals_needed", "hours_here", "hours_on": {workers: hours}}``; deals_needed is
        ``deals`` when the target is already met; the hours are None (``hours_on`` empty)
        without ``seconds``.
    """
    if not math.isfinite(half_width) or deals < 2:
        return {"deals_needed": None, "hours_here": None, "hours_on": {}}
    need = max(deals, math.ceil(deals * (half_width / TARGET_HALF_WIDTH) ** 2))
    if seconds is None:
        return {"deals_needed": need, "hours_here": None, "hours_on": {}}
    hours = seconds / deals * need / 3600.0
    return {"deals_needed": need, "hours_here": hours, "hours_on": {str(w): hours * used / w for w in workers}}


@dataclass(frozen=True)
class LadderSettings:
    """The settings of ``twilight edge --ladder FOLDER``, checked once when built.

    Fields:

    - ``ladder``: output folder of a finished 3-player ``twilight ladder`` run.
    - ``deals``: deals per rung, each played 3 times (int >= 2).
    - ``rung_deals``: ``{spec: N}`` overriding ``deals`` for some rungs (fast rungs can
      reach a tight interval, slow search rungs take fewer); N is 0 (leave the rung out)
      or at least 2. Stored read-only.
    - ``off_ladder``: output folders of finished one-agent ``twilight edge`` runs on the
      same deal set, for agents that are not rungs of the ladder (they have no ladder
      rating): tabulated apart, each with its edge minus the top rung's, and drawn in a
      panel of their own.
    - ``deal_set``: the held-out deal set the rungs play (default ``heldout-2``; the ladder
      itself plays ``heldout-1``).
    - ``boot``, ``matches``: bootstrap resamples and simulated matches per resample of a
      new rung's run (None: 200 and 1000; ranges as :class:`~twilight_env.experiments.edge.core.StudySettings`).
    - ``out``: output folder (None: ``out/edge_ladder__{seed}__{unixtime}``, a new one each
      time; given, it is entered again on purpose: each rung has its own folder in it, so
      the same command with ``--out`` of an earlier run resumes that run).
    - ``workers``: local worker processes (int >= 1); ``ray``: a Ray address instead.
    - ``progress``: show progress bars; ``verbose``: print each rung and the tables.

    Raises:
        ValueError: naming the field (as its flag) and what it allows.
    """

    ladder: str
    deals: int                                     # deals per rung
    rung_deals: Mapping[str, int] = dataclasses.field(default_factory=dict)
    off_ladder: tuple[str, ...] = ()
    deal_set: str = DEFAULT_DEAL_SET
    boot: int | None = None                        # bootstrap resamples
    matches: int | None = None                     # simulated matches per resample
    out: str | None = None
    workers: int = 1                               # local worker processes
    ray: str | None = None
    progress: bool = True
    verbose: bool = True

    def __post_init__(self):
        if not isinstance(self.ladder, str) or not self.ladder:
            raise ValueError(f"--ladder takes the output folder of a `twilight ladder` run, got {self.ladder!r}")
        if isinstance(self.deals, bool) or not isinstance(self.deals, int) or self.deals < 2:
            raise ValueError(f"--deals must be at least 2, got {self.deals!r}")
        rung_deals = dict(self.rung_deals or {})
        for spec, n in rung_deals.items():
            if isinstance(n, bool) or not isinstance(n, int) or n == 1 or n < 0:
                raise ValueError(f"--rung-deals {spec}={n!r}: N must be 0 (leave the rung out) or at least 2")
        object.__setattr__(self, "rung_deals", types.MappingProxyType(rung_deals))
        off = self.off_ladder or ()
        if isinstance(off, str) or any(not isinstance(f, str) or not f for f in off):
            raise ValueError(f"--off-ladder takes output folders of finished edge runs, got {self.off_ladder!r}")
        object.__setattr__(self, "off_ladder", tuple(off))
        heldout_seed(self.deal_set)
        check_workers(self.workers)
        if self.ray is not None:
            check_address(self.ray)
        check_match_settings(1000, DEFAULT_BOOT if self.boot is None else self.boot,
                             DEFAULT_MATCHES if self.matches is None else self.matches)

    @property
    def seed(self) -> int:
        """The seed of the deal set the rungs play."""
        return heldout_seed(self.deal_set)


def continue_command(s: LadderSettings, folder: str) -> str:
    """The ``twilight edge --ladder`` command that continues the study of ``s`` in ``folder``
    (printed after an interruption): the ladder, ``--deals`` and the other options that
    decide what is played, and ``--out FOLDER``. The runner's ``--workers`` and ``--quiet``
    are left to choose again, as with ``--resume``; ``--ray`` is kept."""
    import shlex

    parts = ["twilight", "edge", "--ladder", s.ladder, "--deals", str(s.deals)]
    for spec, n in s.rung_deals.items():
        parts += ["--rung-deals", f"{spec}={n}"]
    for f in s.off_ladder:
        parts += ["--off-ladder", f]
    for flag, value in (("--boot", s.boot), ("--matches", s.matches), ("--ray", s.ray)):
        if value is not None:
            parts += [flag, str(value)]
    return shlex.join(parts + ["--out", folder])


def _interrupted_line(error: KeyboardInterrupt, rung: tuple[int, str, str] | None, command: str) -> str:
    """The one line printed when the ladder study is interrupted, while rung ``(k, spec,
    folder)`` plays (None: after the rungs): what is saved, and ``command``."""
    how = "interrupted" if getattr(error, "signum", None) is None else f"stopped by {error}"
    if rung is None:
        return f"{how} before the outputs were written; every rung is saved; continue with: {command}"
    k, spec, sub = rung
    try:  # the rung's run wrote its checkpoint when interrupted
        saved = (f"rung {k} ({spec}) has {solo_edge.Checkpoint.load(sub).count()} finished deal(s) saved in "
                 f"{os.path.join(sub, CHECKPOINT)}")
    except (OSError, ValueError):  # no checkpoint: interrupted before or after the rung's play
        saved = f"at rung {k} ({spec})"
    return f"{how}: {saved}; continue with: {command}"


def run_edge_ladder(settings: LadderSettings | str, deals: int | None = None, **options) -> str:
    """Play (or resume, or read back) the edge at every rung; write the outputs; return the folder.

    Args:
        settings: a :class:`LadderSettings`, or the ladder folder, with ``deals`` (per rung)
            and the other fields of :class:`LadderSettings` as keywords
            (``run_edge_ladder("out/ladder", 600, rung_deals={"pimc": 200})``).

    Raises:
        ValueError: bad settings (:class:`LadderSettings`), as :func:`load_ladder`, a
            ``rung_deals`` spec that is not a rung of the ladder, or an ``off_ladder``
            folder that holds no finished one-agent run on that deal set.
        TypeError: a keyword that is no setting.
        KeyboardInterrupt: Ctrl-C or SIGTERM (as ``twilight`` raises it), after the
            interrupted rung's checkpoint is written and one line printed to stderr with
            the command that continues (:func:`continue_command`).
    """
    s = _ladder_settings(settings, deals, options)
    lad = load_ladder(s.ladder)
    unknown = sorted(set(s.rung_deals) - set(lad["rungs"]))
    if unknown:
        raise ValueError(f"--rung-deals names {unknown}, which are not rungs of the ladder {lad['rungs']}")
    seed = s.seed
    tabulated = [spec for spec in lad["rungs"] if agent_name(spec) != "random"]  # the rungs with an edge row
    seen = {}
    for f in s.off_ladder:  # checked before any rung plays; read again at the end
        spec = _off_ladder_row(f, seed, s.deal_set, None, tabulated)["spec"]
        twin = next((t for t in seen if same_agent(t, spec)), None)
        if twin is not None:
            also = "" if twin == spec else f" ({twin} there and {spec} here are the same agent once every option's " \
                                          "default is filled in)"
            raise ValueError(f"--off-ladder gives {spec} twice ({seen[twin]!r} and {f!r}){also}; give each agent once")
        seen[spec] = f
    folder = out_dir(s.out, "edge_ladder", seed, force=True)  # re-entered on purpose: each rung has its own folder
    rows = []
    rung = None  # (k, spec, folder) of the rung playing, for the line printed if interrupted
    try:
        for k, (spec, rating) in enumerate(zip(lad["rungs"], lad["ratings"])):
            n_rung = s.rung_deals.get(spec, s.deals)
            if agent_name(spec) == "random" or n_rung == 0:
                continue
            sub = os.path.join(folder, f"edge_{k}_{_slug(spec)}")
            rung = (k, spec, sub)
            doc = _play_rung(s, k, spec, n_rung, sub)
            rows.append({"rung": k, "rating": rating, **_edge_row(doc, sub)})
        rung = None
        if not rows:
            raise ValueError(f"--ladder {s.ladder!r} has no rung other than random")
        result = {"ladder": os.path.abspath(s.ladder), "deal_set": s.deal_set, "seed": seed, "deals": s.deals,
                  "target_half_width": TARGET_HALF_WIDTH, "rungs": rows, "top_two": top_two(rows),
                  "written": time.strftime("%Y-%m-%d %H:%M:%S")}
        if s.off_ladder:
            result["off_ladder"] = [_off_ladder_row(f, seed, s.deal_set, rows[-1], tabulated)
                                    for f in s.off_ladder]
        write_outputs(folder, result)
    except KeyboardInterrupt as e:
        print(_interrupted_line(e, rung, continue_command(s, folder)), file=sys.stderr)
        raise
    if s.verbose:
        print("\n".join(terminal_lines(result, folder)))
    return folder


def terminal_lines(result: dict, folder: str) -> list[str]:
    """What ``twilight edge --ladder`` prints at the end, within
    :data:`~twilight_env.experiments.edge.core.TERMINAL_WIDTH` characters a line: the
    table of ``edge_vs_strength.md`` as one block per rung (and per agent off the ladder),
    the top-two difference and the files."""
    header, trows = table_rows(result)
    out = terminal_blocks(["", *header[2:]], [[f"rung {r[0]}: {r[1]}", *r[2:]] for r in trows])
    if result.get("off_ladder"):
        header, trows = off_ladder_rows(result)
        out += ["", "Off the ladder:", ""] + terminal_blocks(header, trows)
    out += [""] + wrap(top_two_line(result))
    out += [""] + wrap(f"Files: {folder}/edge_vs_strength.md, .json, .png")
    return out


def _ladder_settings(settings, deals, options) -> LadderSettings:
    if isinstance(settings, LadderSettings):
        if deals is not None:
            options = {**options, "deals": deals}
        return dataclasses.replace(settings, **options) if options else settings
    names = [f.name for f in dataclasses.fields(LadderSettings)]
    unknown = sorted(set(options) - set(names))
    if unknown:
        raise TypeError(f"no ladder setting {', '.join(unknown)}; the settings are {', '.join(names)}")
    if deal_set := options.pop("deal_set_name", None):  # the keyword's earlier name
        options["deal_set"] = deal_set
    return LadderSettings(settings, deals, **options)


def _play_rung(s: LadderSettings, k: int, spec: str, n_rung: int, sub: str) -> dict:
    """The ``edge.json`` of rung ``k``'s run of ``n_rung`` deals in ``sub``: read back when
    finished, grown when it holds fewer deals, resumed when interrupted, else played.

    Raises:
        ValueError: ``sub`` holds a run of more deals or of another deal set.
    """
    # the ladder says how to continue when interrupted (run_edge_ladder), not the rung's run
    resume = dict(workers=s.workers, progress=s.progress, verbose=False, ray=s.ray, report_interrupt=False)
    if os.path.isfile(os.path.join(sub, CHECKPOINT)):
        held = len(solo_edge.Checkpoint.load(sub).deals)
        if held < n_rung:
            solo_edge.grow_run(sub, n_rung)
        elif held > n_rung:
            raise ValueError(f"{sub!r} holds an unfinished edge run of {held} deals; this command asks for "
                             f"{n_rung}: give {spec}={held} or more, or use another --out")
        if s.verbose:
            _say(f"rung {k} ({spec}): resuming {sub} ({n_rung} deals)")
        solo_edge.run_study(resume=sub, **resume)
    elif os.path.isfile(os.path.join(sub, "edge.json")):
        doc = solo_edge.load_result(sub)
        if doc["seed"] != s.seed or doc["deals"] > n_rung:
            raise ValueError(f"{sub!r} holds an edge run of {doc['deals']} deals (seed {doc['seed']}); this "
                             f"command asks for {n_rung} (seed {s.seed}): use another --out")
        if doc["deals"] == n_rung:
            return doc
        if s.verbose:
            _say(f"rung {k} ({spec}): growing {sub} from {doc['deals']} to {n_rung} deals")
        solo_edge.grow_run(sub, n_rung)
        solo_edge.run_study(resume=sub, **resume)
    else:
        if s.verbose:
            _say(f"rung {k} ({spec}): {n_rung} deals into {sub}")
        solo_edge.run_study([spec], deals=n_rung, seed=s.seed, out=sub, boot=s.boot, matches=s.matches, **resume)
    return solo_edge.load_result(sub)


def _say(text: str) -> None:
    """A progress line on stderr, wrapped at the terminal width."""
    print("\n".join(wrap(text)), file=sys.stderr)


def run_seconds(doc: dict) -> float | None:
    """Seconds a finished one-agent edge run (``edge.json``) spent playing its deals, start-up
    left out: its measured time per deal after start-up times its deals
    (``seconds_per_deal``, :func:`twilight_env.experiments.edge.solo_edge.study`), None when
    the run was too short to time; for a run written before that figure existed, its run
    time (those runs took hours, start-up a few seconds of them)."""
    r = doc["results"][0]
    if "seconds_per_deal" not in r:
        return float(doc["run_seconds"])
    per = r["seconds_per_deal"]
    return None if per is None else float(per) * doc["deals"]


def _edge_row(doc: dict, folder: str) -> dict:
    """The figures of a finished one-agent edge run (``edge.json`` read by ``load_result``)."""
    r = doc["results"][0]
    f = r["figures"]
    hw = (f["diff"]["ci_high"] - f["diff"]["ci_low"]) / 2
    return {"spec": r["label"], "deals": doc["deals"], "diff": f["diff"],
            "half_width": hw, "p_moon_outscores": f["p_moon_outscores"],
            "p_solo_wins": f["matches"]["fixed_solo"], "hours": doc["run_seconds"] / 3600.0,
            "projection": projection(hw, doc["deals"], run_seconds(doc), used=int(doc.get("workers", 1))),
            "workers": int(doc.get("workers", 1)), "folder": folder,
            "diff_per_deal": deal_diffs(r).tolist()}


def _off_ladder_row(folder: str, seed: int, deal_set_name: str, top: dict | None, rungs: list[str] = (),
                    target: int = 1000) -> dict:
    """An agent that is not a rung of the ladder: its finished edge run on the same deal set,
    with its edge minus the top rung's (paired by deal, as :func:`top_two`).

    Raises:
        ValueError: no finished edge run in ``folder``, a run of several agents or of mixed
            strengths, a run on another deal set or to another match target than the
            rungs', or an agent that is a rung of the ladder.
    """
    doc = finished_run("--off-ladder", folder, f"`twilight edge SPEC --seed {seed}` ({deal_set_name})")
    configs = doc.get("configs") or []
    if len(configs) != 1 or configs[0].get("solo") != configs[0].get("sun"):
        shown = "; ".join(f"solo={c.get('solo')}, sun={c.get('sun')}" for c in configs)
        raise ValueError(f"--off-ladder {folder!r} is a run of {shown}; it needs one agent on all three chairs "
                         "(one SPEC, no --solo/--sun)")
    rung = next((r for r in rungs if same_agent(r, configs[0]["solo"])), None)
    if rung is not None:
        also = "" if rung == configs[0]["solo"] else f" {rung} (the same agent)"
        raise ValueError(f"--off-ladder {folder!r} is a run of {configs[0]['solo']}, a rung of the ladder{also}; "
                         "rungs are tabulated as rungs (--rung-deals sets their deals)")
    if doc.get("target") != target:
        raise ValueError(f"--off-ladder {folder!r} simulates matches to {doc.get('target')}; the rungs' match "
                         f"figures are matches to {target}: run it with the default --target")
    if doc["seed"] != seed:
        raise ValueError(f"--off-ladder {folder!r} played the deals of seed {doc['seed']}; the ladder's edge runs "
                         f"play {deal_set_name} (seed {seed}): run it with `--seed {seed}`")
    row = _edge_row(doc, folder)
    if top is not None:
        row["minus_top"] = _paired(row, top)
    return row


def _welch(upper: dict, lower: dict) -> dict:
    """Edge of ``upper`` minus edge of ``lower``, Welch 95% interval over every deal of both runs
    (the runs may differ in number of deals; the pairing by deal is ignored, so it is conservative)."""
    from scipy import stats

    a = np.asarray(upper["diff_per_deal"])
    b = np.asarray(lower["diff_per_deal"])
    ci = stats.ttest_ind(a, b, equal_var=False).confidence_interval(0.95)
    return {"upper": upper["spec"], "lower": lower["spec"], "difference": float(a.mean() - b.mean()),
            "ci_low": float(ci.low), "ci_high": float(ci.high)}


def _paired(upper: dict, lower: dict) -> dict:
    """Edge of ``upper`` minus edge of ``lower``, paired by deal: both runs play the deals of
    one seed, and deal i is the same deal in both (a run of N deals holds the first N deals
    of its seed), so the difference is taken deal by deal over the deals both played, with a
    Student-t 95% interval. The deal's own luck cancels, so the interval is narrower than
    Welch's over the same deals. Returned with the Welch figure over all deals (``welch``).

    Returns:
        ``{"upper", "lower", "deals", "difference", "ci_low", "ci_high", "welch": {...}}``,
        deal points per deal.
    """
    a = np.asarray(upper["diff_per_deal"], float)
    b = np.asarray(lower["diff_per_deal"], float)
    n = int(min(len(a), len(b)))
    mean, low, high = mean_ci(a[:n] - b[:n])
    interim = bool(upper.get("interim") or lower.get("interim"))
    if interim:  # a run under way: Welch over the same deals, not its few against the other's all
        upper, lower = (dict(r, diff_per_deal=list(r["diff_per_deal"][:n])) for r in (upper, lower))
    return {"upper": upper["spec"], "lower": lower["spec"], "deals": n, "difference": mean,
            "ci_low": low, "ci_high": high, "welch": _welch(upper, lower), "interim": interim}


def compare_runs(upper: str, lower: str) -> dict:
    """``twilight edge --compare A B``: the edge of run A minus the edge of run B, paired by deal.

    Both folders hold one-configuration ``twilight edge`` runs on the deals of one seed (a
    run of N deals plays the first N deals of its seed, so deal i is the same deal in both);
    the difference is taken over the deals both played (:func:`_paired`). A run still under
    way (its progress file) counts its deals finished so far from deal 0
    (:func:`~twilight_env.experiments.edge.interim.interim_row`): an interim figure.

    Returns:
        ``{"upper", "lower", "deals", "difference", "ci_low", "ci_high", "welch", "seed",
        "folders"}``; deal points per deal.

    Raises:
        ValueError: a folder without an edge run, a run of several configurations,
            a run on deals from a file, runs on the deals of different seeds, or two runs of
            one spec with the same points on every deal (one agent twice). Two runs of one
            spec that played differently (e.g. ``policy`` before and after its shipped
            weights changed) are compared, each named with its folder.
    """
    if os.path.realpath(upper) == os.path.realpath(lower):
        raise ValueError(f"--compare names one folder twice ({upper!r}); give the folders of two runs")
    rows, seeds = [], []
    for folder in (upper, lower):
        if os.path.isfile(os.path.join(folder, CHECKPOINT)):  # unfinished: its first deals done
            row = interim_row(folder)
            if row["source"].get("source") != "seed":
                raise ValueError(f"--compare {folder!r} plays deals from a file; pairing by deal needs runs on the "
                                 "generated deals of one --seed")
            rows.append(row)
            seeds.append(row["seed"])
            continue
        doc = finished_run("--compare", folder, "a `twilight edge` run")
        if len(doc["results"]) != 1:
            raise ValueError(f"--compare {folder!r} holds {len(doc['results'])} configurations "
                             f"({', '.join(r['label'] for r in doc['results'])}); it compares runs of one each")
        source = doc.get("deals_source") or {}
        if source.get("source") != "seed":
            raise ValueError(f"--compare {folder!r} played deals from a file ({source.get('path')!r}); pairing by "
                             "deal needs runs on the generated deals of one --seed")
        rows.append(_edge_row(doc, folder))
        seeds.append(int(doc["seed"]))
    if seeds[0] != seeds[1]:
        raise ValueError(f"--compare: {upper!r} played the deals of seed {seeds[0]} and {lower!r} those of seed "
                         f"{seeds[1]}; pairing by deal needs the same deals: compare runs of one --seed")
    labels = [r.get("label", r["spec"]) for r in rows]  # a run under way: its label without the count
    if labels[0] == labels[1]:
        a, b = (np.asarray(r["diff_per_deal"], float) for r in rows)
        n = min(len(a), len(b))
        if np.array_equal(a[:n], b[:n]):
            raise ValueError(f"--compare: both runs play {labels[0]} on the deals of seed {seeds[0]} and gave the "
                             "same points on every deal they share; every deal is seeded by (seed, deal, agents), so "
                             "one agent plays the same games and the difference is 0 by construction: compare runs "
                             "of two different agents")
        # One name, two agents: a spec such as `policy` whose `default` weights were replaced
        # between the runs. Each side is named by its folder as well.
        rows = [dict(r, spec=f"{r['spec']} ({folder})") for r, folder in zip(rows, (upper, lower))]
    return {**_paired(rows[0], rows[1]), "seed": seeds[0], "folders": [upper, lower]}


def compare_line(c: dict) -> str:
    """One sentence for :func:`compare_runs`."""
    w = c["welch"]
    verdict = ("the interval holds 0: no difference is shown" if c["ci_low"] <= 0 <= c["ci_high"]
               else "the interval excludes 0")
    if c.get("interim"):
        verdict += " (interim: a run is under way; its figure moves as its deals finish)"
    welch_over = "the same deals" if c.get("interim") else "all deals of both runs"
    return (f"Moon − Sun at {c['upper']} minus Moon − Sun at {c['lower']}, paired by deal over the first "
            f"{c['deals']} deals of seed {c['seed']}: "
            f"{fmt_ci(c['difference'], c['ci_low'], c['ci_high'], signed=True)} deal points per deal (95% CI; "
            f"Welch over {welch_over}: {fmt_ci(w['difference'], w['ci_low'], w['ci_high'], signed=True)})"
            f"; {verdict}.")


def top_two(rows: list[dict]) -> dict | None:
    """Edge of the top rung minus the rung below it, paired by deal (:func:`_paired`)."""
    if len(rows) < 2:
        return None
    return _paired(rows[-1], rows[-2])


def top_two_line(result: dict) -> str:
    t = result["top_two"]
    if t is None:
        return "One rung only: no difference between the top two rungs."
    flat = t["ci_low"] <= 0 <= t["ci_high"]
    w = t["welch"]
    return (f"Top two rungs: the edge at {t['upper']} minus the edge at {t['lower']}, paired by deal over the "
            f"{t['deals']} deals both played = "
            f"{fmt_ci(t['difference'], t['ci_low'], t['ci_high'], signed=True)} deal points per deal (Welch over "
            f"all deals of both runs, ignoring the pairing: "
            f"{fmt_ci(w['difference'], w['ci_low'], w['ci_high'], signed=True)}); "
            + ("the interval holds 0, so no change between them is shown." if flat
               else "the interval excludes 0: the edge still moves with strength."))


def table_rows(result: dict) -> tuple[list[str], list[list[str]]]:
    header = ["rung", "agent", "points rating [CI]", "N", "Moon − Sun [95% CI]", "half-width", "P(Moon > Sun)",
              "P(solo wins), fixed_solo", "hours", f"deals for ±{TARGET_HALF_WIDTH:g} (hours here, with the run's workers / on 8 / 32 workers)"]
    rows = []
    for r in result["rungs"]:
        rt, d, p, s = r["rating"], r["diff"], r["p_moon_outscores"], r["p_solo_wins"]
        need = _need(r)
        rows.append([str(r["rung"]), r["spec"], fmt_ci(rt["points"], *rt["points_ci"], signed=True), str(r["deals"]),
                     fmt_ci(d["mean"], d["ci_low"], d["ci_high"], signed=True), f"{r['half_width']:.1f}",
                     fmt_ci(p["p"], p["ci_low"], p["ci_high"], digits=3),
                     fmt_ci(s["p_solo_wins"], s["ci_low"], s["ci_high"], digits=3), f"{r['hours']:.2f}", need])
    return header, rows


def _need(r: dict) -> str:
    pr = r["projection"]
    if r["half_width"] <= TARGET_HALF_WIDTH:
        return "met"
    if pr["hours_here"] is None:  # the run was too short to time its deals apart from start-up
        return f"{pr['deals_needed']} (run too short to time)"
    return f"{pr['deals_needed']} ({pr['hours_here']:.1f} / {pr['hours_on']['8']:.1f} / {pr['hours_on']['32']:.2f})"


def off_ladder_rows(result: dict) -> tuple[list[str], list[list[str]]]:
    """The table of the agents that are not rungs (``result["off_ladder"]``)."""
    top = result["rungs"][-1]["spec"]
    header = ["agent", "N", "Moon − Sun [95% CI]", "half-width", f"minus {top}, paired by deal [95% CI]",
              "P(Moon > Sun)",
              "P(solo wins), fixed_solo", "hours",
              f"deals for ±{TARGET_HALF_WIDTH:g} (hours here, with the run's workers / on 8 / 32 workers)"]
    rows = []
    for r in result.get("off_ladder", []):
        d, p, s, m = r["diff"], r["p_moon_outscores"], r["p_solo_wins"], r["minus_top"]
        rows.append([r["spec"], str(r["deals"]), fmt_ci(d["mean"], d["ci_low"], d["ci_high"], signed=True),
                     f"{r['half_width']:.1f}", fmt_ci(m["difference"], m["ci_low"], m["ci_high"], signed=True),
                     fmt_ci(p["p"], p["ci_low"], p["ci_high"], digits=3),
                     fmt_ci(s["p_solo_wins"], s["ci_low"], s["ci_high"], digits=3), f"{r['hours']:.2f}", _need(r)])
    return header, rows


def _shown_path(path: str) -> str:
    """``path`` relative to the working directory when it lies below it (tables stay machine-independent)."""
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def write_outputs(folder: str, result: dict) -> None:
    write_json(os.path.join(folder, "edge_vs_strength.json"), result, arrays_inline=True)
    header, rows = table_rows(result)
    lines = ["# The solo-vs-Sun edge against strength (3 players)", "",
             f"Edge runs on the held-out deal set {result['deal_set']} (each rung's N deals x 3 plays, column N); "
             f"ratings from the ladder in {_shown_path(result['ladder'])}.", "", markdown_table(header, rows), "",
             top_two_line(result), ""]
    if result.get("off_ladder"):
        oh, orows = off_ladder_rows(result)
        lines += ["## Off the ladder", "",
                  "Agents that are not rungs of the ladder, so without a ladder rating, on the same deal set; "
                  f"\"minus {result['rungs'][-1]['spec']}\" is the agent's edge minus the top rung's, paired by "
                  "deal as for the top two rungs: deal by deal over the deals both runs played (a run of N deals "
                  "holds the first N deals of the set), Student-t interval.", "",
                  markdown_table(oh, orows), ""]
    lines.append("Moon − Sun: deal points per deal, each deal's three plays averaged, Student-t interval. Deals for "
                 f"±{TARGET_HALF_WIDTH:g}: N (half-width / {TARGET_HALF_WIDTH:g})², hours at the time per deal "
                 "measured after start-up, divided by the number of Ray workers (on paper).")
    write_text(os.path.join(folder, "edge_vs_strength.md"), "\n".join(lines) + "\n")
    plot(result, os.path.join(folder, "edge_vs_strength.png"))


def plot(result: dict, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = result["rungs"]
    x = np.array([r["rating"]["points"] for r in rows])
    xlo = np.array([r["rating"]["points_ci"][0] for r in rows])
    xhi = np.array([r["rating"]["points_ci"][1] for r in rows])
    y = np.array([r["diff"]["mean"] for r in rows])
    ylo = np.array([r["diff"]["ci_low"] for r in rows])
    yhi = np.array([r["diff"]["ci_high"] for r in rows])
    off = result.get("off_ladder") or []
    if off:
        # the right panel widens with its agents, so that their slanted labels do not run into each other
        fig, (ax, ax2) = plt.subplots(1, 2, figsize=(7.5 + 0.9 * max(len(off), 2), 5.0), sharey=True,
                                      gridspec_kw={"width_ratios": [3, 0.45 * max(len(off), 2)]})
    else:
        fig, ax = plt.subplots(figsize=(7.5, 4.6))
    ax.axhline(0, color="grey", lw=1)
    ax.errorbar(x, y, xerr=[x - xlo, xhi - x], yerr=[y - ylo, yhi - y], fmt="o-", capsize=4)
    right = x.min() + 0.75 * (x.max() - x.min()) if len(x) > 1 else np.inf
    for i, (r, xi, yi) in enumerate(zip(rows, x, y)):
        # long specs wrap at their commas; the rightmost rungs' labels are centred on their points,
        # above and below in turn from the top rung, so that each stays by its own point
        label = r["spec"].replace(",", ",\n") if len(r["spec"]) > 20 else r["spec"]
        if xi > right:
            up = (len(rows) - 1 - i) % 2 == 0
            ax.annotate(label, (xi, yi), textcoords="offset points", xytext=(0, 9 if up else -11), ha="center",
                        va="bottom" if up else "top", fontsize=8)
        else:
            ax.annotate(label, (xi, yi), textcoords="offset points", xytext=(6, 6), fontsize=9)
    lo_x, hi_x = float(np.min(xlo)), float(np.max(xhi))
    ax.set_xlim(lo_x - 0.05 * (hi_x - lo_x), hi_x + 0.12 * (hi_x - lo_x))  # room for the top rung's label
    ax.set_xlabel("ladder points rating (deal points per deal above the bottom rung)")
    ax.set_ylabel("Moon − Sun deal points per deal")
    ns = sorted({r["deals"] for r in rows})
    per = f"{ns[0]} deals per rung" if len(ns) == 1 else "deals per rung: " + " / ".join(str(r["deals"]) for r in rows)
    ax.set_title(f"Solo-vs-Sun edge against strength, 3 players\n({result['deal_set']}, {per}, 95% intervals)",
                 fontsize=10)
    ax.grid(alpha=0.3)
    if off:
        oy = np.array([r["diff"]["mean"] for r in off])
        olo = np.array([r["diff"]["ci_low"] for r in off])
        ohi = np.array([r["diff"]["ci_high"] for r in off])
        ox = np.arange(len(off))
        ax2.axhline(0, color="grey", lw=1)
        ax2.axhspan(rows[-1]["diff"]["ci_low"], rows[-1]["diff"]["ci_high"], color="C0", alpha=0.15,
                    label="top rung's interval")
        ax2.errorbar(ox, oy, yerr=[oy - olo, ohi - oy], fmt="s", color="C1", capsize=4)
        names = [r["spec"].replace(",", ",\n") if len(r["spec"]) > 24 else r["spec"] for r in off]
        ax2.set_xticks(ox, [f"{n}\n(N={r['deals']})" for n, r in zip(names, off)], rotation=30, ha="right",
                       fontsize=7)
        ax2.set_xlim(-0.6, len(off) - 0.4)
        ax2.set_title("off the ladder\n(no ladder rating)", fontsize=10)
        ax2.legend(fontsize=7, loc="best")
        ax2.grid(alpha=0.3, axis="y")
    fig.tight_layout()
    save_figure(fig, path, dpi=110)
