"""The validation-curve tool of expert-iteration runs (training/plot_fit.py): report and
PNG from the per-epoch scalars ``training.exit train`` logs, and its refusals."""

import pytest

pytest.importorskip("tensorboard")
torch = pytest.importorskip("torch")

from twilight_env.training import plot_fit  # noqa: E402


def _run(tmp_path, name, policy, value=None, accuracy=None, train_policy=None):
    """A run directory with the scalars of training.exit train, one per epoch from 1."""
    from torch.utils.tensorboard import SummaryWriter
    run = tmp_path / name
    w = SummaryWriter(str(run))
    for tag, series in (("val/policy_loss", policy), ("val/value_loss", value),
                        ("val/policy_accuracy", accuracy), ("train/policy_loss", train_policy)):
        for epoch, v in enumerate(series or [], start=1):
            w.add_scalar(tag, v, epoch)
    w.close()
    return str(run)


def test_report_gives_last_and_best_epoch(tmp_path):
    a = _run(tmp_path, "a", [0.9, 0.8, 0.85], value=[0.05, 0.04, 0.045], accuracy=[0.6, 0.7, 0.65])
    b = _run(tmp_path, "b", [1.0, 0.95])
    lines = plot_fit.report({"mlp": plot_fit.fit_curves(a), "cards": plot_fit.fit_curves(b)})
    assert lines[0].startswith("mlp: 3 epochs")
    assert "val/policy_loss last 0.8500, best 0.8000 at epoch 2" in lines[0]
    assert "val/value_loss last 0.0450, best 0.0400 at epoch 2" in lines[0]
    assert "val/policy_accuracy last 0.6500, best 0.7000 at epoch 2" in lines[0]  # accuracy: highest is best
    assert lines[1] == "cards: 2 epochs; val/policy_loss last 0.9500, best 0.9500 at epoch 2"


def test_a_directory_without_validation_scalars_is_refused(tmp_path):
    no_val = _run(tmp_path, "dmc", [], train_policy=[1.0])
    with pytest.raises(ValueError, match="no val/policy_loss scalars .*train/policy_loss.*--holdout > 0"):
        plot_fit.fit_curves(no_val)


def test_main_writes_png_and_checks_labels(tmp_path, capsys):
    a = _run(tmp_path, "a", [0.9, 0.8], value=[0.05, 0.04], accuracy=[0.6, 0.7], train_policy=[1.0, 0.85])
    out = tmp_path / "fit.png"
    assert plot_fit.main([a, "--out", str(out)]) == 0
    assert out.stat().st_size > 0
    assert "a: 2 epochs" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        plot_fit.main([a, "--labels", "x", "y", "--out", str(out)])
    assert "['x', 'y'] for 1 runs" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        plot_fit.main([a, a, "--labels", "x", "x", "--out", str(out)])
    assert "one distinct name per run" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        plot_fit.main([str(tmp_path / "empty"), "--out", str(tmp_path / "x.png")])
    assert "is not a directory" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    with pytest.raises(SystemExit):
        plot_fit.main([str(tmp_path / "empty"), "--out", str(tmp_path / "x.png")])
    assert "no val/policy_loss scalars (found: no scalars)" in capsys.readouterr().err
