"""The expert-iteration strength curve (training/plot_exit_iterations.py): reading arena runs, the plateau test."""

import json

import pytest

from twilight_env.training import plot_exit_iterations as pe


def arena(tmp_path, name, a, b, mean, half, seed=88, deals=200):
    folder = tmp_path / name
    folder.mkdir()
    pair = {"a": a, "b": b, "a_spec": a, "b_spec": b, "deals": deals, "mean": mean,
            "ci_low": mean - half, "ci_high": mean + half, "win_rate": 0.5}
    (folder / "arena.json").write_text(json.dumps({"seed": seed, "deals": deals,
                                                   "results": {"pairings": [pair], "ratings": []}}))
    return folder


def test_the_network_is_read_from_its_own_side_whichever_side_it_was(tmp_path):
    as_a = pe.read_point(1, 10, arena(tmp_path, "a", "policy:x", "ismcts", -5.0, 2.0), "ismcts")
    as_b = pe.read_point(2, 10, arena(tmp_path, "b", "ismcts", "policy:y", -5.0, 2.0), "ismcts")
    assert (as_a.network, as_a.mean, as_a.low, as_a.high) == ("policy:x", -5.0, -7.0, -3.0)
    assert (as_b.network, as_b.mean, as_b.low, as_b.high) == ("policy:y", 5.0, 3.0, 7.0)


def test_plateau_needs_the_last_intervals_to_overlap_pairwise(tmp_path):
    pts = [pe.Point(i, 1, "n", m, m - 3, m + 3, 200, 88, "") for i, m in enumerate([-30, -1, 2, 4], 1)]
    assert pe.plateau(pts, 3)          # -1, 2, 4 with half-width 3: all overlap
    assert not pe.plateau(pts[:3], 3)  # -30 is far below 2
    assert not pe.plateau(pts[:2], 3)  # too few points
    with pytest.raises(ValueError, match="window"):
        pe.plateau(pts, 1)


def test_refusals_say_what_is_wrong(tmp_path):
    with pytest.raises(FileNotFoundError, match="arena.json"):
        pe.read_point(1, 1, tmp_path, "ismcts")
    with pytest.raises(ValueError, match="0 pairings against 'ismcts'.*policy:x vs pimc"):
        pe.read_point(1, 1, arena(tmp_path, "c", "policy:x", "pimc", 1.0, 1.0), "ismcts")
    p1 = pe.read_point(1, 1, arena(tmp_path, "d", "policy:x", "ismcts", 1.0, 1.0, seed=87), "ismcts")
    p2 = pe.read_point(2, 1, arena(tmp_path, "e", "policy:y", "ismcts", 1.0, 1.0, seed=88), "ismcts")
    with pytest.raises(ValueError, match="different deals"):
        pe.check_same_deals([p1, p2])
    with pytest.raises(SystemExit):
        pe.main(["--point", "x:1:f", "--out", str(tmp_path / "p.png")])


def test_the_command_writes_the_png_and_the_table(tmp_path, capsys):
    args = []
    for i, m in enumerate([-31.7, -0.5, 1.9], 1):
        args += ["--point", f"{i}:{1000 * i}:{arena(tmp_path, f'i{i}', f'policy:it{i}', 'ismcts', m, 9.0)}"]
    out = tmp_path / "curve.png"
    assert pe.main(args + ["--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert out.stat().st_size > 1000
    assert "| 3 | 3,000 | 6,000 | `policy:it3` | +1.9 [-7.1, +10.9] |" in text
    assert "plateau (last 3 intervals overlap pairwise): no" in text
