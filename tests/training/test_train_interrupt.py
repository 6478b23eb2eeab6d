"""`twilight train` stopped by Ctrl-C or SIGTERM: checkpoint written, one line, resumable;
the end-of-run table, the progress bar's total, and no evaluation point logged twice."""

import importlib.util
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from twilight_env.agents.nn.checkpoint import CHECKPOINT_NAME, load_checkpoint
from twilight_env.training import train as train_mod
from twilight_env.training.config import TrainConfig
from twilight_env.training.train import TrainingInterrupted, advance_bar, progress_bar, resume_command, summary_table, train

needs_tensorboard = pytest.mark.skipif(importlib.util.find_spec("tensorboard") is None,
                                       reason="tensorboard (the 'train' extra) is not installed")

ROOT = Path(__file__).resolve().parents[2]
CKPT_EVERY = "0.005"
"""Minutes between periodic checkpoints in the interrupt tests (0.3 s): the tests wait for one."""
TINY = ["--actors", "0", "--eval-every", "0", "--eval-deals", "0", "--no-progress", "--games-per-actor", "16",
        "--batch-size", "256", "--checkpoint-every", CKPT_EVERY]


def _default_sigint():
    """In the child before it runs: SIGINT back to its default, as in a terminal (a child of
    ``nohup pytest &`` inherits it ignored)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _popen(*args):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.Popen([sys.executable, "-m", "twilight_env.cli", "train", *args], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=_default_sigint)


def _first_learner_step_saved(run: Path) -> bool:
    """True once the run's periodic checkpoint holds at least one learner step."""
    try:
        return load_checkpoint(run / CHECKPOINT_NAME)["updates"] > 0
    except (ValueError, OSError, KeyError):  # not written yet
        return False


def _interrupt_after_start(proc, sig, logdir):
    """Wait until the run has made a learner step (its periodic checkpoint, written every
    ``CKPT_EVERY`` minutes, holds one), then signal it: no fixed sleep, so a loaded machine
    only makes the wait longer."""
    line = proc.stdout.readline()
    assert line.startswith("run directory: "), (line, proc.stderr.read() if proc.poll() is not None else "")
    run = Path(line.split(": ", 1)[1].strip())
    deadline = time.time() + 300
    while not _first_learner_step_saved(run) and time.time() < deadline and proc.poll() is None:
        time.sleep(0.2)
    assert proc.poll() is None, proc.communicate()[1][-2000:]
    assert _first_learner_step_saved(run), "no learner step within 300 s"
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=120)
    return run, line + out, err


def _cfg(tmp_path, **kw):
    base = dict(exp="t", players=4, decisions=2000, actors=0, seed=3, logdir=str(tmp_path), eval_every=0,
                eval_deals=0, games_per_actor=16, batch_size=128, chunk=500, trunk=(32,), head=(16,), progress=False)
    base.update(kw)
    return TrainConfig(**base)


@needs_tensorboard
def test_ctrl_c_writes_checkpoint_prints_resume_command_and_resumes(tmp_path):
    proc = _popen("--players", "4", "--decisions", "5000000", "--logdir", str(tmp_path), "--exp", "int", *TINY)
    run, out, err = _interrupt_after_start(proc, signal.SIGINT, tmp_path)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "Traceback" not in out
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    ck = load_checkpoint(run / CHECKPOINT_NAME, 4)
    n = ck["decisions"]
    assert n > 0 and ck["updates"] > 0
    assert int(ck["optimizer"]["state"][0]["step"]) == ck["updates"]  # no half-done learner step
    assert f"interrupted (Ctrl-C) at {n:,} decisions" in lines[0]
    cmd = lines[0].split("continue with: ", 1)[1]
    assert shlex.split(cmd) == ["twilight", "train", "--resume", str(run), "--decisions", "5000000", "--actors", "0",
                                "--eval-every", "0", "--eval-deals", "0", "--checkpoint-every", CKPT_EVERY,
                                "--no-progress"]
    # the printed command continues the run (with a smaller budget here)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    r = subprocess.run([sys.executable, "-m", "twilight_env.cli", *shlex.split(cmd)[1:], "--decisions", str(n + 1500)],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert f"resumed {run} at {n:,} decisions" in r.stdout
    ck2 = load_checkpoint(run / CHECKPOINT_NAME, 4)
    assert ck2["decisions"] >= n + 1500 and ck2["resumes"] == 1 and ck2["updates"] > ck["updates"]
    assert torch.equal(ck2["buffer"]["targets"][:100], ck["buffer"]["targets"][:100])
    assert "{" not in r.stdout and "gradient updates" in r.stdout  # a table, not a JSON dump


@needs_tensorboard
def test_sigterm_with_actor_process(tmp_path):
    proc = _popen("--players", "3", "--minutes", "10", "--logdir", str(tmp_path), *TINY[:0], "--actors", "1",
                  "--eval-deals", "0", "--no-progress", "--games-per-actor", "16", "--batch-size", "256",
                  "--checkpoint-every", CKPT_EVERY)
    run, out, err = _interrupt_after_start(proc, signal.SIGTERM, tmp_path)
    assert proc.returncode == 143, err
    assert "Traceback" not in err
    assert "interrupted (SIGTERM)" in err and f"--resume {run} --minutes " in err and "--actors" not in err
    ck = load_checkpoint(run / CHECKPOINT_NAME, 3)
    assert f"at {ck['decisions']:,} decisions" in err


@needs_tensorboard
def test_interrupt_is_held_until_the_learner_step_is_logged(tmp_path, monkeypatch):
    """A signal arriving inside a learner step lets the step finish and be logged; then the
    checkpoint holds it (updates = optimizer steps) and TrainingInterrupted is raised."""
    real_log, calls = train_mod.log_step, []

    def log_then_signal(writer, step, *a):
        real_log(writer, step, *a)
        calls.append(step)
        if len(calls) == 2:
            signal.raise_signal(signal.SIGTERM)  # inside the held block
            calls.append("after signal")  # still runs: the signal is held

    monkeypatch.setattr(train_mod, "log_step", log_then_signal)
    with pytest.raises(TrainingInterrupted) as info:
        train(_cfg(tmp_path, decisions=100_000))
    e = info.value
    assert e.signum == signal.SIGTERM and calls[-1] == "after signal"
    ck = load_checkpoint(Path(e.run_dir) / CHECKPOINT_NAME)
    assert ck["decisions"] == e.decisions == calls[1]
    assert int(ck["optimizer"]["state"][0]["step"]) == ck["updates"] > 0
    assert e.command == resume_command(e.run_dir, _cfg(tmp_path, decisions=100_000))


@needs_tensorboard
def test_interrupt_inside_self_play_saves_no_finished_deal_and_resumes(tmp_path, monkeypatch):
    """A signal arriving inside self-play, just after a move finished some deals and before
    they were replaced, is held until the chunk is learnt from: the saved generator holds
    no finished deal, and the resumed run goes on (it used to stop with "the deal is over")."""
    from twilight_env.envs.vector import VectorEngine
    real_apply, sent = VectorEngine.apply, []

    def apply_then_signal(self, actions, *a, **kw):
        out = real_apply(self, actions, *a, **kw)
        if not sent and self.done.any():
            sent.append(int(self.done.sum()))
            signal.raise_signal(signal.SIGINT)
        return out

    monkeypatch.setattr(VectorEngine, "apply", apply_then_signal)
    with pytest.raises(TrainingInterrupted) as info:
        train(_cfg(tmp_path, decisions=100_000))
    monkeypatch.undo()
    assert sent and sent[0] > 0
    run = Path(info.value.run_dir)
    ck = load_checkpoint(run / CHECKPOINT_NAME)
    trick = ck["selfplay_state"]["engine"]["trick"]
    assert ck["decisions"] == info.value.decisions > 0 and int((trick == 7).sum()) == 0
    out = train(_cfg(tmp_path, decisions=ck["decisions"] + 1000, resume=str(run)))
    assert load_checkpoint(Path(out["run_dir"]) / CHECKPOINT_NAME)["decisions"] >= ck["decisions"] + 1000


@needs_tensorboard
def test_interrupt_before_the_first_checkpoint_is_resumable(tmp_path, monkeypatch):
    """Stopped while self-play produced its first chunk: the run still has a checkpoint."""
    def stop(self, model, want):
        raise KeyboardInterrupt

    monkeypatch.setattr(train_mod.InProcessSelfPlay, "get", stop)
    with pytest.raises(TrainingInterrupted) as info:
        train(_cfg(tmp_path))
    assert info.value.decisions == 0
    monkeypatch.undo()
    stale = Path(info.value.run_dir) / f"{CHECKPOINT_NAME}.tmp999999"
    stale.write_bytes(b"half a checkpoint")  # as left by a process killed while saving
    out = train(_cfg(tmp_path, resume=info.value.run_dir, exp="dmc", seed=1, trunk=(256, 256), head=(128,)))
    ck = load_checkpoint(Path(out["run_dir"]) / CHECKPOINT_NAME)
    assert ck["decisions"] >= 2000 and ck["resumes"] == 1 and ck["config"]["trunk"] == [32]
    assert not stale.exists()


@needs_tensorboard
def test_resume_drops_events_logged_after_the_checkpoint(tmp_path):
    """Scalars a killed run logged after its last checkpoint are hidden once it resumes
    (TensorBoard ``purge_step``), so no step appears twice on a curve."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    from torch.utils.tensorboard import SummaryWriter
    run = Path(train(_cfg(tmp_path, decisions=1500))["run_dir"])
    saved = load_checkpoint(run / CHECKPOINT_NAME)["decisions"]
    orphan = SummaryWriter(str(run))  # what the killed process wrote after the checkpoint
    orphan.add_scalar("charts/episodes", 12345, saved + 1)
    orphan.add_scalar("charts/episodes", 12345, saved + 10_000)
    orphan.close()
    time.sleep(1.1)  # event files are named by the second they were opened
    train(_cfg(tmp_path, decisions=2500, resume=str(run)))
    acc = EventAccumulator(str(run), size_guidance={"scalars": 0})
    acc.Reload()
    events = acc.Scalars("charts/episodes")
    assert 12345 not in [e.value for e in events]
    steps = [e.step for e in events]
    assert steps == sorted(steps) and saved in steps and max(steps) >= 2500


@needs_tensorboard
def test_resume_does_not_repeat_the_last_evaluation(tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    cfg = _cfg(tmp_path, decisions=1500, eval_deals=2, eval_opponents=("random",))
    out = train(cfg)
    run = Path(out["run_dir"])
    assert list(out["eval"]) == ["random"]
    at = out["eval"]["random"]["at_decisions"]
    # the budget is already spent: nothing new to evaluate. (Pauses: TensorBoard reads event
    # files in name order, and names written by one process within one second can sort wrong.)
    time.sleep(1.1)
    again = train(_cfg(tmp_path, decisions=1500, eval_deals=2, resume=str(run)))
    assert again["eval"]["random"]["at_decisions"] == at
    # a longer budget: one new point
    time.sleep(1.1)
    more = train(_cfg(tmp_path, decisions=2500, eval_deals=2, resume=str(run)))
    acc = EventAccumulator(str(run), size_guidance={"scalars": 0})
    acc.Reload()
    steps = [ev.step for ev in acc.Scalars("eval/points_vs_random")]
    assert steps == [at, more["eval"]["random"]["at_decisions"]] and steps[1] > steps[0]


def test_resume_command_repeats_budget_and_machinery(tmp_path):
    run = tmp_path / "my runs" / "dmc__1__5"
    cfg = TrainConfig(minutes=10, decisions=10**6, actors=2, device="cpu", eval_every=50_000, checkpoint_every=2.5)
    cmd = resume_command(run, cfg, elapsed_s=90.0)
    assert shlex.split(cmd) == ["twilight", "train", "--resume", str(run), "--decisions", "1000000", "--minutes", "8.5",
                                "--actors", "2", "--eval-every", "50000", "--checkpoint-every", "2.5"]
    assert shlex.split(resume_command(run, TrainConfig(minutes=1), elapsed_s=600))[-2:] == ["--minutes", "0.1"]


def test_progress_bar_has_a_total_and_eta():
    bar = progress_bar(TrainConfig(minutes=2, progress=True), decisions=0, elapsed_s=3.0)
    try:
        assert bar.total == 120 and bar.unit == "s" and bar.n == 3
        advance_bar(bar, TrainConfig(minutes=2), 5000, elapsed_s=30.4)
        assert bar.n == 30
        assert "<" in str(bar)  # elapsed<remaining
    finally:
        bar.close()
    bar = progress_bar(TrainConfig(decisions=10_000, progress=True), decisions=4000, elapsed_s=0.0)
    try:
        assert bar.total == 10_000 and bar.n == 4000
        advance_bar(bar, TrainConfig(decisions=10_000), 500, elapsed_s=99.0)
        assert bar.n == 4500
    finally:
        bar.close()


def test_summary_table():
    ev = {"heuristic": {"points": -12.345, "ci95": 3.2, "win_rate": 0.41, "deals": 200, "points_side0": -20.0,
                        "points_side1": 4.5, "at_decisions": 1_200_000}}
    s = {"run_dir": "runs/x", "players": 3, "actors": 0, "decisions": 1_234_567, "updates": 42, "episodes": 9,
         "selfplay_decisions_per_s": 5012.3, "actor_decisions_per_s": None, "wall_seconds": 61.0, "eval": ev}
    text = summary_table(s)
    assert "{" not in text and "1,234,567" in text and "5,012.3 decisions/s" in text
    row = next(ln for ln in text.splitlines() if ln.startswith("heuristic"))
    assert row.split() == ["heuristic", "-12.35", "3.20", "0.410", "-20.00", "+4.50", "200", "1,200,000"]
    assert "as solo" in text
    assert "evaluation" not in summary_table({**s, "eval": {}})


def test_new_run_with_an_unknown_eval_opponent_is_an_error(tmp_path):
    with pytest.raises(ValueError, match="unknown agent 'heuristc'.*valid agents: .*heuristic"):
        train(_cfg(tmp_path, eval_deals=2, eval_opponents=("random", "heuristc")))
    assert not list(tmp_path.iterdir())  # no run directory left behind


def test_new_run_with_an_eval_opponent_of_the_other_player_count_is_an_error(tmp_path):
    """A 4-player run (R2) evaluating against a 3-player network refuses it before making its folder."""
    three = Path(__file__).resolve().parents[2] / "agents" / "weights" / "policy_3p.npz"
    with pytest.raises(ValueError, match="trained for 3 players, and this run plays 4-player deals"):
        train(_cfg(tmp_path, eval_deals=2, eval_opponents=("random", f"policy:path={three}")))
    assert not list(tmp_path.iterdir())


@needs_tensorboard
def test_resumed_run_skips_an_eval_opponent_it_cannot_build(tmp_path, capsys):
    """A resumed run keeps its saved opponents; one that cannot be built any more is skipped."""
    gone = tmp_path / "gone.pt"
    run = train(_cfg(tmp_path, decisions=1000, eval_opponents=("random", f"neural:path={gone}")))["run_dir"]
    out = train(_cfg(tmp_path, decisions=1500, eval_deals=2, resume=run))
    assert "skipping opponents that cannot be built here" in capsys.readouterr().out
    assert list(out["eval"]) == ["random"]


@needs_tensorboard
@pytest.mark.parametrize("players", [3, 4])
def test_a_run_stopped_and_resumed_equals_an_unstopped_one(tmp_path, monkeypatch, players):
    """``--actors 0`` on the batch engine: a run interrupted after its third learner step and
    resumed to the same budget ends with the same weights, optimizer state, counters and
    replay buffer as the same run never stopped (the checkpoint holds the deals in progress
    and the opponent pool, as well as the RNG states)."""
    import dataclasses

    def cfg(name, **kw):
        return _cfg(tmp_path / name, players=players, decisions=6000, chunk=700, pool_prob=0.5,
                    snapshot_every=900, games_per_actor=24, batch_size=64, **kw)

    straight = load_checkpoint(Path(train(cfg("a"))["run_dir"]) / CHECKPOINT_NAME)
    real_log, calls = train_mod.log_step, []

    def log_then_stop(writer, step, *a):
        real_log(writer, step, *a)
        calls.append(step)
        if len(calls) == 3:
            signal.raise_signal(signal.SIGINT)  # held until this learner step is logged

    monkeypatch.setattr(train_mod, "log_step", log_then_stop)
    with pytest.raises(TrainingInterrupted) as info:
        train(cfg("b"))
    monkeypatch.undo()
    stopped = load_checkpoint(Path(info.value.run_dir) / CHECKPOINT_NAME)
    assert 0 < stopped["decisions"] < straight["decisions"] and stopped["selfplay_state"] is not None
    resumed_out = train(dataclasses.replace(cfg("b"), resume=info.value.run_dir))
    resumed = load_checkpoint(Path(resumed_out["run_dir"]) / CHECKPOINT_NAME)
    for key in ("decisions", "updates", "episodes", "recorded"):
        assert resumed[key] == straight[key], key
    for k, v in straight["model"].items():
        assert torch.equal(v, resumed["model"][k]), k
    assert torch.equal(straight["buffer"]["targets"], resumed["buffer"]["targets"])
    assert len(straight["selfplay_state"]["pool"]) == len(resumed["selfplay_state"]["pool"]) > 0
