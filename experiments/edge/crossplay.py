"""``twilight edge --crossplay SPEC SPEC ...``: the cross-play matrix of agents in the 3-player game.

For k agent specs, every spec plays the solo (Moon, seat 0, deciding for the new moon,
R7.1-R7.3) against every spec as the Sun side (seats 1 and 3, R7.2): k × k edge runs
(:mod:`~twilight_env.experiments.edge.solo_edge`, team scoring, R7.5), all on the same N
deals of one seed, each deal played three times with the solo hand rotated (R7.4). A cell
is the run ``twilight edge --solo A --sun B --deals N --seed S`` (the diagonal cell A, A
is ``twilight edge A``): its agents draw from streams keyed by (seed, deal index, the two
specs), so a cell's figures do not depend on the other specs of the matrix, and every
cell holds the same deals, so the cells are paired by deal.

Figures (units: deal points per deal, R5; each deal's three plays averaged)
--------------------------------------------------------------------------
- ``M[i][j]``: the mean Moon − Sun of solo spec i against Sun spec j (shape ``(k, k)``,
  rows the solo, columns the Sun side), with its 95% Student-t interval over the N deals
  (the cell run's own figure); the diagonal ``M[i][i]`` is spec i's self-play edge.
- Pure saddle point: the solo's maximin ``max_i min_j M[i][j]`` against the Sun side's
  minimax ``min_j max_i M[i][j]``; they are equal exactly when a cell is the least of its
  row and the largest of its column, a pure saddle point (then no side gains by leaving
  its spec).
- The value of the zero-sum matrix game in mixed strategies (von Neumann's minimax
  theorem): the solo picks a row mixture x to maximise ``min_j (x M)_j``, the Sun side a
  column mixture y to minimise ``max_i (M y)_i``; both are linear programmes
  (``scipy.optimize.linprog``, HiGHS), and their optima are equal. The mixtures are one
  optimal pair (the optimal mixtures need not be unique).
- Uncertainty of the value: :data:`VALUE_BOOT` bootstrap resamples of the N deals, the
  same deal indices for every cell (the cells share deals), the game solved on each
  resampled matrix; the 95% percentile interval, and how often the resampled matrix has a
  pure saddle point (at the point estimate's saddle cell, and anywhere).

Output folder (``--out``, default ``out/crossplay__{seed}__{unixtime}``)
-----------------------------------------------------------------------
``crossplay.settings.json`` (the matrix's settings, written first), ``cells/NN-MM_SOLO__SUN/``
(one edge run each: ``edge.json``, ``edge.md``, ``edge.png``; while unfinished its
``edge.checkpoint.json``, so ``twilight edge --resume`` finishes a cell alone), and, when
every cell is finished, ``crossplay.json`` (settings, the matrix, intervals, saddle
check, game value, mixtures, bootstrap) and ``crossplay.md`` (the table, the sentences,
the command), both written atomically. Running the same command again with ``--out FOLDER``
keeps the finished cells, resumes an interrupted one and plays the missing ones; a folder
whose saved settings differ is refused.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shlex
import sys
import time
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from twilight_env.agents.base import canonical_spec
from twilight_env.records.dealsets import HELDOUT_SEEDS, seed_of
from twilight_env.util.argtypes import MAX_DEALS
from twilight_env.util.atomic import write_json, write_text
from twilight_env.util.jsonfile import JsonFileError, read_json
from twilight_env.util.report import fmt_ci, fmt_number, git_hash, markdown_table

from twilight_env.experiments.common import check_new_folder, check_specs, check_workers, out_dir
from twilight_env.experiments.edge.core import (deal_diffs, CHECKPOINT, DEFAULT_BOOT, DEFAULT_MATCHES, DEFAULT_TARGET, RESULT,
                                                StudySettings, finished_run)
from twilight_env.experiments.edge.matches import check_match_settings, percentile_ci
from twilight_env.experiments.edge import solo_edge

SETTINGS_FILE = "crossplay.settings.json"
"""The matrix's settings in its output folder, written before any cell plays."""
RESULT_JSON = "crossplay.json"
"""The matrix's figures (module docstring)."""
RESULT_MD = "crossplay.md"
"""The matrix as a markdown table, with the saddle and value sentences and the command."""
CELLS = "cells"
"""Subfolder of the output folder that holds one edge run per cell."""
KIND = "twilight-edge-crossplay"
VALUE_BOOT = 2000
"""Bootstrap resamples of the deals for the interval of the game value."""
VALUE_STREAM = 0x43505631
"""Stream key of the value bootstrap (with the run's seed), apart from the agents' streams."""
SAVED = ("specs", "deals", "seed", "target", "boot", "matches")
"""The settings a rerun must repeat to continue a matrix folder."""


# ---------------------------------------------------------------------------------
# settings
# ---------------------------------------------------------------------------------

def check_crossplay_specs(specs: Any) -> tuple[str, ...]:
    """The specs of a cross-play matrix, stripped, after checking them.

    Raises:
        ValueError: not a list of at least 2 strings; one agent given twice (also with its
            options in another order, or with an option's default written out:
            :func:`~twilight_env.agents.base.canonical_spec`); an unknown agent or a bad option
            (:func:`~twilight_env.agents.base.check_specs`, listing the valid agents); a
            network trained for 4 players (the matrix is the 3-player game, R7; each agent is
            built once, by that check).
    """
    if isinstance(specs, str) or not isinstance(specs, (list, tuple)) or not all(isinstance(s, str) for s in specs):
        raise ValueError(f"--crossplay takes a list of agent spec strings, got {specs!r}")
    if len(specs) < 2:
        raise ValueError(f"--crossplay needs at least 2 agent specs (a matrix of each as the solo against each as "
                         f"the Sun side), got {len(specs)}: {list(specs)!r}; one agent's self-play edge is "
                         "`twilight edge SPEC`")
    specs = tuple(check_specs(list(specs), "--crossplay", num_players=3))  # the matrix is the 3-player game (R7)
    seen: dict = {}
    for s in specs:
        key = canonical_spec(s)
        if key in seen:
            raise ValueError(f"--crossplay lists the agent {s!r} twice (as {seen[key]!r} and {s!r}, the same agent: "
                             f"both are {key!r} with every option's default filled in); give each agent once: every spec "
                             "already plays against itself on the diagonal")
        seen[key] = s
    return specs


@dataclass(frozen=True)
class CrossplaySettings:
    """The settings of one cross-play matrix (``twilight edge --crossplay``), checked once when built.

    Fields: ``specs`` (k >= 2 agent specs, each as the solo and as the Sun side); ``deals``
    (N deals per cell, each played 3 times; 2..MAX_DEALS); ``seed`` (of the deals, agents
    and bootstraps: an int >= 0 or a held-out set name such as ``"heldout-2"``, stored as
    its seed; default 0); ``target``, ``boot``, ``matches`` (each cell's match simulations,
    as ``twilight edge``; None: that command's defaults); ``out`` (output folder; None:
    ``out/crossplay__{seed}__{unixtime}``); ``force`` (start a matrix in a folder that holds
    other files); ``workers``, ``ray`` (where the deals play); ``progress`` (a bar per
    cell); ``verbose`` (print a line per cell and the figures).

    Raises:
        ValueError: the first bad field, naming its flag and what it allows
            (:func:`check_crossplay_specs` for the specs).
    """

    specs: tuple[str, ...]
    deals: int
    seed: int | str = 0
    target: int | None = None
    boot: int | None = None
    matches: int | None = None
    out: str | None = None
    force: bool = False
    workers: int = 1
    ray: str | None = None
    progress: bool = True
    verbose: bool = True

    def __post_init__(self):
        object.__setattr__(self, "specs", check_crossplay_specs(self.specs))
        if isinstance(self.deals, bool) or not isinstance(self.deals, int) or not 2 <= self.deals <= MAX_DEALS:
            raise ValueError(f"--deals (deals per cell) must be an integer in 2..{MAX_DEALS:,}, got {self.deals!r}")
        object.__setattr__(self, "seed", seed_of(0 if self.seed is None else self.seed))
        check_workers(self.workers)
        check_match_settings(DEFAULT_TARGET if self.target is None else self.target,
                             DEFAULT_BOOT if self.boot is None else self.boot,
                             DEFAULT_MATCHES if self.matches is None else self.matches)
        if self.out is not None and (not isinstance(self.out, str) or not self.out):
            raise ValueError(f"--out must be a non-empty string, got {self.out!r}")

    def saved(self) -> dict:
        """The settings a rerun must repeat (:data:`SAVED`), as JSON values."""
        return {"specs": list(self.specs), "deals": self.deals, "seed": self.seed,
                "target": DEFAULT_TARGET if self.target is None else self.target,
                "boot": DEFAULT_BOOT if self.boot is None else self.boot,
                "matches": DEFAULT_MATCHES if self.matches is None else self.matches}

    def command(self, folder: str) -> str:
        """The command line that makes (or continues) this matrix in ``folder``."""
        names = {v: k for k, v in HELDOUT_SEEDS.items()}
        words = ["twilight", "edge", "--crossplay", *self.specs, "--deals", str(self.deals),
                 "--seed", names.get(self.seed, str(self.seed))]
        for flag in ("target", "boot", "matches"):
            if getattr(self, flag) is not None:
                words += [f"--{flag}", str(getattr(self, flag))]
        return " ".join(shlex.quote(w) for w in words + ["--out", folder])


# ---------------------------------------------------------------------------------
# the game: saddle point and value
# ---------------------------------------------------------------------------------

def saddle_point(m: np.ndarray) -> dict:
    """The pure saddle-point check of a payoff matrix whose rows maximise.

    Args:
        m: float array ``(rows, cols)``, the row player's payoff (here Moon − Sun deal points).

    Returns:
        ``{"row_min", "col_max"}`` (lists), ``"maximin"`` (``max_i min_j m``) with
        ``"maximin_row"``, ``"minimax"`` (``min_j max_i m``) with ``"minimax_col"``,
        ``"exists"`` (maximin == minimax) and ``"cells"``: every ``[i, j]`` that is the least
        of its row and the largest of its column (empty when none).

    Raises:
        ValueError: not a non-empty 2-d array of finite numbers.
    """
    m = _check_matrix(m)
    row_min, col_max = m.min(axis=1), m.max(axis=0)
    cells = [[int(i), int(j)] for i, j in zip(*np.nonzero((m == row_min[:, None]) & (m == col_max[None, :])))]
    return {"row_min": row_min.tolist(), "col_max": col_max.tolist(), "maximin": float(row_min.max()),
            "maximin_row": int(row_min.argmax()), "minimax": float(col_max.min()),
            "minimax_col": int(col_max.argmin()), "exists": bool(cells), "cells": cells}


def solve_game(m: np.ndarray) -> dict:
    """The value and one optimal mixture pair of a zero-sum matrix game whose rows maximise.

    The row player solves ``max v s.t. x m >= v (every column), sum x = 1, x >= 0`` and
    the column player ``min w s.t. m y <= w (every row), sum y = 1, y >= 0``, both with
    ``scipy.optimize.linprog`` (HiGHS); by the minimax theorem v = w.

    Args:
        m: float array ``(rows, cols)``, the row player's payoff.

    Returns:
        ``{"value": v, "row_mixture": x (rows,), "col_mixture": y (cols,)}`` (floats; the
        mixtures are probabilities summing to 1).

    Raises:
        ValueError: not a non-empty 2-d array of finite numbers.
        RuntimeError: a programme the solver did not solve, or v and w that disagree
            beyond round-off.
    """
    from scipy.optimize import linprog

    m = _check_matrix(m)
    rows, cols = m.shape
    scale = max(1.0, float(np.abs(m).max()))
    a = m / scale  # the solver's tolerances are absolute: solve on |a| <= 1
    out = {}
    for who, n, a_ub, sign in (("row", rows, np.hstack([-a.T, np.ones((cols, 1))]), -1.0),
                               ("col", cols, np.hstack([a, -np.ones((rows, 1))]), 1.0)):
        c = np.zeros(n + 1)
        c[-1] = sign  # the row player maximises v (minimises -v), the column player minimises w
        res = linprog(c, A_ub=a_ub, b_ub=np.zeros(a_ub.shape[0]), A_eq=np.r_[np.ones(n), 0.0][None, :],
                      b_eq=[1.0], bounds=[(0, None)] * n + [(None, None)], method="highs")
        if res.status != 0:
            raise RuntimeError(f"linprog did not solve the {who} player's programme: {res.message}")
        mix = np.clip(res.x[:n], 0.0, None)
        out[f"{who}_mixture"] = (mix / mix.sum()).tolist()
        out[f"{who}_value"] = float(res.x[-1]) * scale
    if abs(out["row_value"] - out["col_value"]) > 1e-6 * scale:
        raise RuntimeError(f"the two programmes disagree: {out['row_value']} and {out['col_value']}")
    return {"value": out["row_value"] + 0.0, "row_mixture": out["row_mixture"], "col_mixture": out["col_mixture"]}


def _check_matrix(m) -> np.ndarray:
    m = np.asarray(m, dtype=float)
    if m.ndim != 2 or m.size == 0 or not np.isfinite(m).all():
        raise ValueError(f"a payoff matrix must be a non-empty 2-d array of finite numbers, got shape {m.shape}")
    return m


def bootstrap_value(diffs: np.ndarray, seed: int, boot: int = VALUE_BOOT, saddle: list | None = None) -> dict:
    """The game value over bootstrap resamples of the deals, every cell resampled with the
    same deal indices (the cells share deals).

    Args:
        diffs: float array ``(k, k, N)``, Moon − Sun deal points per deal of each cell.
        seed: the run's seed (with :data:`VALUE_STREAM`, the resampling stream).
        boot: resamples (>= 1).
        saddle: the point estimate's saddle cell ``[i, j]``, or None.

    Returns:
        ``{"resamples", "value_ci_low", "value_ci_high"`` (95% percentile interval, deal
        points), ``"pure_saddle_share"`` (share of resamples with a pure saddle point) and
        ``"same_saddle_share"`` (share where ``saddle`` is one; None without it)``}``.
    """
    d = np.asarray(diffs, dtype=float)
    k1, k2, n = d.shape
    flat = d.reshape(k1 * k2, n)
    rng = np.random.default_rng(np.random.SeedSequence((int(seed), VALUE_STREAM)))
    values, pure, same = np.empty(boot), 0, 0
    for b in range(boot):
        w = np.bincount(rng.integers(0, n, n), minlength=n) / n
        mb = (flat @ w).reshape(k1, k2)
        values[b] = solve_game(mb)["value"]
        sp = saddle_point(mb)
        pure += sp["exists"]
        same += saddle is not None and list(saddle) in sp["cells"]
    lo, hi = percentile_ci(values)
    return {"resamples": boot, "value_ci_low": lo, "value_ci_high": hi, "pure_saddle_share": pure / boot,
            "same_saddle_share": None if saddle is None else same / boot}


def matrix_figures(specs: Sequence[str], cells: list[list[dict]], seed: int, boot: int = VALUE_BOOT) -> dict:
    """The figures of a finished matrix (module docstring) from its cells' edge results.

    Args:
        specs: the k specs (rows: solo, columns: Sun side).
        cells: ``cells[i][j]``, the result dict of the edge run of solo ``specs[i]`` against
            Sun ``specs[j]`` (an entry of its ``edge.json`` ``results``: ``figures.diff`` and
            ``moon_points``/``sun_points``, N × 3 deal points).
        seed: the run's seed (the value bootstrap's stream).
        boot: resamples of the value bootstrap.

    Returns:
        ``{"matrix", "ci_low", "ci_high"`` (k × k lists, deal points per deal),
        ``"diagonal"`` (k dicts: spec, mean, ci_low, ci_high), ``"saddle"``
        (:func:`saddle_point`), ``"game"`` (value, solo_mixture, sun_mixture) and
        ``"bootstrap"`` (:func:`bootstrap_value`)``}``.

    Raises:
        ValueError: cells of different deal counts.
    """
    k = len(specs)
    diffs = [[deal_diffs(c) for c in row] for row in cells]
    if len({x.shape for row in diffs for x in row}) != 1:
        raise ValueError("the cells hold different numbers of deals; every cell must play the same N deals")
    fig = {key: [[float(cells[i][j]["figures"]["diff"][key]) for j in range(k)] for i in range(k)]
           for key in ("mean", "ci_low", "ci_high")}
    m = np.array(fig["mean"])
    saddle = saddle_point(m)
    game = solve_game(m)
    return {"matrix": fig["mean"], "ci_low": fig["ci_low"], "ci_high": fig["ci_high"],
            "diagonal": [{"spec": specs[i], "mean": fig["mean"][i][i], "ci_low": fig["ci_low"][i][i],
                          "ci_high": fig["ci_high"][i][i]} for i in range(k)],
            "saddle": saddle,
            "game": {"value": game["value"], "solo_mixture": game["row_mixture"], "sun_mixture": game["col_mixture"]},
            "bootstrap": bootstrap_value(np.array(diffs), seed, boot, saddle["cells"][0] if saddle["exists"] else None)}


# ---------------------------------------------------------------------------------
# the output folder and its cells
# ---------------------------------------------------------------------------------

def cell_name(specs: Sequence[str], i: int, j: int) -> str:
    """The folder name of cell (solo ``specs[i]``, Sun ``specs[j]``): ``NN-MM_SOLO__SUN``, the
    specs with characters other than letters, digits, ``.``, ``=`` and ``-`` as ``_``, each
    cut to 40 characters (the indices keep names unique)."""
    def slug(spec: str) -> str:
        return re.sub(r"[^A-Za-z0-9.=-]+", "_", spec)[:40]

    return f"{i:02d}-{j:02d}_{slug(specs[i])}__{slug(specs[j])}"


def load_saved(folder: str) -> dict:
    """The saved settings of the matrix in ``folder`` (``crossplay.settings.json``).

    Raises:
        ValueError: an unreadable file, or one that is not a cross-play settings file.
    """
    path = os.path.join(folder, SETTINGS_FILE)
    try:
        doc = read_json(path, "cross-play settings")
    except JsonFileError as e:
        raise ValueError(f"--out {folder!r}: {e}") from None
    if not isinstance(doc, dict) or doc.get("kind") != KIND or any(k not in doc for k in SAVED):
        raise ValueError(f"--out {folder!r}: {path!r} is not a cross-play settings file (kind {KIND!r} with "
                         f"{', '.join(SAVED)})")
    return doc


def prepare_folder(s: CrossplaySettings) -> tuple[str, bool]:
    """``(folder, continued)``: the folder of an earlier run of the same matrix (``--out`` holding
    its settings file, which must equal these settings), or a new folder with the settings
    file written first.

    Raises:
        ValueError: saved settings that differ (naming them), or an output folder that
            cannot be used (:func:`~twilight_env.experiments.common.out_dir`).
    """
    if s.out is not None and os.path.isfile(os.path.join(s.out, SETTINGS_FILE)):
        saved = dict(load_saved(s.out))
        for k, default in (("target", DEFAULT_TARGET), ("boot", DEFAULT_BOOT), ("matches", DEFAULT_MATCHES)):
            saved[k] = default if saved.get(k) is None else saved[k]  # files written before defaults were saved
        differ = [f"{k} {saved[k]!r} there, {s.saved()[k]!r} now" for k in SAVED if saved[k] != s.saved()[k]]
        if differ:
            raise ValueError(f"--out {s.out!r} holds a cross-play matrix of other settings ({'; '.join(differ)}); "
                             f"continue it with its own command ({saved.get('command', 'see ' + SETTINGS_FILE)}) "
                             "or give another --out")
        return s.out, True
    if s.out is not None:
        check_new_folder(s.out, "--out", s.force)
    folder = out_dir(s.out, "crossplay", s.seed, s.force)
    k = len(s.specs)
    write_json(os.path.join(folder, SETTINGS_FILE),
               {"kind": KIND, **s.saved(), "command": s.command(folder),
                "cells": [[cell_name(s.specs, i, j) for j in range(k)] for i in range(k)]}, indent=1)
    return folder, False


def run_cell(s: CrossplaySettings, folder: str, i: int, j: int) -> dict:
    """The finished ``edge.json`` of cell (solo ``s.specs[i]``, Sun ``s.specs[j]``): read when
    finished, resumed from its checkpoint when interrupted, else played
    (:func:`~twilight_env.experiments.edge.solo_edge.run_study`).

    Raises:
        ValueError: a cell folder with files but no edge run, or a finished cell of other
            settings (specs, seed, deals or match settings).
        KeyboardInterrupt: Ctrl-C or SIGTERM, after the cell's checkpoint is written.
    """
    path = os.path.join(folder, CELLS, cell_name(s.specs, i, j))
    runner = {"workers": s.workers, "ray": s.ray, "progress": s.progress, "verbose": False}
    if os.path.isfile(os.path.join(path, CHECKPOINT)):
        solo_edge.run_study(StudySettings(resume=path, **runner), report_interrupt=False)
    elif not os.path.isfile(os.path.join(path, RESULT)):
        if os.path.isdir(path) and os.listdir(path):
            raise ValueError(f"the cell folder {path!r} holds files but no edge run ({CHECKPOINT} or {RESULT}); "
                             "remove it and run the command again")
        solo_edge.run_study(StudySettings(solo=s.specs[i], sun=s.specs[j], deals=s.deals, seed=s.seed, target=s.target,
                                          boot=s.boot, matches=s.matches, out=path, **runner),
                            report_interrupt=False)
    doc = finished_run("--crossplay", path, "an edge run of one cell")
    want = {"configs": [{"solo": s.specs[i], "sun": s.specs[j]}], "seed": s.seed, "deals": s.deals,
            "target": DEFAULT_TARGET if s.target is None else s.target,
            "boot": DEFAULT_BOOT if s.boot is None else s.boot,
            "matches": DEFAULT_MATCHES if s.matches is None else s.matches}
    differ = [f"{k} {doc.get(k)!r}, not {v!r}" for k, v in want.items() if doc.get(k) != v]
    if differ or (doc.get("deals_source") or {}).get("source") != "seed":
        what = "; ".join(differ) or "deals from a file"
        raise ValueError(f"the cell {path!r} holds an edge run of other settings ({what}); remove it and run the "
                         "command again to play it anew")
    return doc


def run_crossplay(settings: CrossplaySettings | None = None, **options) -> str:
    """Play (or continue) a cross-play matrix and write its figures; returns the output folder.

    Args:
        settings: a :class:`CrossplaySettings`, or None with its fields as keywords
            (``run_crossplay(specs=["random", "heuristic"], deals=6, seed=1, out="o")``).

    Raises:
        ValueError: bad settings (:class:`CrossplaySettings`), a folder of other settings
            (:func:`prepare_folder`) or a damaged cell (:func:`run_cell`).
        KeyboardInterrupt: Ctrl-C or SIGTERM; the playing cell's checkpoint is written and
            one line on stderr gives the command that continues the matrix.
    """
    t0 = time.time()
    s = settings if isinstance(settings, CrossplaySettings) else CrossplaySettings(**options)
    if isinstance(settings, CrossplaySettings) and options:
        s = dataclasses.replace(settings, **options)
    folder, continued = prepare_folder(s)
    k = len(s.specs)
    docs = [[None] * k for _ in range(k)]
    done = 0
    try:
        for i in range(k):
            for j in range(k):
                docs[i][j] = run_cell(s, folder, i, j)
                done += 1
                if s.verbose:
                    d = docs[i][j]["results"][0]["figures"]["diff"]
                    print(f"cell {done}/{k * k}: {s.specs[i]} (solo) vs {s.specs[j]} (Sun): Moon − Sun "
                          f"{fmt_ci(d['mean'], d['ci_low'], d['ci_high'], 1, signed=True)}", flush=True)
    except KeyboardInterrupt:
        print(f"the cross-play matrix in {folder} stopped with {done} of {k * k} cells finished; continue it "
              f"with: {s.command(folder)}", file=sys.stderr)
        raise
    cells = [[d["results"][0] for d in row] for row in docs]
    doc = {"kind": KIND, "settings": s.saved(), "specs": list(s.specs), "deals": s.deals, "seed": s.seed,
           "deals_source": docs[0][0]["deals_source"],
           "cells": [[os.path.join(CELLS, cell_name(s.specs, i, j)) for j in range(k)] for i in range(k)],
           **matrix_figures(s.specs, cells, s.seed), "units": "Moon − Sun deal points per deal (R5), "
           "each deal's three plays averaged; rows: the solo's agent, columns: the Sun side's agent",
           "command": s.command(folder), "git": git_hash(), "continued": continued,
           "cell_run_seconds": sum(float(d["run_seconds"]) for row in docs for d in row),
           "matrix_seconds_this_sitting": time.time() - t0}
    write_json(os.path.join(folder, RESULT_JSON), doc, indent=1)
    lines = report_lines(doc)
    write_text(os.path.join(folder, RESULT_MD), "\n".join(lines) + "\n")
    if s.verbose:
        print("\n".join(lines[2:]))
        print(f"\nFiles:\n  {os.path.join(folder, RESULT_MD)}\n  {os.path.join(folder, RESULT_JSON)}")
    return folder


# ---------------------------------------------------------------------------------
# the report
# ---------------------------------------------------------------------------------

def _mixture(specs: Sequence[str], mix: Sequence[float]) -> str:
    return ", ".join(f"{s} {p:.3f}" for s, p in zip(specs, mix) if p > 5e-4) or "none"


def report_lines(doc: dict) -> list[str]:
    """The lines of ``crossplay.md``: title, table (a pure saddle cell in bold), the
    diagonal, saddle, value and bootstrap sentences, and the command."""
    specs, n = doc["specs"], doc["deals"]
    k, sp, g, b = len(specs), doc["saddle"], doc["game"], doc["bootstrap"]
    rows = []
    for i in range(k):
        cells = [fmt_ci(doc["matrix"][i][j], doc["ci_low"][i][j], doc["ci_high"][i][j], 1, signed=True)
                 for j in range(k)]
        cells = [f"**{c}**" if [i, j] in sp["cells"] else c for j, c in enumerate(cells)]
        rows.append([f"`{specs[i]}`"] + cells + [fmt_number(sp["row_min"][i], 1, signed=True)])
    rows.append(["column max"] + [fmt_number(x, 1, signed=True) for x in sp["col_max"]] + [""])
    where = solo_edge.deals_words(doc["deals_source"], n)
    lines = [f"# Cross-play matrix, 3 players: {where}, each played 3 times per cell", "",
             markdown_table(["solo \\ Sun"] + [f"`{x}`" for x in specs] + ["row min"], rows), "",
             "Moon − Sun deal points per deal (each deal's three plays, one per solo hand, averaged), mean "
             f"[95% Student-t interval over the {n} deals]. Rows: the solo's agent (seat 0, deciding for the new "
             "moon); columns: the agent of both Sun seats. Every cell plays the same deals, so the cells are "
             "paired by deal; the solo maximises, the Sun side minimises.", "",
             "- Self-play diagonal: " + "; ".join(
                 f"`{d['spec']}` {fmt_ci(d['mean'], d['ci_low'], d['ci_high'], 1, signed=True)}"
                 for d in doc["diagonal"]) + "."]
    head = (f"- Pure saddle point: the solo's maximin is {fmt_number(sp['maximin'], 1, signed=True)} (row "
            f"`{specs[sp['maximin_row']]}`), the Sun side's minimax {fmt_number(sp['minimax'], 1, signed=True)} "
            f"(column `{specs[sp['minimax_col']]}`); ")
    if sp["exists"]:
        i, j = sp["cells"][0]
        lines.append(head + f"they are equal, so solo `{specs[i]}` against Sun `{specs[j]}` is a pure saddle point "
                     "(the least of its row and the largest of its column): neither side gains by leaving its agent.")
    else:
        lines.append(head + "they differ, so there is no pure saddle point and the optimal play mixes agents.")
    lines.append(f"- Value of the game in mixed strategies: {fmt_number(g['value'], 1, signed=True)} deal points "
                 f"per deal (95% bootstrap interval {fmt_number(b['value_ci_low'], 1, signed=True)} to "
                 f"{fmt_number(b['value_ci_high'], 1, signed=True)}, {b['resamples']} resamples of the deals, every "
                 f"cell resampled with the same deals); an optimal solo mixture: {_mixture(specs, g['solo_mixture'])}; "
                 f"an optimal Sun mixture: {_mixture(specs, g['sun_mixture'])}.")
    same = "" if b["same_saddle_share"] is None else (
        f", at the cell of the point estimate in {100 * b['same_saddle_share']:.0f}%")
    lines.append(f"- The resampled matrices have a pure saddle point in {100 * b['pure_saddle_share']:.0f}% of the "
                 f"resamples{same}.")
    lines += ["", f"Command: `{doc['command']}`"]
    return lines
