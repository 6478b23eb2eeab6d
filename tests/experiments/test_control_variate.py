"""The control-variate edge (experiments/edge/control_variate.py): unbiased with honest
intervals on data of known mean, as good as the plain mean when the control says nothing,
exact when the control is the outcome, and the controls are what they claim to be."""

import json

import numpy as np
import pytest

pytest.importorskip("scipy")

from twilight_env.experiments.edge.control_variate import (BASELINE_SEED, baseline, controls,  # noqa: E402
                                                           cv_estimate, main)
from twilight_env.experiments.edge.core import rotated_deal  # noqa: E402
from twilight_env.records.dealsets import generate_deals  # noqa: E402
from twilight_env.rules.engine import State  # noqa: E402
from twilight_env.rules.heldout import HELDOUT_SEEDS  # noqa: E402


def test_unbiased_and_covers_at_the_stated_rate():
    """Y = 3 + 2 X + noise with E[X] = 1 (so E[Y] = 5), E[X] estimated from 2000 other
    draws: over 1500 samples of 40 deals the estimates average 5 and the 95% intervals hold
    5 in 93-97% of them, each about half as wide as the plain interval."""
    rng = np.random.default_rng(0)
    hits, est, ratio = 0, [], []
    for _ in range(1500):
        x = rng.normal(1.0, 1.0, 40)
        y = 3 + 2 * x + rng.normal(0, 1.0, 40)
        xb = rng.normal(1.0, 1.0, 2000)
        r = cv_estimate(y, x, [xb.mean()], [[xb.var(ddof=1) / 2000]])
        hits += r["ci_low"] <= 5 <= r["ci_high"]
        est.append(r["mean"])
        ratio.append(r["half_width"] / r["plain"]["half_width"])
    assert abs(np.mean(est) - 5) < 0.02
    assert 0.93 <= hits / 1500 <= 0.97
    assert 0.35 < np.median(ratio) < 0.6


def test_a_control_unrelated_to_the_outcome_changes_little():
    rng = np.random.default_rng(1)
    y, x = rng.normal(0, 5, 400), rng.normal(0, 1, 400)
    r = cv_estimate(y, x, [0.0])
    assert abs(r["variance_removed"]) < 0.05
    assert abs(r["mean"] - r["plain"]["mean"]) < 0.5


def test_a_control_equal_to_the_outcome_leaves_only_the_uncertainty_of_its_mean():
    rng = np.random.default_rng(2)
    y = rng.normal(10, 5, 100)
    r = cv_estimate(y, y, [7.0], [[0.04]])
    assert r["mean"] == pytest.approx(7.0)
    assert r["half_width"] == pytest.approx(1.984 * 0.2, rel=0.01)
    plain = y.var(ddof=1) / 100
    assert r["variance_removed"] == pytest.approx(1 - 0.04 / plain)
    assert r["deals_equivalent"] == pytest.approx(100 * plain / 0.04)


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="at least 4"):
        cv_estimate([1, 2, 3], [1, 2, 3], [0])
    with pytest.raises(ValueError, match="shapes"):
        cv_estimate([1, 2, 3, 4], [[1, 2]] * 4, [0])
    with pytest.raises(ValueError, match="unknown control"):
        controls(generate_deals(1, 0), ("oracle",))
    with pytest.raises(ValueError, match="heldout-2"):
        baseline(10, HELDOUT_SEEDS["heldout-2"])
    assert BASELINE_SEED not in HELDOUT_SEEDS.values()


def _played(deals, spec: str) -> np.ndarray:
    """Moon − Sun of ``spec`` on every seat, one deal at a time, each deal's three plays
    (R7.4) averaged, as ``twilight edge SPEC`` plays them."""
    from twilight_env.agents.base import make_agent, play_deal

    agents = [make_agent(spec)] * 4
    out = []
    for d in deals:
        diffs = []
        for r in range(3):
            st = State.from_deal(rotated_deal(d, r), 0, 3)
            play_deal(st, agents, np.random.default_rng(0))
            m, s = st.side_scores()
            diffs.append(m - s)
        out.append(np.mean(diffs))
    return np.array(out)


def test_the_heuristic_control_is_the_heuristic_playing_the_deal():
    """The ``heuristic`` control of a deal is Moon − Sun of the heuristic agent on every seat,
    averaged over the deal's three plays; the value control is a forecast within ±360."""
    deals = generate_deals(4, 9)
    x = controls(deals, ("heuristic", "value"))
    assert x[:, 0] == pytest.approx(_played(deals, "heuristic"))
    assert np.all(np.abs(x[:, 1]) <= 360) and len(set(x[:, 1])) == 4


def test_the_policy_control_is_the_network_playing_the_deal():
    """The ``policy`` control of a deal is Moon − Sun of ``policy:default`` on every seat, as
    one deal at a time gives it (the lockstep batches change nothing), and it differs from
    deal to deal."""
    deals = generate_deals(5, 11)
    x = controls(deals, ("policy",))[:, 0]
    assert x == pytest.approx(_played(deals, "policy"))
    assert len(set(x)) > 1


def test_command_line_on_a_finished_edge_run(tmp_path, capsys):
    """On a heuristic run the heuristic control is the outcome itself: nearly all variance goes."""
    from twilight_env.cli import main as cli

    run = tmp_path / "e"
    assert cli(["edge", "heuristic", "--deals", "40", "--workers", "1", "--boot", "20", "--matches", "50",
                "--out", str(run), "--quiet"]) == 0
    assert main([str(run), "--baseline-deals", "200", "--json", str(tmp_path / "cv.json")]) == 0
    printed = capsys.readouterr().out
    assert "control variates" in printed and "heuristic" in printed
    rows = json.loads((tmp_path / "cv.json").read_text())
    assert rows[0]["deals"] == 40 and rows[0]["correlation"][0] == pytest.approx(1.0)
    assert rows[0]["variance_removed"] > 0.5
    assert main([str(tmp_path / "nothing")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_the_deal_share_is_one_for_a_deterministic_agent_and_less_for_random_play(tmp_path, capsys):
    """``--ceiling N`` replays the run with other agent seeds: the heuristic (deterministic)
    plays every deal as before (share 1, same mean); random play does not (share well below 1)."""
    from twilight_env.cli import main as cli

    for spec in ("heuristic", "random"):
        run = tmp_path / spec
        assert cli(["edge", spec, "--deals", "40", "--workers", "1", "--boot", "20", "--matches", "50",
                    "--out", str(run), "--quiet"]) == 0
        out = tmp_path / f"{spec}.json"
        assert main([str(run), "--ceiling", "40", "--json", str(out)]) == 0
        (row,) = json.loads(out.read_text())
        assert row["deals"] == 40
        if spec == "heuristic":
            assert row["share"] == pytest.approx(1.0) and row["mean_run"] == pytest.approx(row["mean_replay"])
        else:
            assert row["share"] < 0.9 and row["mean_run"] != row["mean_replay"]
    assert "deal share" in capsys.readouterr().out
    assert main([str(tmp_path / "heuristic"), "--ceiling", "41"]) == 2
    assert "10 to 40" in capsys.readouterr().err
    small = tmp_path / "small"
    assert cli(["edge", "heuristic", "--deals", "4", "--workers", "1", "--boot", "20", "--matches", "50",
                "--out", str(small), "--quiet"]) == 0
    assert main([str(small), "--ceiling", "3"]) == 2
    assert "has 4 deals; --ceiling needs a run of at least 10" in capsys.readouterr().err
