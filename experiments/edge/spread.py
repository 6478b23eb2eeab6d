"""``twilight edge --spread FOLDER FOLDER [FOLDER ...]``: the agent-level error of an edge.

A self-play edge (Moon − Sun deal points per deal, R7.5) is one agent's: its deal-level
95% interval says how well *that agent's* edge is known, not how well "the edge at this
strength" is. Networks trained by one recipe from different seeds (the same settings,
another seed of the split, the initial weights and the batch order, and the same data or
a new draw of it) play differently, and so do their edges. Their spread on the same deals is the error bar of
the recipe's edge; this mode measures it from the finished edge runs of k ≥ 2 such
agents, each on all three chairs, on the generated deals of one seed.

Over the first n deals every run played (a run of N deals holds the first N deals of its
seed, so deal i is the same deal in every run), with X the n × k table of Moon − Sun per
deal (each deal's three plays averaged):

- each agent's edge over those n deals, with its deal-level Student-t 95% interval;
- the mean of the k edges, their sample standard deviation and range;
- the two-way analysis of variance of X (deals and agents both random: a randomised
  complete block design, one value per cell), with mean squares MS_agents (k − 1 degrees
  of freedom), MS_deals (n − 1) and MS_residual ((k − 1)(n − 1)):

  - the F test that the agents' edges differ beyond deal noise, ``F = MS_agents /
    MS_residual`` (with k = 2, the square of ``--compare``'s paired t statistic);
  - the agents' standard deviation freed from deal noise, ``sqrt(max(0, (MS_agents −
    MS_residual) / n))`` (the method-of-moments variance component; 0 when F < 1);
  - **the recipe's mean edge**: the mean with its 95% confidence interval as the mean over
    the recipe's agents and all deals, both random,
    ``SE² = (MS_deals + max(0, MS_agents − MS_residual)) / (n k)`` (the
    agents' share, the deals' share and the rest, each estimated by its mean square) and
    Satterthwaite's degrees of freedom. The deals' luck is shared by every agent and
    cancels from their spread, so the spread alone (``t(k − 1) · sd / √k``) would hold
    the deals fixed; this interval holds neither fixed, and it is never narrower than
    the deal-level one. With k = 3 and agents that differ, its t quantile comes near
    4.30 (2 degrees of freedom): three networks bound the recipe's mean only loosely. It is
    not the range of one new agent's edge, which scatters about the mean more widely;
- the deal-level interval of the same mean (each deal's k edges averaged): how well these
  k agents' own average is known, the agents held fixed;
- every pair's difference, paired by deal (as ``--compare``).

It plays nothing. With ``--out FOLDER`` it also writes ``spread.md`` and ``spread.json``
there (one that holds them needs ``--force``).
"""

from __future__ import annotations

import math
import os
from typing import Sequence

import numpy as np

from twilight_env.records.game_records import check_records_folder
from twilight_env.util.atomic import write_json, write_text
from twilight_env.util.report import fmt_ci, markdown_table, mean_ci

from twilight_env.experiments.edge.core import deal_diffs, finished_run, wrap

SPREAD_JSON = "spread.json"
SPREAD_MD = "spread.md"


def _run_row(folder: str) -> dict:
    """One finished one-agent run: its label, seed, and Moon − Sun per deal.

    Raises:
        ValueError: no finished team-scoring run in ``folder``, a run of several
            configurations or of mixed strengths, or a run on deals from a file.
    """
    doc = finished_run("--spread", folder, "a `twilight edge SPEC --seed S` run")
    configs = doc.get("configs") or []
    if len(doc["results"]) != 1 or len(configs) != 1 or configs[0].get("solo") != configs[0].get("sun"):
        shown = "; ".join(f"solo={c.get('solo')}, sun={c.get('sun')}" for c in configs)
        raise ValueError(f"--spread {folder!r} is a run of {shown}; it reads runs of one agent on all three chairs "
                         "(one SPEC, no --solo/--sun)")
    source = doc.get("deals_source") or {}
    if source.get("source") != "seed":
        raise ValueError(f"--spread {folder!r} played deals from a file ({source.get('path')!r}); pairing by deal "
                         "needs runs on the generated deals of one --seed")
    r = doc["results"][0]
    moon, sun = (_as_points(r[key]) for key in ("moon_points", "sun_points"))
    want = (int(doc["deals"]), 3)
    if moon is None or sun is None or moon.shape != want or sun.shape != want:
        got = [None if a is None else a.shape for a in (moon, sun)]
        raise ValueError(f"--spread {folder!r}: its edge.json is damaged: moon_points and sun_points must each hold "
                         f"{want[0]} deals × 3 plays of numbers (its 'deals'), got shapes {got[0]} and {got[1]}")
    return {"label": r["label"], "folder": folder, "seed": int(doc["seed"]), "deals": int(doc["deals"]),
            "per_deal": deal_diffs(r)}


def _as_points(value) -> np.ndarray | None:
    """``value`` as a float array, or None where it is not one (a damaged file may hold anything)."""
    try:
        return np.asarray(value, float)
    except (TypeError, ValueError):
        return None


def _anova(x: np.ndarray) -> dict:
    """Two-way analysis of variance of ``x`` (n deals × k agents, one value per cell).

    Returns:
        ``{"f", "df_agents", "df_residual", "p", "sd_agents", "ms_agents", "ms_deals",
        "ms_residual", "recipe_se", "recipe_df"}``: the F statistic of the agents (``inf``
        when the residual is 0 and the agents differ), its degrees of freedom and p value,
        the agents' standard deviation freed from deal noise, the mean squares, and the
        standard error of the grand mean with both agents and deals random, with its
        Satterthwaite degrees of freedom (module docstring); deal points per deal.
    """
    from scipy import stats

    n, k = x.shape
    grand = x.mean()
    ss_agents = n * float(((x.mean(axis=0) - grand) ** 2).sum())
    ss_deals = k * float(((x.mean(axis=1) - grand) ** 2).sum())
    ss_residual = max(0.0, float(((x - grand) ** 2).sum()) - ss_agents - ss_deals)
    df_a, df_d, df_r = k - 1, n - 1, (k - 1) * (n - 1)
    ms_a, ms_d, ms_r = ss_agents / df_a, ss_deals / df_d, ss_residual / df_r
    # Var(grand mean) = s_a^2/k + s_d^2/n + s_e^2/(nk), each component by its mean square
    terms = [(ms_d, df_d)] + ([(ms_a, df_a), (-ms_r, df_r)] if ms_a > ms_r else [])
    total = sum(m for m, _ in terms)
    dof = total ** 2 / sum(m * m / d for m, d in terms) if total > 0 else math.nan
    if ms_r > 0:
        f = ms_a / ms_r
        p = float(stats.f.sf(f, df_a, df_r))
    else:
        f, p = (math.inf, 0.0) if ms_a > 0 else (math.nan, math.nan)
    return {"f": f, "df_agents": df_a, "df_residual": df_r, "p": p,
            "sd_agents": math.sqrt(max(0.0, (ms_a - ms_r) / n)), "ms_agents": ms_a, "ms_deals": ms_d,
            "ms_residual": ms_r, "recipe_se": math.sqrt(max(0.0, total) / (n * k)), "recipe_df": dof}


def recipe_interval(x: np.ndarray, anova: dict | None = None, confidence: float = 0.95) -> tuple[float, float, float]:
    """The grand mean of ``x`` (n deals × k agents, k ≥ 2, n ≥ 2) with its confidence
    interval as the mean over all agents and all deals, both random (module docstring),
    Student t with Satterthwaite's degrees of freedom.

    Returns:
        ``(mean, low, high)``, in the units of ``x``; the mean itself when ``x`` holds no
        spread at all.
    """
    from scipy import stats

    a = _anova(x) if anova is None else anova
    mean, se, dof = float(x.mean()), a["recipe_se"], a["recipe_df"]
    if not (se > 0 and dof > 0):
        return mean, mean, mean
    half = float(stats.t.ppf(0.5 + confidence / 2, dof)) * se
    return mean, mean - half, mean + half


def _paired_table(folders: Sequence[str]) -> tuple[list[dict], np.ndarray]:
    """The runs of ``folders`` (:func:`_run_row`, each with its display ``name``) and their
    n × k table of Moon − Sun per deal over the first n deals all played.

    Raises:
        ValueError: as :func:`spread_runs`.
    """
    if len(folders) < 2:
        raise ValueError(f"--spread takes the folders of two or more runs (three or more for an error bar), got "
                         f"{len(folders)}")
    real = [os.path.realpath(f) for f in folders]
    twice = sorted({f for f, r in zip(folders, real) if real.count(r) > 1})
    if twice:
        raise ValueError(f"--spread names one folder twice ({', '.join(map(repr, twice))}); give each run once")
    rows = [_run_row(f) for f in folders]
    seeds = sorted({r["seed"] for r in rows})
    if len(seeds) > 1:
        shown = ", ".join(f"{r['folder']!r}: seed {r['seed']}" for r in rows)
        raise ValueError(f"--spread: the runs played the deals of different seeds ({shown}); pairing by deal needs "
                         "the same deals: runs of one --seed")
    n = min(r["deals"] for r in rows)
    x = np.stack([r["per_deal"][:n] for r in rows], axis=1)
    for i in range(len(rows)):
        for j in range(i):
            if np.array_equal(x[:, i], x[:, j]):
                raise ValueError(f"--spread: {rows[j]['folder']!r} and {rows[i]['folder']!r} gave the same points on "
                                 f"every one of their first {n} deals: one agent twice (every deal is seeded by "
                                 "(seed, deal, agents)); give runs of different agents")
    labels = [r["label"] for r in rows]
    for r in rows:  # one spec, several agents (e.g. a `default` replaced between runs): name by folder
        r["name"] = f"{r['label']} ({r['folder']})" if labels.count(r["label"]) > 1 else r["label"]
    return rows, x


def spread_runs(folders: Sequence[str]) -> dict:
    """The spread of the edges of k ≥ 2 agents on the same deals (module docstring).

    Args:
        folders: output folders of finished ``twilight edge SPEC --seed S`` runs, one agent
            each, all on the deals of one seed (any numbers of deals: the first n all
            played are used).

    Returns:
        ``{"seed", "deals", "agents": [{"label", "folder", "run_deals", "edge", "ci_low",
        "ci_high"}, ...], "mean", "sd", "range", "recipe": {"mean", "ci_low", "ci_high", "se",
        "df"},
        "deal_level": {"mean", "ci_low", "ci_high"}, "anova": {...}, "pairs": [{"upper",
        "lower", "difference", "ci_low", "ci_high"}, ...]}``; deal points per deal.

    Raises:
        ValueError: fewer than two folders, one folder twice, a folder :func:`_run_row`
            refuses, runs on the deals of different seeds, or two runs with the same
            points on every deal they share (one agent twice).
    """
    rows, x = _paired_table(folders)
    agents = []
    for r, col in zip(rows, x.T):
        m, lo, hi = mean_ci(col)
        agents.append({"label": r["name"], "folder": r["folder"], "run_deals": r["deals"], "edge": m,
                       "ci_low": lo, "ci_high": hi})
    edges = x.mean(axis=0)
    k = len(rows)
    anova = _anova(x)
    mean, low, high = recipe_interval(x, anova)
    dm, dlo, dhi = mean_ci(x.mean(axis=1))
    pairs = []
    for i in range(k):
        for j in range(i + 1, k):
            d, lo, hi = mean_ci(x[:, i] - x[:, j])
            pairs.append({"upper": rows[i]["name"], "lower": rows[j]["name"], "difference": d, "ci_low": lo,
                          "ci_high": hi})
    return {"seed": rows[0]["seed"], "deals": len(x), "agents": agents, "mean": mean, "sd": float(edges.std(ddof=1)),
            "range": float(edges.max() - edges.min()),
            "recipe": {"mean": mean, "ci_low": low, "ci_high": high, "se": anova["recipe_se"],
                       "df": anova["recipe_df"]},
            "deal_level": {"mean": dm, "ci_low": dlo, "ci_high": dhi}, "anova": anova, "pairs": pairs}


def _ci(d: dict, mean_key: str = "mean") -> str:
    return fmt_ci(d[mean_key], d["ci_low"], d["ci_high"], signed=True)


def spread_summary(s: dict) -> list[str]:
    """The sentences of a :func:`spread_runs` result (unwrapped)."""
    a, r, k = s["anova"], s["recipe"], len(s["agents"])
    differ = ("the agents' edges differ beyond deal noise" if a["p"] < 0.05
              else "no difference among the agents' edges is shown beyond deal noise")
    beyond = f"{a['sd_agents']:.1f}" + (" (F below 1: they differ less than deal noise alone would make them)"
                                         if a["f"] < 1 else "")
    lines = [
        f"Over the first {s['deals']} deals of seed {s['seed']} (every figure here), {k} agents: mean edge "
        f"{s['mean']:+.1f}, standard deviation {s['sd']:.1f}, range {s['range']:.1f} deal points per deal.",
        f"Agents as treatments, deals as blocks: F({a['df_agents']}, {a['df_residual']}) = {a['f']:.2f}, "
        f"p = {a['p']:.3g}: {differ}; the agents' standard deviation beyond deal noise: {beyond}.",
        f"The recipe's mean edge, if these agents are draws of one recipe (the mean over its agents and all "
        f"deals, both random; Satterthwaite's {r['df']:.1f} degrees of freedom): {_ci(r)}; these {k} agents' "
        f"mean edge over all deals (the agents fixed): {_ci(s['deal_level'])}.",
    ]
    if k < 3:
        lines.append("With two agents the agents' part of the interval rests on one degree of freedom: three or "
                     "more make an error bar.")
    return lines


def spread_lines(s: dict) -> list[str]:
    """What ``twilight edge --spread`` prints (each line within the terminal width)."""
    out = wrap(f"Moon − Sun per deal over the first {s['deals']} deals of seed {s['seed']}, the deals every run "
               "played:")
    for a in s["agents"]:
        out += wrap(f"{a['label']}: {_ci(a, 'edge')} ({a['folder']})")
    for p in s["pairs"]:
        out += wrap(f"{p['upper']} minus {p['lower']}, paired by deal: {_ci(p, 'difference')}")
    for sentence in spread_summary(s):
        out += wrap(sentence)
    return out


def spread_markdown(s: dict) -> str:
    """``spread.md``: the agents' table, the pairs' table and the summary."""
    agents = markdown_table(["agent", "folder", f"Moon − Sun over the {s['deals']} deals [95% CI]",
                             "deals the run played"],
                            [[a["label"], a["folder"], _ci(a, "edge"), a["run_deals"]] for a in s["agents"]])
    pairs = markdown_table(["agent", "minus agent", "difference, paired by deal [95% CI]"],
                           [[p["upper"], p["lower"], _ci(p, "difference")] for p in s["pairs"]])
    return "\n\n".join([f"# The spread of the edge among agents (seed {s['seed']}, first {s['deals']} deals)",
                        agents, pairs, "\n".join(f"- {line}" for line in spread_summary(s))]) + "\n"


def run_spread(folders: Sequence[str], out: str | None = None, force: bool = False) -> dict:
    """:func:`spread_runs`, printed, and written to ``out`` (``spread.md``, ``spread.json``) when given.

    Raises:
        ValueError: as :func:`spread_runs`; an ``out`` that holds a spread already and no
            ``force``, an ``out`` that is a file or cannot be written
            (:func:`~twilight_env.records.game_records.check_records_folder`), or ``force``
            without ``out``.
    """
    if out is None and force:
        raise ValueError("--force goes with --out (it writes over spread.md/.json there); give --out FOLDER or "
                         "leave --force out")
    for name in (SPREAD_MD, SPREAD_JSON) if out is not None else ():
        check_records_folder(out, name, "--out", force)  # a file, an existing output without --force, no access
    s = spread_runs(folders)
    print("\n".join(spread_lines(s)))
    if out is not None:
        os.makedirs(out, exist_ok=True)
        anova = {key: (v if not isinstance(v, float) or math.isfinite(v) else None) for key, v in s["anova"].items()}
        write_json(os.path.join(out, SPREAD_JSON), dict(s, anova=anova), indent=1)  # strict JSON: no Infinity
        write_text(os.path.join(out, SPREAD_MD), spread_markdown(s))
    return s
