"""The DMC learning-curve tool (training/plot_curve.py): PNG and plateau report from a
run's TensorBoard scalars, with the expert-iteration curves' plateau test."""

import pytest

pytest.importorskip("tensorboard")
torch = pytest.importorskip("torch")

from twilight_env.training import plot_curve  # noqa: E402


def _run(tmp_path, name, points):
    """A run directory with eval/points_vs_X and eval/ci95_vs_X scalars, as train.py logs them."""
    from torch.utils.tensorboard import SummaryWriter
    run = tmp_path / name
    w = SummaryWriter(str(run))
    for opponent, series in points.items():
        for step, mean, half in series:
            w.add_scalar(f"eval/points_vs_{opponent}", mean, step)
            w.add_scalar(f"eval/ci95_vs_{opponent}", half, step)
    w.close()
    return str(run)


def test_evaluations_carry_the_interval(tmp_path):
    run = _run(tmp_path, "r", {"ismcts": [(100, -20.0, 5.0), (200, -10.0, 4.0)]})
    evs = plot_curve.evaluations(plot_curve.read_scalars(run), "ismcts")
    assert [(e.decisions, e.mean, e.low, e.high) for e in evs] == [(100, -20.0, -25.0, -15.0), (200, -10.0, -14.0, -6.0)]


def test_plateau_report_flat_and_rising(tmp_path):
    flat = [(1, -40.0, 3.0), (2, -10.0, 6.0), (3, -8.0, 6.0), (4, -3.0, 6.0)]  # last three overlap pairwise
    rising = [(1, -30.0, 5.0), (2, -20.0, 5.0), (3, -9.0, 5.0)]  # -30 and -9 do not overlap
    run = _run(tmp_path, "r", {"ismcts": flat, "heuristic": rising})
    lines = plot_curve.plateau_report([run])
    assert lines[0].startswith("r vs heuristic:") and lines[0].endswith("flat: no")
    assert lines[1].startswith("r vs ismcts:") and lines[1].endswith("flat: yes")
    assert "-3.0 [-9.0, +3.0] at 4" in lines[1] and "-40.0" not in lines[1]


def test_too_few_evaluations_are_not_flat(tmp_path):
    run = _run(tmp_path, "r", {"ismcts": [(1, 0.0, 5.0), (2, 0.0, 5.0)]})
    assert plot_curve.plateau_report([run])[0].endswith("flat: no (only 2)")
    assert plot_curve.plateau_report([run], window=2)[0].endswith("flat: yes")
    with pytest.raises(ValueError, match="window must be >= 2"):
        plot_curve.plateau_report([str(tmp_path / "no_events")], window=1)


def test_main_writes_png_and_prints_report(tmp_path, capsys):
    run = _run(tmp_path, "r", {"ismcts": [(1, -5.0, 5.0), (2, -4.0, 5.0), (3, -3.0, 5.0)]})
    out = tmp_path / "curve.png"
    assert plot_curve.main([run, "--out", str(out)]) == 0
    assert out.stat().st_size > 0
    assert "r vs ismcts: last 3 evaluations" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        plot_curve.main([run, "--out", str(out), "--window", "1"])
