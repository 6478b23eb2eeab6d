"""`twilight train`: tiny runs finish, log to TensorBoard, checkpoint, resume, and are deterministic."""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from twilight_env.agents.nn.checkpoint import CHECKPOINT_NAME, load_checkpoint
from twilight_env.training.config import TrainConfig
from twilight_env.agents.nn.network import NetConfig, QNetwork
from twilight_env.training.selfplay import SelfPlay, duplicate_eval, eval_deals
from twilight_env.training.train import check_device, train

needs_tensorboard = pytest.mark.skipif(importlib.util.find_spec("tensorboard") is None,
                                       reason="tensorboard (the 'train' extra) is not installed")

ROOT = Path(__file__).resolve().parents[2]


def _cli(*args, timeout=600):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "twilight_env.cli", "train", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


def _run_dirs(logdir):
    return sorted(p for p in Path(logdir).iterdir() if p.is_dir())


def _scalars(run_dir):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    acc = EventAccumulator(str(run_dir), size_guidance={"scalars": 0, "tensors": 0})
    acc.Reload()
    return acc


@needs_tensorboard
def test_tiny_run_subprocess_then_resume(tmp_path):
    """A tiny run writes an event file and a checkpoint; --resume continues the step counts
    and the optimizer state."""
    r = _cli("--players", "4", "--decisions", "3000", "--actors", "0", "--logdir", str(tmp_path),
             "--exp", "tiny", "--seed", "3", "--eval-every", "0", "--eval-deals", "4",
             "--eval-opponents", "random", "--no-progress", "--games-per-actor", "16",
             "--batch-size", "256")
    assert r.returncode == 0, r.stderr
    assert "decisions/s" in r.stdout
    (run,) = _run_dirs(tmp_path)
    # a finished run says how to train on
    line = next(x for x in r.stdout.splitlines() if x.startswith("to train on: "))
    assert line.split(": ", 1)[1].startswith(f"twilight train --resume {run} --decisions ")
    assert run.name.startswith("tiny__3__")
    assert list(run.glob("events.out.tfevents.*"))
    ck1 = load_checkpoint(run / CHECKPOINT_NAME, 4)
    assert 3000 <= ck1["decisions"] < 3000 + 4096 and ck1["updates"] > 0
    assert ck1["optimizer"]["state"], "optimizer state saved"
    step1 = int(ck1["optimizer"]["state"][0]["step"])
    n_buf = ck1["buffer"]["targets"].shape[0]
    assert n_buf > 0 and ck1["buffer"]["rows"].shape == (n_buf, 25)
    assert step1 == ck1["updates"]
    acc = _scalars(run)
    tags = acc.Tags()["scalars"]
    for tag in ("losses/mse", "charts/decisions_per_s", "charts/episode_return", "eval/points_vs_random",
                "eval/win_rate_vs_random"):
        assert tag in tags, tag
    text = acc.Tags()["tensors"]
    assert "config/text_summary" in text
    cfg_text = acc.Tensors("config/text_summary")[0].tensor_proto.string_val[0].decode()
    assert '"players": 4' in cfg_text and "git:" in cfg_text

    r = _cli("--resume", str(run), "--decisions", "6000", "--actors", "0", "--eval-deals", "0", "--no-progress")
    assert r.returncode == 0, r.stderr
    assert _run_dirs(tmp_path) == [run]
    ck2 = load_checkpoint(run / CHECKPOINT_NAME, 4)
    assert ck2["decisions"] >= 6000 and ck2["updates"] > ck1["updates"]
    assert int(ck2["optimizer"]["state"][0]["step"]) == ck2["updates"]
    assert ck2["config"]["seed"] == 3 and ck2["resumes"] == 1
    # the replay buffer was restored, then grew (capacity 200,000 is not reached here)
    assert ck2["buffer"]["targets"].shape[0] > n_buf
    assert torch.equal(ck2["buffer"]["targets"][:n_buf], ck1["buffer"]["targets"])


@needs_tensorboard
def test_actor_process_run(tmp_path):
    """--actors 1: self-play in a separate process, 3 players."""
    r = _cli("--players", "3", "--decisions", "4000", "--actors", "1", "--logdir", str(tmp_path),
             "--eval-deals", "0", "--no-progress", "--games-per-actor", "16", "--batch-size", "256")
    assert r.returncode == 0, r.stderr
    (run,) = _run_dirs(tmp_path)
    ck = load_checkpoint(run / CHECKPOINT_NAME, 3)
    assert ck["decisions"] >= 4000 and ck["num_players"] == 3


def _tiny(tmp_path, seed, name):
    cfg = TrainConfig(exp=name, players=3, decisions=2500, actors=0, seed=seed, logdir=str(tmp_path),
                      eval_every=0, eval_deals=0, games_per_actor=32, batch_size=256, chunk=1000,
                      trunk=(32,), head=(16,), progress=False, pool_prob=0.5, snapshot_every=800)
    out = train(cfg)
    return load_checkpoint(Path(out["run_dir"]) / CHECKPOINT_NAME)["model"]


@needs_tensorboard
def test_deterministic_on_cpu_with_seed(tmp_path):
    """actors=0: two runs with the same seed give identical weights; another seed does not."""
    a = _tiny(tmp_path, 7, "a")
    b = _tiny(tmp_path, 7, "b")
    c = _tiny(tmp_path, 8, "c")
    assert a.keys() == b.keys()
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert not all(torch.equal(a[k], c[k]) for k in a)


def test_cuda_unavailable_is_a_clear_error():
    if torch.cuda.is_available():
        assert check_device("cuda").type == "cuda"
        return
    with pytest.raises(ValueError, match="--device cuda.*no usable CUDA"):
        check_device("cuda")


def test_config_errors():
    with pytest.raises(ValueError, match="budget"):
        TrainConfig().validate()
    with pytest.raises(ValueError, match="players must be 3 or 4"):
        TrainConfig(players=5, decisions=10).validate()
    with pytest.raises(ValueError, match="epsilon"):
        TrainConfig(decisions=10, epsilon=2.0).validate()
    d = TrainConfig(decisions=10).to_dict()
    assert TrainConfig.from_dict(d) == TrainConfig(decisions=10)


def test_cli_bad_device_exits_2(tmp_path, capsys):
    from twilight_env.cli import main
    rc = main(["train", "--decisions", "10", "--device", "tpu", "--logdir", str(tmp_path), "--no-progress"])
    assert rc == 2 and "device must be 'cpu' or 'cuda'" in capsys.readouterr().err


@pytest.mark.parametrize("num_players", [4, 3])
def test_selfplay_targets_are_final_returns(num_players):
    """Every recorded sample's target is (own side − other side) / 360 of a finished deal (R5):
    within [-1, 1], and deals' side-0 points are antisymmetric sums of the same scale."""
    model = QNetwork(NetConfig(num_roles=1 if num_players == 4 else 4, trunk=(16,), head=(8,)))
    sp = SelfPlay(num_players, model, np.random.default_rng(0), num_games=16, epsilon=0.1)
    batch, stats = sp.collect(3000)
    assert stats.episodes > 0 and len(batch) == stats.recorded > 0
    assert np.all(np.abs(batch.targets) <= 1.0)
    assert set(np.unique(batch.roles)) <= ({0} if num_players == 4 else {0, 1, 2, 3})
    assert all(abs(p) <= 360 for p in stats.side0_points)


def test_duplicate_eval_counts_pairs():
    model = QNetwork(NetConfig(trunk=(16,), head=(8,)))
    deals = eval_deals(4, 6, seed=0)
    assert deals == eval_deals(4, 6, seed=0)
    res = duplicate_eval(model, 4, "random", deals)
    assert res.deals == 6 and 0.0 <= res.win_rate <= 1.0 and abs(res.points) <= 360


@needs_tensorboard
def test_resume_with_new_learning_rate_and_generator(tmp_path):
    """--resume keeps the run's settings but a given lr / self-play engine replaces the saved one."""
    cfg = TrainConfig(exp="lr", players=4, decisions=2000, actors=0, seed=3, logdir=str(tmp_path),
                      eval_every=0, eval_deals=0, games_per_actor=16, batch_size=128, chunk=1000,
                      trunk=(32,), head=(16,), progress=False, selfplay_engine="scalar")
    run = Path(train(cfg)["run_dir"])
    ck1 = load_checkpoint(run / CHECKPOINT_NAME)
    assert ck1["config"]["lr"] == 1e-3 and ck1["config"]["selfplay_engine"] == "scalar"
    again = TrainConfig(decisions=4000, actors=0, resume=str(run), progress=False, eval_every=0, eval_deals=0,
                        lr=2e-4, selfplay_engine="vector", games_per_actor=16)
    train(again, override={"lr", "selfplay_engine"})
    ck2 = load_checkpoint(run / CHECKPOINT_NAME)
    assert ck2["config"]["lr"] == 2e-4 and ck2["config"]["selfplay_engine"] == "vector"
    assert ck2["config"]["batch_size"] == 128 and ck2["config"]["trunk"] == [32]
    assert all(g["lr"] == 2e-4 for g in ck2["optimizer"]["param_groups"])
    assert ck2["updates"] > ck1["updates"]


@pytest.mark.parametrize("players", [3, 4])
def test_init_starts_a_new_run_from_the_shipped_weights(tmp_path, players):
    """``--init default``: a new run whose network is the shipped one (shape and weights),
    with a fresh optimizer and counters; it trains and resumes like any run."""
    from twilight_env.agents.neural import default_weights
    from twilight_env.training.train import build_learner, resolve_config

    cfg = TrainConfig(exp="init", players=players, decisions=1500, actors=0, seed=2, logdir=str(tmp_path),
                      eval_every=0, eval_deals=0, games_per_actor=16, batch_size=128, chunk=500, progress=False,
                      init="default")
    eff, ckpt, _ = resolve_config(cfg, None)
    assert ckpt is None and eff.init == str(default_weights(players)) and eff.trunk == (256, 256)
    learner = build_learner(eff, None, torch.device("cpu"))
    shipped = load_checkpoint(default_weights(players), players)["model"]
    for k, v in shipped.items():
        assert torch.equal(learner.model.state_dict()[k], v.float()), k
    assert learner.counters["decisions"] == 0 and not learner.optimizer.state
    out = train(TrainConfig(**{**eff.to_dict(), "trunk": (32,), "head": (16,), "init": "default"}))
    ck = load_checkpoint(Path(out["run_dir"]) / CHECKPOINT_NAME, players)
    assert ck["decisions"] >= 1500 and ck["updates"] > 0 and ck["config"]["trunk"] == [256, 256]


def test_init_errors_name_the_flag(tmp_path):
    r = _cli("--players", "3", "--decisions", "100", "--init", str(tmp_path / "none.pt"), "--logdir", str(tmp_path))
    assert r.returncode == 2 and "--init" in r.stderr and "Traceback" not in r.stderr
    r = _cli("--players", "3", "--decisions", "100", "--init", "default", "--resume", str(tmp_path))
    assert r.returncode == 2 and "--init starts a new run" in r.stderr
    from twilight_env.agents.neural import default_weights
    r = _cli("--players", "3", "--decisions", "100", "--init", str(default_weights(4)), "--logdir", str(tmp_path))
    assert r.returncode == 2 and "--init" in r.stderr and "4 players" in r.stderr
    assert not list(tmp_path.glob("*__*"))  # no run directory was made


@needs_tensorboard
def test_compact_checkpoint_resumes_without_the_buffer(tmp_path):
    """``compact_checkpoint`` drops the replay buffer and generator state (the copy committed
    under results/), keeps weights, Adam state and counters, and ``--resume`` of the copy
    trains on from an empty buffer."""
    from twilight_env.training.checkpoint import BULKY_KEYS, compact_checkpoint, export_weights

    cfg = TrainConfig(exp="c", players=3, decisions=2000, actors=0, seed=4, logdir=str(tmp_path / "runs"),
                      eval_every=0, eval_deals=0, games_per_actor=16, batch_size=128, chunk=500,
                      trunk=(32,), head=(16,), progress=False)
    run = Path(train(cfg)["run_dir"])
    full = load_checkpoint(run / CHECKPOINT_NAME)
    assert all(full.get(k) is not None for k in BULKY_KEYS)
    copy = tmp_path / "copy"
    copy.mkdir()
    small = compact_checkpoint(run / CHECKPOINT_NAME, copy / CHECKPOINT_NAME)
    assert not set(BULKY_KEYS) & set(small)
    assert (copy / CHECKPOINT_NAME).stat().st_size < (run / CHECKPOINT_NAME).stat().st_size / 2
    again = load_checkpoint(copy / CHECKPOINT_NAME)
    assert all(torch.equal(again["model"][k], full["model"][k]) for k in full["model"])
    assert again["optimizer"]["state"] and again["decisions"] == full["decisions"]
    train(TrainConfig(decisions=4000, actors=0, resume=str(copy), progress=False, eval_every=0, eval_deals=0))
    ck = load_checkpoint(copy / CHECKPOINT_NAME)
    assert ck["decisions"] >= 4000 and ck["updates"] > full["updates"] and ck["resumes"] == 1
    export_weights(copy / CHECKPOINT_NAME, tmp_path / "w.pt")
    with pytest.raises(ValueError, match="no optimizer state"):
        compact_checkpoint(tmp_path / "w.pt", tmp_path / "x.pt")
