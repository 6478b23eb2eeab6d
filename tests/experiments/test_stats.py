"""Statistics helpers of twilight_env.experiments.common against scipy, and the match
simulations of the edge study on hand-made pools (their parity with the rules reference's
match rules, R6-R8, is ``tests/rules/test_parity.py``'s)."""

import math

import numpy as np
import pytest
from scipy import stats

from twilight_env.experiments.common import mean_ci, wilson_ci
from twilight_env.experiments.edge.solo_edge import deal_figures, match_figures, simulate_fixed_solo, simulate_rotating


@pytest.mark.parametrize("conf", [0.95, 0.9])
def test_mean_ci_matches_scipy_t_interval(conf):
    x = np.random.default_rng(3).normal(5.0, 20.0, size=37)
    m, lo, hi = mean_ci(x, conf)
    slo, shi = stats.t.interval(conf, len(x) - 1, loc=x.mean(), scale=stats.sem(x))
    assert m == pytest.approx(x.mean())
    assert (lo, hi) == pytest.approx((slo, shi), rel=1e-12)


def test_mean_ci_edge_cases():
    m, lo, hi = mean_ci([4.0])
    assert m == 4.0 and math.isnan(lo) and math.isnan(hi)
    assert mean_ci([2, 2, 2]) == (2.0, 2.0, 2.0)
    with pytest.raises(ValueError, match="at least one"):
        mean_ci([])
    with pytest.raises(ValueError, match="confidence"):
        mean_ci([1, 2], 1.5)


@pytest.mark.parametrize("k,n", [(0, 10), (3, 10), (10, 10), (57, 200), (1, 3)])
def test_wilson_ci_matches_scipy(k, n):
    p, lo, hi = wilson_ci(k, n)
    ci = stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    assert p == k / n
    assert (lo, hi) == pytest.approx((ci.low, ci.high), abs=1e-12)


def test_wilson_ci_bad_input():
    assert all(math.isnan(v) for v in wilson_ci(0, 0))
    for k, n in ((5, 3), (-1, 3), (1.5, 3)):
        with pytest.raises(ValueError, match="successes"):
            wilson_ci(k, n)


def test_simulations_on_one_sided_pools():
    moon = np.full((2, 5), 100)
    sun = np.zeros((2, 5), dtype=int)
    f = simulate_fixed_solo(moon, sun, np.random.default_rng(0), matches=50)
    assert f["p_solo"].tolist() == [1.0, 1.0] and f["deals"].tolist() == [10.0, 10.0]
    # equal totals forever: ties play on (R6.1) until the safety stop
    f = simulate_fixed_solo(moon, moon, np.random.default_rng(0), matches=4, max_deals=30)
    assert np.isnan(f["p_solo"]).all() and f["undecided"].tolist() == [4, 4]
    r = simulate_rotating(moon, sun, np.random.default_rng(0), matches=20)
    # each player solo every third deal; p0 is solo first, so p0 reaches 1000 first
    assert r["p_win"][0].tolist() == [1.0, 0.0, 0.0]


def test_match_figures_bootstrap_interval_covers_estimate_and_is_reproducible():
    rng = np.random.default_rng(2)
    moon = rng.integers(0, 200, size=(60, 3))
    sun = rng.integers(0, 150, size=(60, 3))
    a = match_figures(moon, sun, seed=4, config=0, boot=50, matches=200)
    b = match_figures(moon, sun, seed=4, config=0, boot=50, matches=200)
    assert a == b
    fx = a["fixed_solo"]
    assert 0 <= fx["ci_low"] <= fx["p_solo_wins"] <= fx["ci_high"] <= 1
    assert fx["p_solo_wins"] > 0.5  # the Moon side scores more here
    assert sum(a["rotating"]["p_win"]) == pytest.approx(1.0)


def test_deal_figures_pair_by_deal():
    moon = np.array([[10, 20, 30], [0, 0, 60], [5, 5, 5]])
    sun = np.array([[0, 20, 0], [30, 0, 0], [5, 5, 5]])
    f = deal_figures(moon, sun)
    diff = np.array([40 / 3, 30 / 3, 0])
    m, lo, hi = mean_ci(diff)
    assert f["diff"]["mean"] == pytest.approx(m) and f["diff"]["ci_low"] == pytest.approx(lo)
    assert f["moon"]["mean"] == pytest.approx(moon.mean())
    pm = f["p_moon_outscores"]
    assert (pm["moon_wins"], pm["ties"], pm["sun_wins"], pm["plays"]) == (3, 5, 1, 9)
    assert f["diff_by_play"] == pytest.approx([(10 - 30 + 0) / 3, 0, (30 + 60) / 3])


def test_fmt_ci_prints_no_negative_zero():
    from twilight_env.experiments.common import fmt_ci

    assert fmt_ci(191.2, -2.3e-13, 1200.0, digits=0) == "191 [0, 1200]"
    assert fmt_ci(-0.04, -1.0, 0.5, signed=True) == "+0.0 [-1.0, +0.5]"


def test_fmt_number_prints_no_negative_zero():
    from twilight_env.util.report import fmt_number

    assert fmt_number(-0.0, 2) == "0.00" and fmt_number(-0.004, 2, signed=True) == "+0.00"
    assert fmt_number(-0.006, 2) == "-0.01" and fmt_number(4.14, 1, signed=True) == "+4.1"


def test_timed_arena_takes_workers_1_and_refuses_more(tmp_path, monkeypatch):
    import pytest

    from benchmarks import timed_arena

    monkeypatch.chdir(tmp_path)  # the run's out/ folder goes under the test's folder, not the checkout

    with pytest.raises(SystemExit, match="leave --workers out or give --workers 1"):
        timed_arena.main(["arena", "random", "heuristic", "--workers", "2"])
    assert timed_arena.main(["arena", "random", "heuristic", "--players", "3", "--deals", "2", "--quiet",
                             "--workers", "1"]) == 0
