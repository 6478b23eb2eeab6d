"""Fewer deals per answer: a control-variate estimate of the edge, reported beside the plain one.

The edge of a run (``twilight edge``) is the mean over its N deals of ``Y``, the Moon
side's minus the Sun side's deal points (R5), the deal's three plays averaged (one per
solo hand, R7.4). Much of ``Y``'s spread is the deal's luck: the cards, not the play. A
*control variate* is a quantity ``X`` of each deal that follows that luck, whose mean
``mu`` over all deals is known (here: estimated on many other deals, cheaply): then

    theta_cv = mean(Y - beta · (X - mu))

has the same expectation as ``mean(Y)`` for any fixed ``beta``, and with ``beta`` the
regression of ``Y`` on ``X`` its variance is ``(1 - R²)`` times the plain one (Glasserman,
*Monte Carlo Methods in Financial Engineering*, 2003, ch. 4.1; AIVAT, Burch et al. 2018,
applies the same idea at chance and known-policy decisions of poker).

Controls (per deal, each averaged over the deal's three plays, as ``Y`` is):

- ``heuristic``: Moon − Sun deal points when the ``heuristic`` agent plays every seat
  (compiled rollouts, :func:`twilight_env.agents.fast_rollout.rollout`; deterministic, so a
  function of the deal alone);
- ``value``: 360 × the expert-iteration network's value (the shipped 3-player network of
  ``policy:default`` and ``guided:default``, NumPy) at the deal's first decision, the
  solo's, which sees its hand and the new moon's (R7.1): the network's forecast of
  Moon − Sun before any card is played.
- ``policy``: Moon − Sun when the shipped network alone (``policy:default``, greedy, so
  deterministic: a function of the deal alone) plays every seat, its plays side by side
  (:func:`twilight_env.experiments.common.play_lockstep`). The network plays close to the
  searches, so its outcome on a deal may follow theirs more closely than the heuristic's
  does; at 0.4 ms a decision (``benchmarks/decision_time.py``) it plays the baseline's
  deals in minutes, where a search would take days.

Unbiasedness: ``beta`` is *cross-fitted* (the deals split in two halves by index parity;
each half's corrections use the ``beta`` fitted on the other half), so each deal's
correction is independent of its own ``Y``; ``mu`` comes from ``baseline_deals`` deals of a
seed the run did not use. The 95% interval is Student-t over the corrected per-deal
values, widened by the uncertainty of ``mu`` (``beta' Cov(mu) beta``). Reported beside the
plain estimate, never instead of it.

How much any deal-level control can remove: write ``Y = g(deal) + e`` with ``e`` the part
that comes from the play itself (a search's own random worlds and iterations). No function
of the deal explains ``e``, so no deal-level control removes more than the *deal share*
``Var g / Var Y``. :func:`deal_share` estimates it by replaying the run's agents on its
first deals with other agent seeds: the covariance of the two plays' ``Y`` over deals is
``Var g`` (``--ceiling N``). For a deterministic agent (the greedy networks) the share is 1.

Command: ``python -m twilight_env.experiments.edge.control_variate EDGE_FOLDER`` reads a
finished run's ``edge.json``, rebuilds its deals (its seed or deal file) and prints, per
configuration, the plain and the control-variate estimate, the share of variance
removed and the deals the plain estimate would need for the same half-width.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np

from twilight_env.experiments.edge.core import deal_diffs, rotated_deal
from twilight_env.records.dealsets import deal_set, generate_deals
from twilight_env.rules.engine import State
from twilight_env.rules.heldout import check_not_heldout
from twilight_env.util.atomic import write_text
from twilight_env.util.report import fmt_ci, fmt_number, mean_ci, text_table

CONTROLS = ("heuristic", "value", "policy")
"""The controls this module computes (module docstring)."""
BASELINE_SEED = 20_261_202
"""Seed of the deals on which ``mu`` (each control's mean) is estimated; not a held-out set's."""
BASELINE_DEALS = 10_000
"""Deals on which ``mu`` is estimated by default."""


def controls(deals, which=CONTROLS) -> np.ndarray:
    """Each deal's controls, averaged over its three plays (R7.4 rotation, as ``twilight edge``).

    Args:
        deals: 3-player deals (four hands of card codes, seat order, ``records.dealsets``).
        which: names from :data:`CONTROLS`.

    Returns:
        float64 ``(N, len(which))``, in deal points (Moon − Sun).

    Raises:
        ValueError: an unknown control name.
    """
    bad = [w for w in which if w not in CONTROLS]
    if bad:
        raise ValueError(f"unknown control(s) {bad}; the controls are {', '.join(CONTROLS)}")
    n = len(deals)
    out = np.zeros((n, len(which)), dtype=np.float64)
    states = [[State.from_deal(rotated_deal(d, r), 0, 3) for r in range(3)] for d in deals]
    for j, w in enumerate(which):
        if w == "heuristic":
            from twilight_env.agents.fast_rollout import rollout

            for i, plays in enumerate(states):
                diffs = []
                for st in plays:
                    end = rollout(st.clone())
                    m, s = end.side_scores()
                    diffs.append(m - s)
                out[i, j] = float(np.mean(diffs))
        elif w == "value":
            out[:, j] = _first_values(states)
        else:
            out[:, j] = _policy_outcomes(states)
    return out


POLICY_BLOCK = 512
"""Plays per lockstep batch of the ``policy`` control."""


def _policy_outcomes(states) -> np.ndarray:
    """Moon − Sun of ``policy:default`` on every seat, by deal (the three plays averaged)."""
    from twilight_env.experiments.common import play_lockstep

    flat = [st.clone() for plays in states for st in plays]
    diffs = np.empty(len(flat))
    for k in range(0, len(flat), POLICY_BLOCK):
        games = [(st, ["policy"] * 4, 0, k + i, 0) for i, st in enumerate(flat[k:k + POLICY_BLOCK])]
        for i, st in enumerate(play_lockstep(games)):
            m, s = st.side_scores()
            diffs[k + i] = m - s
    return diffs.reshape(-1, 3).mean(axis=1)


def _first_values(states) -> np.ndarray:
    """360 × the network's value of the solo's first decision, by deal (the three plays averaged)."""
    from twilight_env.agents.guided import numpy_model
    from twilight_env.agents.nn.features import infoset_row, role_of
    from twilight_env.rules.infoset import InfoSet

    net, _ = numpy_model("default", 3)
    rows, roles, legal = [], [], []
    for plays in states:
        for st in plays:
            info = InfoSet(st, st.deciding_seat)
            rows.append(infoset_row(info))
            roles.append(role_of(3, info.acting_seat))
            m = np.zeros(31, dtype=bool)
            m[list(info.legal_actions)] = True
            legal.append(m)
    values = []
    for k in range(0, len(rows), 4096):
        _, v = net.forward(np.array(rows[k:k + 4096], np.int64), np.array(roles[k:k + 4096]),
                           np.array(legal[k:k + 4096]))
        values.append(v)
    v = np.concatenate(values) if values else np.zeros(0)
    # the solo decides first and is side 0 (Moon): the value is already Moon's view
    return 360.0 * v.reshape(-1, 3).mean(axis=1)


def baseline(n: int = BASELINE_DEALS, seed: int = BASELINE_SEED, which=CONTROLS) -> tuple[np.ndarray, np.ndarray]:
    """``(mu, cov_mu)``: each control's mean over ``n`` deals of ``seed`` and the covariance
    of that estimate (the sample covariance / n).

    Raises:
        ValueError: ``seed`` is a held-out set's, or ``n`` < 2.
    """
    check_not_heldout(seed, "baseline seed")
    if n < 2:
        raise ValueError(f"the baseline needs at least 2 deals, got {n}")
    x = controls(generate_deals(n, seed), which)
    return x.mean(axis=0), np.atleast_2d(np.cov(x, rowvar=False)) / n


def cv_estimate(y, x, mu, cov_mu=None, confidence: float = 0.95) -> dict:
    """The cross-fitted control-variate estimate of ``E[Y]`` (module docstring).

    Args:
        y: ``(N,)`` per-deal values; x: ``(N, k)`` controls of the same deals (or ``(N,)``).
        mu: ``(k,)`` the controls' means (from other deals); cov_mu: ``(k, k)`` covariance of
            that estimate (None: ``mu`` exact).

    Returns:
        ``{"mean", "ci_low", "ci_high", "half_width", "plain": {...}, "variance_removed",
        "beta", "deals_equivalent"}``: ``variance_removed`` is 1 − (corrected variance /
        plain variance) per deal; ``deals_equivalent`` the deals the plain estimate would
        need for the same half-width.

    Raises:
        ValueError: fewer than 4 deals, or shapes that do not agree.
    """
    from scipy import stats

    y = np.asarray(y, dtype=np.float64)
    x = np.asarray(x, dtype=np.float64)
    x = x[:, None] if x.ndim == 1 else x
    mu = np.atleast_1d(np.asarray(mu, dtype=np.float64))
    n, k = x.shape
    if y.shape != (n,) or mu.shape != (k,):
        raise ValueError(f"shapes disagree: y {y.shape}, x {x.shape}, mu {mu.shape}")
    if n < 4:
        raise ValueError(f"the control-variate estimate needs at least 4 deals, got {n}")
    folds = np.arange(n) % 2
    betas = []
    corrected = np.empty(n)
    for f in (0, 1):
        fit = folds != f
        xc = x[fit] - x[fit].mean(axis=0)
        beta, *_ = np.linalg.lstsq(xc, y[fit] - y[fit].mean(), rcond=None)
        betas.append(beta)
        corrected[folds == f] = y[folds == f] - (x[folds == f] - mu) @ beta
    beta_bar = np.mean(betas, axis=0)
    mean = float(corrected.mean())
    var = corrected.var(ddof=1) / n
    if cov_mu is not None:
        var += float(beta_bar @ np.atleast_2d(cov_mu) @ beta_bar)
    t = stats.t.ppf(0.5 + confidence / 2, n - 1)
    hw = float(t * math.sqrt(var))
    pm, plo, phi = mean_ci(y, confidence)
    plain_var = y.var(ddof=1) / n
    return {"mean": mean, "ci_low": mean - hw, "ci_high": mean + hw, "half_width": hw,
            "plain": {"mean": pm, "ci_low": plo, "ci_high": phi, "half_width": (phi - plo) / 2},
            "variance_removed": float(1 - var / plain_var) if plain_var > 0 else math.nan,
            "beta": [float(b) for b in beta_bar], "deals": n,
            "deals_equivalent": float(n * plain_var / var) if var > 0 else math.inf}


def analyse_run(folder: str, baseline_deals: int = BASELINE_DEALS, which=CONTROLS) -> list[dict]:
    """Plain and control-variate edge of each configuration of a finished ``twilight edge`` run.

    Raises:
        ValueError: no ``edge.json`` in ``folder``, a 4-player or individual-lines run, or
            its deals cannot be rebuilt.
    """
    doc = _read_run(folder)
    src = doc["deals_source"]
    results = doc["results"]
    n = int(doc["deals"])
    deals, _ = deal_set(n, src.get("seed"), 3, src.get("path"))
    x = controls(deals, which)
    mu, cov_mu = baseline(baseline_deals, which=which)
    out = []
    for r in results:
        y = deal_diffs(r)
        est = cv_estimate(y, x, mu, cov_mu)
        corr = [float(np.corrcoef(y, x[:, j])[0, 1]) for j in range(x.shape[1])]
        out.append({"label": r["label"], "controls": list(which), "correlation": corr, "mu": mu.tolist(),
                    "baseline_deals": baseline_deals, **est})
    return out


REPLAY_SEED = 20_261_203
"""Agent seed of :func:`deal_share`'s replays (deal ``i`` keeps its cards; only the agents'
random streams change)."""


def deal_share(folder: str, n: int, workers: int = 1, progress: bool = False) -> list[dict]:
    """The share of each configuration's per-deal variance that is the deal's (module docstring).

    Replays the run's agents on its first ``n`` deals with agent seed :data:`REPLAY_SEED`
    and compares each deal's ``Y`` with the run's own.

    Returns:
        per configuration ``{"label", "deals", "share", "share_ci", "correlation"}``:
        ``share`` = cov(Y_run, Y_replay) / sqrt(var Y_run · var Y_replay) over the deals
        (the correlation of two independent plays), with a 95% bootstrap interval (1,000
        resamples of the deals); the most variance a deal-level control can remove.

    Raises:
        ValueError: as :func:`analyse_run`, or ``n`` < 10 or more than the run's deals.
    """
    from twilight_env.experiments.edge.solo_edge import play_config

    doc = _read_run(folder)
    total = int(doc["deals"])
    if total < 10:
        raise ValueError(f"the run in {folder!r} has {total} deals; --ceiling needs a run of at least 10")
    if not 10 <= n <= total:
        raise ValueError(f"--ceiling N takes 10 to {total} deals (the run's), got {n}")
    src = doc["deals_source"]
    deals, _ = deal_set(total, src.get("seed"), 3, src.get("path"))
    rng = np.random.default_rng(0)
    out = []
    for k, r in enumerate(doc["results"]):
        y = deal_diffs(r)[:n]
        moon, sun = play_config(deals[:n], r["solo_spec"], r["sun_spec"], REPLAY_SEED, k, workers, progress=progress)
        y2 = (moon - sun).mean(axis=1)
        corr = float(np.corrcoef(y, y2)[0, 1])
        boots = []
        for _ in range(1000):
            i = rng.integers(0, n, n)
            boots.append(np.corrcoef(y[i], y2[i])[0, 1])
        lo, hi = np.nanpercentile(boots, [2.5, 97.5])
        out.append({"label": r["label"], "deals": n, "share": corr, "share_ci": [float(lo), float(hi)],
                    "mean_run": float(y.mean()), "mean_replay": float(y2.mean())})
    return out


def _read_run(folder: str) -> dict:
    path = Path(folder) / "edge.json"
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        doc["deals_source"], doc["results"], doc["deals"]
    except FileNotFoundError:
        raise ValueError(f"{str(path)!r} does not exist: give the folder of a finished `twilight edge` run") from None
    except (json.JSONDecodeError, KeyError, TypeError) as e:
        raise ValueError(f"{str(path)!r} is not the result of a `twilight edge` run ({e})") from None
    return doc


def main(argv=None) -> int:
    """``python -m twilight_env.experiments.edge.control_variate FOLDER``: print the table; 2 on a bad input."""
    ap = argparse.ArgumentParser(prog="python -m twilight_env.experiments.edge.control_variate",
                                 description="plain and control-variate edge of a finished `twilight edge` run")
    ap.add_argument("folder", help="output folder of a finished 3-player `twilight edge` run (holds edge.json)")
    ap.add_argument("--baseline-deals", type=int, default=BASELINE_DEALS,
                    help=f"deals on which each control's mean is estimated (default {BASELINE_DEALS:,})")
    ap.add_argument("--controls", nargs="+", default=list(CONTROLS), choices=CONTROLS,
                    help="controls to use (default: all three; the policy control plays the network on every "
                         "deal of the run and the baseline, about 1.5 minutes of one core per 10,000 deals, so "
                         "`--controls heuristic value` takes seconds)")
    ap.add_argument("--json", help="also write the figures to this JSON file")
    ap.add_argument("--ceiling", type=int, default=None, metavar="N",
                    help="instead: replay the run's agents on its first N deals (N >= 10) with other agent seeds "
                         "and print the deal share, the most variance any deal-level control can remove (plays N "
                         "deals; --controls and --baseline-deals are not used)")
    ap.add_argument("--workers", type=int, default=1, help="processes for --ceiling's replays (default 1)")
    args = ap.parse_args(argv)
    if args.ceiling is not None:
        try:
            rows = deal_share(args.folder, args.ceiling, args.workers, progress=True)
        except ValueError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        print(text_table(["agent", "deals", "deal share [95% CI]", "mean Y, run / replay"],
                         [[r["label"], str(r["deals"]),
                           f"{r['share']:.2f} [{r['share_ci'][0]:.2f}, {r['share_ci'][1]:.2f}]",
                           f"{fmt_number(r['mean_run'], 1, True)} / {fmt_number(r['mean_replay'], 1, True)}"] for r in rows]))
        print(f"deal share: correlation over deals of the run's Y and a replay's (agent seed {REPLAY_SEED}); "
              "95% bootstrap interval; no deal-level control removes more of the variance")
        if args.json:
            write_text(args.json, json.dumps(rows, indent=1))
        return 0
    print(f"controls {', '.join(args.controls)} on the run's deals and {args.baseline_deals:,} baseline deals ...",
          file=sys.stderr, flush=True)
    try:
        rows = analyse_run(args.folder, args.baseline_deals, tuple(args.controls))
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2

    def ci(d):
        return fmt_ci(d["mean"], d["ci_low"], d["ci_high"], signed=True)  # no -0.0

    table = [[r["label"], str(r["deals"]), ci(r["plain"]), ci(r), f"{r['variance_removed']:.0%}",
              f"{r['deals_equivalent']:,.0f}", " ".join(fmt_number(c, 2, True) for c in r["correlation"])] for r in rows]
    print(text_table(["agent", "deals", "Moon - Sun (plain)", "Moon - Sun (control variates)", "variance removed",
                      "plain deals for that half-width", "correlation " + "/".join(args.controls)], table))
    print(f"controls' means from {args.baseline_deals:,} deals of seed {BASELINE_SEED}; beta cross-fitted "
          "(two halves); 95% t intervals")
    if args.json:
        write_text(args.json, json.dumps(rows, indent=1))  # atomically (twilight_env.util.atomic)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = ["CONTROLS", "BASELINE_SEED", "BASELINE_DEALS", "REPLAY_SEED", "controls", "baseline", "cv_estimate",
           "analyse_run", "deal_share", "main"]
