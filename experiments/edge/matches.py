"""The edge study's match rules, vectorised: whole matches simulated from pools of deal
points (R6.1, R6.2, R7.4-R7.6; the four-line match of R8 in
:func:`twilight_env.experiments.edge.individual_edge.simulate_lines` is built on
:func:`simulate_highest_total`).

The lowest module of :mod:`twilight_env.experiments.edge`: it imports no other module of
the study. Every simulator here is a copy of the match rules kept for speed (many
thousands of matches at once, as NumPy array passes); ``tests/rules/test_parity.py``
holds each to the reference rules. Their old names in
:mod:`twilight_env.experiments.edge.solo_edge` stay importable.
"""

from __future__ import annotations

import math

import numpy as np

from twilight_env.experiments.common import check_int

SOLO_ORDER = (0, 2, 1)
"""R7.4: the solo of deal k of a match is player ``SOLO_ORDER[k % 3]``."""
BOOT_STREAM = 2
"""Tag of the bootstrap's random stream (distinct from deals and agents)."""
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
            decided, won = _goals_333(a_ts, a_tn, target, decided, won)
        done = alive[decided]
        solo_won[done] = won[decided]
        length[done] = k + 1
        alive = alive[~decided]
    undecided = np.zeros(B * matches, dtype=bool)
    undecided[alive] = True
    return _per_pool({"p_solo": solo_won.astype(float), "deals": length.astype(float)}, undecided, B, matches)


def _goals_333(a_ts: np.ndarray, a_tn: np.ndarray, target: int, decided: np.ndarray,
               won: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(decided, won)`` of :func:`simulate_fixed_solo` with the goals 333, 666, 999 (R6.2,
    below ``target``, in that order) applied to the solo's and the others' totals ``a_ts``,
    ``a_tn`` (int64 arrays of the matches still played); both on one goal play on (R9)."""
    g_dec = np.zeros(a_ts.size, dtype=bool)
    g_won = np.zeros(a_ts.size, dtype=bool)
    g_tie = np.zeros(a_ts.size, dtype=bool)
    for goal in GOALS_333:
        if goal >= target:
            break
        hs, hn = a_ts == goal, a_tn == goal
        open_ = ~(g_dec | g_tie)
        one = (hs ^ hn) & open_
        g_won[one] = hs[one]
        g_dec |= one
        g_tie |= hs & hn & open_
    return np.where(g_dec, True, decided & ~g_tie), np.where(g_dec, g_won, won)


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


def percentile_ci(x: np.ndarray, confidence: float = 0.95) -> tuple[float, float]:
    """The central ``confidence`` interval of the non-NaN values of ``x`` (percentile
    bootstrap), or ``(nan, nan)`` when there are none."""
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
    lo, hi = percentile_ci(fb["p_solo"])
    fixed = {"p_solo_wins": float(fx["p_solo"][0]), "ci_low": lo, "ci_high": hi,
             "mean_deals": float(fx["deals"][0]), "matches": 50 * matches,
             "undecided": int(fx["undecided"][0])}

    rx = simulate_rotating(full_m, full_s, rng, 50 * matches, target)
    rb = simulate_rotating(boot_m, boot_s, rng, matches, target)
    rot = {"p_win": [float(v) for v in rx["p_win"][0]],
           "p_win_ci": [list(percentile_ci(rb["p_win"][:, p])) for p in range(3)],
           "mean_totals": [float(v) for v in rx["totals"][0]],
           "mean_totals_ci": [list(percentile_ci(rb["totals"][:, p])) for p in range(3)],
           "mean_deals": float(rx["deals"][0]), "matches": 50 * matches,
           "undecided": int(rx["undecided"][0])}
    # goals_333 (R6.2), fixed solo: its own random stream, so the figures above do not move
    grng = np.random.default_rng(np.random.SeedSequence((int(seed), BOOT_STREAM, int(config), GOALS_333[0])))
    gidx = grng.integers(N, size=(boot, N))
    gx = simulate_fixed_solo(full_m, full_s, grng, 50 * matches, target, goals_333=True)
    gb = simulate_fixed_solo(moon[gidx].reshape(boot, -1), sun[gidx].reshape(boot, -1), grng, matches, target,
                             goals_333=True)
    glo, ghi = percentile_ci(gb["p_solo"])
    goals = {"p_solo_wins": float(gx["p_solo"][0]), "ci_low": glo, "ci_high": ghi,
             "mean_deals": float(gx["deals"][0]), "matches": 50 * matches, "undecided": int(gx["undecided"][0])}
    return {"target": target, "bootstrap_resamples": boot, "matches_per_resample": matches,
            "fixed_solo": fixed, "rotating": rot, "fixed_solo_goals_333": goals}


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

