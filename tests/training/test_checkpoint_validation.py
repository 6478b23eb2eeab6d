"""Training checkpoints (``twilight train``, the best responder, expert iteration) are
checked in full before a resumed run does anything: keys, types, ranges, finite weights,
the settings against the stored network, and a content digest, so an edit or a flipped bit
is refused with one line naming the file. A diverging run stops with a clear error and
never saves non-finite weights; a full disk gives one line naming the checkpoint."""

from __future__ import annotations

import json
import math
import os

import numpy as np
import pytest
import torch

import twilight_env.agents.nn.checkpoint as ckmod
from twilight_env.agents.nn.checkpoint import CHECKPOINT_NAME, checkpoint_digest, save_checkpoint
from twilight_env.agents.exit import load_exit_checkpoint
from twilight_env.cli import main
from twilight_env.training import train as train_mod
from twilight_env.training.checkpoint import check_dmc_checkpoint, load_resume_checkpoint
from twilight_env.training.config import TrainConfig
from twilight_env.training.exit import check_exit_checkpoint

pytest.importorskip("tensorboard")

SMALL = dict(players=3, actors=0, eval_every=0, eval_deals=0, progress=False, games_per_actor=16, batch_size=64,
             buffer_size=2000, chunk=256, trunk=(16,), head=(8,), seed=3)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    """A finished 3-player run of 800 decisions (about 17 updates) with a small network."""
    logdir = tmp_path_factory.mktemp("runs")
    summary = train_mod.train(TrainConfig(decisions=800, logdir=str(logdir), **SMALL))
    return summary["run_dir"]


@pytest.fixture(scope="module")
def saved(run_dir):
    return torch.load(os.path.join(run_dir, CHECKPOINT_NAME), weights_only=True)


def _nan_first(tensors):
    t = next(iter(tensors.values())).clone()
    t.view(-1)[0] = float("nan")
    return t


def _set(path, value):
    def edit(c):
        *parents, last = path
        for p in parents:
            c = c[p]
        c[last] = value(c) if callable(value) else value
    return edit


EVAL = {"points": 1.5, "ci95": 3.0, "win_rate": 0.5, "deals": 10, "points_side0": 1.0, "points_side1": 2.0,
        "at_decisions": 0}
"""A well-formed ``last_eval`` entry."""

EDITS = {
    "update_credit inf": (_set(["update_credit"], math.inf), "'update_credit' must be a finite number"),
    "update_credit 1e300": (_set(["update_credit"], 1e300), "'update_credit' must be a finite number in"),
    "NaN weights": (lambda c: c["model"].update({next(iter(c["model"])): _nan_first(c["model"])}),
                    r"'model'.*NaN or inf"),
    "num_players 5": (_set(["num_players"], 5), "'num_players' must be 3 or 4, got 5"),
    "num_players 4": (_set(["num_players"], 4), "'num_players' is 4 but its config trains 3"),
    "decisions -5": (_set(["decisions"], -5), r"'decisions' must be an integer in 0\.\."),
    "updates float": (_set(["updates"], 1.5), r"'updates' must be an integer"),
    "no config": (lambda c: c.pop("config"), "lacks 'config'"),
    "no targets": (lambda c: c["buffer"].pop("targets"), "'buffer' lacks 'targets'"),
    "points text": (_set(["last_eval"], {"heuristic": dict(EVAL, points="x")}),
                    "'last_eval' 'heuristic' 'points' must be a finite number"),
    "no points": (_set(["last_eval"], {"heuristic": {k: v for k, v in EVAL.items() if k != "points"}}),
                  "'last_eval' 'heuristic' lacks 'points'"),
    "eval after the end": (_set(["last_eval"], {"heuristic": dict(EVAL, at_decisions=10 ** 9)}),
                           "'at_decisions' must be an integer in 0..800"),
    "buffer_size 10^13": (_set(["config", "buffer_size"], 10 ** 13),
                          r"buffer_size must be an integer in 0\.\.10,000,000"),
    "actors 2^63": (_set(["config", "actors"], 2 ** 63), r"actors must be an integer in 0\.\.1,024"),
    "trunk 10^9": (_set(["net", "trunk"], [10 ** 9]), r"'net' 'trunk' must be at most 16 layer widths"),
    "net not the config's": (_set(["config", "trunk"], [32]), "is not the network its config builds"),
    "lr inf": (lambda c: c["optimizer"]["param_groups"][0].update(lr=math.inf), "'optimizer' lr must be a finite"),
    "moments NaN": (lambda c: c["optimizer"]["state"][0].update(exp_avg=_nan_first({0: c["optimizer"]["state"][0]
                                                                                    ["exp_avg"]})),
                    r"'optimizer' exp_avg of parameter 0.*NaN"),
    "moments shape": (lambda c: c["optimizer"]["state"][0].update(exp_avg=torch.zeros(3)),
                      "'optimizer' exp_avg of parameter 0 must be a float tensor of shape"),
    "roles 9": (lambda c: c["buffer"]["roles"].__setitem__(0, 9), r"'buffer' roles must lie in 0\.\.3"),
    "targets 1e9": (lambda c: c["buffer"]["targets"].__setitem__(0, 1e9), r"'buffer' targets must lie in"),
    "buffer over capacity": (_set(["config", "buffer_size"], 64), "more than the run's buffer_size 64"),
    "rng garbage": (_set(["rng", "learner"], {"bit_generator": "PCG64", "state": 5}), "bit-generator state"),
    "torch rng": (_set(["rng", "torch"], torch.zeros(3, dtype=torch.uint8)), "'rng' 'torch' must be a uint8"),
    "unknown key": (_set(["extra"], 1), r"unknown key\(s\) 'extra'"),
    "pool snapshot": (lambda c: c["selfplay_state"]["pool"].append({"x": torch.zeros(1)}),
                      "pool snapshot 0 does not fit"),
}


def _edited(tmp_path, saved, edit, name="run"):
    c = _deep_copy(saved)
    edit(c)
    folder = tmp_path / name
    folder.mkdir()
    save_checkpoint(c, folder / CHECKPOINT_NAME)  # a digest that matches: the entry checks are under test
    return folder


def _deep_copy(obj):
    if isinstance(obj, torch.Tensor):
        return obj.clone()
    if isinstance(obj, dict):
        return {k: _deep_copy(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_deep_copy(v) for v in obj]
    return obj


@pytest.mark.parametrize("case", sorted(EDITS))
def test_each_edit_is_refused_naming_the_file(tmp_path, saved, case):
    edit, message = EDITS[case]
    folder = _edited(tmp_path, saved, edit)
    with pytest.raises(ValueError, match=message) as e:
        load_resume_checkpoint(folder)
    assert str(folder / CHECKPOINT_NAME) in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("case", ["update_credit inf", "NaN weights", "no config", "decisions -5"])
def test_resume_refuses_before_anything_runs(tmp_path, monkeypatch, capsys, saved, case):
    folder = _edited(tmp_path, saved, EDITS[case][0])
    before = (folder / CHECKPOINT_NAME).read_bytes()
    monkeypatch.setattr(train_mod, "build_learner", lambda *a: pytest.fail("a learner was built"))
    assert main(["train", "--resume", str(folder), "--decisions", "1000", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and CHECKPOINT_NAME in err
    assert (folder / CHECKPOINT_NAME).read_bytes() == before


def test_the_saved_checkpoint_passes_and_carries_a_digest(run_dir, saved):
    assert checkpoint_digest(os.path.join(run_dir, CHECKPOINT_NAME)) is True
    cfg = check_dmc_checkpoint(saved, "x")
    assert cfg.players == 3 and cfg.buffer_size == 2000


def test_random_bit_flips_are_all_refused(tmp_path, run_dir):
    good = open(os.path.join(run_dir, CHECKPOINT_NAME), "rb").read()
    rng = np.random.default_rng(48)
    folder = tmp_path / "run"
    folder.mkdir()
    path = folder / CHECKPOINT_NAME
    accepted = []
    for _ in range(24):
        data = bytearray(good)
        i = int(rng.integers(len(data)))
        data[i] ^= 1 << int(rng.integers(8))
        path.write_bytes(bytes(data))
        try:
            load_resume_checkpoint(folder)
        except ValueError as e:
            assert str(path) in str(e)
        else:
            accepted.append(i)
    assert accepted == []


def test_an_in_place_edit_is_refused_and_a_file_without_digest_resumes_with_a_notice(tmp_path, capsys, saved):
    folder = _edited(tmp_path, saved, lambda c: None)
    path = folder / CHECKPOINT_NAME
    data = bytearray(path.read_bytes())
    data[-300] ^= 1  # inside the zip directory, before the digest
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="does not match its sha256 digest"):
        load_resume_checkpoint(folder)
    torch.save(saved, path)  # as written before checkpoints carried a digest
    capsys.readouterr()
    assert load_resume_checkpoint(folder)["decisions"] == saved["decisions"]
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "carries no content digest" in err and str(path) in err
    c = _deep_copy(saved)
    c["update_credit"] = math.inf
    torch.save(c, path)  # without a digest the entries are still checked
    with pytest.raises(ValueError, match="'update_credit'"):
        load_resume_checkpoint(folder)


def test_best_response_entries_are_checked(tmp_path, saved):
    from twilight_env.training.best_response import BRConfig, check_br_checkpoint
    c = _deep_copy(saved)
    c["best_response"] = BRConfig(players=3, decisions=1000).to_dict()
    c["br_state"] = {"sides_played": [1, 2, 0, 0], "evals": {}, "cpu_seconds": 1.5}
    check_br_checkpoint(c, "x")
    for change, message in ((lambda d: d["br_state"].update(cpu_seconds=math.inf), "'cpu_seconds'"),
                            (lambda d: d["best_response"].update(players=4), "'best_response' plays 4 players"),
                            (lambda d: d["br_state"].update(sides_played=[-1]), "'sides_played'"),
                            (lambda d: d.pop("br_state"), "lacks 'br_state'")):
        d = _deep_copy(c)
        change(d)
        with pytest.raises(ValueError, match=message):
            check_br_checkpoint(d, "x")


def _exit_checkpoint(path):
    from twilight_env.agents.exit import PolicyValueNet, PVConfig, new_checkpoint
    torch.manual_seed(0)
    model = PolicyValueNet(PVConfig(num_roles=4, trunk=(8,), head=(4,)))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-4)
    sum(p.sum() for p in model.parameters()).backward()
    opt.step()
    rng = np.random.default_rng(1)
    ckpt = new_checkpoint(model, 3, optimizer=opt.state_dict(), epoch=1,
                          config={"data": ["d1"], "holdout": 0.1, "seed": 1, "batch_size": 256, "lr": 1e-3,
                                  "weight_decay": 1e-4, "value_weight": 1.0, "init": None},
                          rng=json.dumps(rng.bit_generator.state), last={"epoch": 1, "train_policy_loss": 1.0},
                          git="x")
    save_checkpoint(ckpt, path)
    return ckpt


EXIT_EDITS = {
    "epoch -1": (lambda c: c.update(epoch=-1), r"'epoch' must be an integer in 0\.\."),
    "lr inf": (lambda c: c["config"].update(lr=math.inf), "'config' 'lr'"),
    "rng text": (lambda c: c.update(rng="garbage"), "'rng' is not JSON"),
    "no data": (lambda c: c["config"].pop("data"), "'config' lacks 'data'"),
    "NaN weights": (lambda c: c["model"].update({next(iter(c["model"])): _nan_first(c["model"])}), "NaN or inf"),
    "loss inf": (lambda c: c["last"].update(train_policy_loss=math.inf), "'train_policy_loss'"),
    "players 5": (lambda c: c.update(num_players=5), "'num_players' must be 3 or 4"),
}


@pytest.mark.parametrize("case", sorted(EXIT_EDITS))
def test_exit_checkpoint_edits_are_refused(tmp_path, case):
    path = tmp_path / CHECKPOINT_NAME
    ckpt = _exit_checkpoint(path)
    load_resume_checkpoint(tmp_path, check_exit_checkpoint, load_exit_checkpoint)  # the undamaged one passes
    c = _deep_copy(ckpt)
    EXIT_EDITS[case][0](c)
    save_checkpoint(c, path)
    with pytest.raises(ValueError, match=EXIT_EDITS[case][1]) as e:
        load_resume_checkpoint(tmp_path, check_exit_checkpoint, load_exit_checkpoint)
    assert str(path) in str(e.value)


def test_a_diverging_run_stops_without_saving_non_finite_weights(tmp_path, capsys):
    with pytest.raises(train_mod.TrainingDiverged, match="training diverged: the loss is") as e:
        train_mod.train(TrainConfig(decisions=3000, logdir=str(tmp_path), **dict(SMALL, lr=1e11)))
    assert "\n" not in str(e.value) and "--lr" in str(e.value)
    for ck in tmp_path.glob(f"*/{CHECKPOINT_NAME}"):
        check_dmc_checkpoint(torch.load(ck, weights_only=True), str(ck))  # any checkpoint written is finite


def test_non_finite_weights_are_never_saved(tmp_path, saved):
    learner = train_mod.build_learner(TrainConfig(decisions=10, **SMALL), None, torch.device("cpu"))
    with torch.no_grad():
        next(learner.model.parameters()).view(-1)[0] = float("inf")
    with pytest.raises(train_mod.TrainingDiverged, match="NaN or inf weights"):
        train_mod.save_train_checkpoint(learner, tmp_path, "x")
    assert not (tmp_path / CHECKPOINT_NAME).exists()


def test_exit_epoch_with_a_non_finite_loss_stops(tmp_path):
    from twilight_env.agents.exit import PolicyValueNet, PVConfig
    from twilight_env.training.exit import _check_finite_epoch
    model = PolicyValueNet(PVConfig(num_roles=4, trunk=(8,), head=(4,)))
    _check_finite_epoch(model, {"epoch": 1, "train_policy_loss": 1.0}, 1, 1e-3)
    with pytest.raises(train_mod.TrainingDiverged, match="epoch 2 .*train_value_loss nan"):
        _check_finite_epoch(model, {"epoch": 2, "train_value_loss": math.nan}, 2, 1e11)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_full_disk_gives_one_line_naming_the_checkpoint(tmp_path, monkeypatch):
    real_open = open
    monkeypatch.setattr(ckmod, "open", lambda p, mode="r", *a, **k: real_open("/dev/full", mode.replace("+", "")),
                        raising=False)
    with pytest.raises(OSError, match=f"cannot write checkpoint '{tmp_path / 'c.pt'}'") as e:
        save_checkpoint({"a": torch.zeros(100_000)}, tmp_path / "c.pt")
    assert "\n" not in str(e.value)
    assert not list(tmp_path.iterdir())


def test_actors_beyond_the_cap_give_one_line(capsys):
    assert main(["train", "--actors", str(2 ** 63), "--decisions", "10"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "actors must be an integer in 0..1,024" in err and "Traceback" not in err
