"""``twilight train --ray``: the self-play actors run as Ray actors on a local cluster
(2 CPUs), the learner here; the run checkpoints, counts its decisions and resumes, with
or without Ray."""

import os
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")
pytest.importorskip("tensorboard")

from twilight_env.agents.nn.checkpoint import CHECKPOINT_NAME, load_checkpoint  # noqa: E402
from twilight_env.training.config import TrainConfig  # noqa: E402
from twilight_env.training.train import resume_command, train  # noqa: E402


def _cfg(tmp_path, **kw):
    base = dict(exp="ray", players=3, decisions=1600, actors=1, ray="auto", seed=3, logdir=str(tmp_path),
                eval_every=0, eval_deals=0, games_per_actor=32, batch_size=256, chunk=800, trunk=(32,), head=(16,),
                progress=False)
    base.update(kw)
    return TrainConfig(**base)


def test_ray_actors_train_checkpoint_and_resume_without_ray(ray_cluster, tmp_path):
    out = train(_cfg(tmp_path))
    run = Path(out["run_dir"])
    ck = load_checkpoint(run / CHECKPOINT_NAME)
    assert ck["decisions"] >= 1600
    assert ck["updates"] > 0
    first = ck["decisions"]
    # the same run continues with local actor processes, then on Ray again
    out2 = train(_cfg(tmp_path, resume=str(run), decisions=first + 800, ray=None, actors=0))
    ck2 = load_checkpoint(Path(out2["run_dir"]) / CHECKPOINT_NAME)
    assert ck2["decisions"] >= first + 800
    out3 = train(_cfg(tmp_path, resume=str(run), decisions=ck2["decisions"] + 800))
    ck3 = load_checkpoint(Path(out3["run_dir"]) / CHECKPOINT_NAME)
    assert ck3["decisions"] >= ck2["decisions"] + 800
    assert ck3["resumes"] == 2


def test_ray_needs_actors_and_the_resume_command_keeps_it(tmp_path):
    with pytest.raises(ValueError, match="--ray runs the self-play actors"):
        _cfg(tmp_path, actors=0).validate()
    cmd = resume_command(os.path.join(str(tmp_path), "run"), _cfg(tmp_path).validate())
    assert "--ray auto" in cmd and "--actors" not in cmd


def test_bad_ray_address_is_refused(tmp_path):
    with pytest.raises(ValueError, match="--ray takes"):
        train(_cfg(tmp_path, ray="nowhere"))


def test_a_killed_ray_actor_is_restarted_and_training_goes_on(ray_cluster, tmp_path, process_killer):
    with process_killer("ray::_RaySelfPlayActor.collect") as killer:
        out = train(_cfg(tmp_path, decisions=4000, exp="kill"))
    assert killer.killed, "no Ray self-play actor was caught collecting"
    assert load_checkpoint(Path(out["run_dir"]) / CHECKPOINT_NAME)["decisions"] >= 4000
