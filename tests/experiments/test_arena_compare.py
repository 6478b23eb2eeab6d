"""``python -m twilight_env.experiments.arena_compare``: two arena runs' margins paired by deal."""

import numpy as np
import pytest

from twilight_env.cli import main as twilight
from twilight_env.experiments.arena_compare import compare, main
from twilight_env.util.report import mean_ci


def _arena(tmp_path, name, specs, seed=4, deals=4, players=3):
    out = tmp_path / name
    assert twilight(["arena", *specs, "--players", str(players), "--deals", str(deals), "--seed", str(seed),
                     "--workers", "1", "--quiet", "--out", str(out)]) == 0
    return str(out)


def test_the_paired_margin_is_the_mean_of_per_deal_differences(tmp_path, capsys):
    import json

    a = _arena(tmp_path, "a", ["heuristic", "random"])
    b = _arena(tmp_path, "b", ["random", "random"], deals=3)
    r = compare(a, b)
    pa, pb = (json.load(open(f"{f}/arena.json"))["results"]["pairings"][0] for f in (a, b))
    want = np.subtract(pa["pair_scores"][:3], pb["pair_scores"][:3])
    assert r["deals"] == 3 and r["margin"] == pytest.approx(mean_ci(want))
    solo = [x[0] for x in pa["points"][:3]]
    assert r["solo"][0] == pytest.approx(np.mean(np.subtract(solo, [x[0] for x in pb["points"][:3]])))
    assert np.mean([r["solo"][0], r["sun"][0]]) == pytest.approx(r["margin"][0])  # the two plays make the margin
    assert main([a, b]) == 0
    assert "paired by deal over 3 deals" in capsys.readouterr().out


def test_runs_on_other_deals_or_without_one_pairing_are_refused(tmp_path, capsys):
    a = _arena(tmp_path, "a", ["heuristic", "random"])
    other_seed = _arena(tmp_path, "s", ["heuristic", "random"], seed=5)
    with pytest.raises(ValueError, match="played other deals"):
        compare(a, other_seed)
    three = _arena(tmp_path, "t", ["heuristic", "random", "random:"], deals=2)
    with pytest.raises(ValueError, match="must hold one pairing"):
        compare(a, three)
    assert main([a, str(tmp_path / "none")]) == 2
    assert "no finished arena run" in capsys.readouterr().err


def test_the_same_two_agents_in_the_other_order_are_refused(tmp_path):
    a = _arena(tmp_path, "a", ["heuristic", "random"])
    swapped = _arena(tmp_path, "w", ["random", "heuristic"])
    with pytest.raises(ValueError, match="same two agents in the other order"):
        compare(a, swapped)
    other = _arena(tmp_path, "o", ["pimc:worlds=2,rollouts=1", "heuristic"], deals=2)  # other second agent: taken
    assert compare(a, other)["deals"] == 2
    # the same two agents through pimc's default solver_tricks=2: refused, naming both runs' specs
    same = _arena(tmp_path, "d", ["heuristic", "pimc:rollouts=1,solver_tricks=2,worlds=2"], deals=2)
    with pytest.raises(ValueError, match=r"same two agents in the other order .*'pimc:worlds=2,rollouts=1' and "
                                         r"'pimc:rollouts=1,solver_tricks=2,worlds=2' are the same agent"):
        compare(other, same)
