"""The DMC best responder on Ray (``--actors N --ray``): its actors play the deals against
the frozen agent on a local cluster (2 CPUs), the learner here; the run checkpoints, counts
the actors' playing time in its CPU budget, and resumes with or without Ray."""

import pytest

ray = pytest.importorskip("ray")
pytest.importorskip("tensorboard")

from twilight_env.agents.nn.checkpoint import CHECKPOINT_NAME  # noqa: E402
from twilight_env.training.best_response import (BRConfig, load_br_checkpoint, main,  # noqa: E402
                                                 resume_command, train_best_response)


def test_an_address_where_nothing_answers_is_refused_at_once_and_leaves_no_folder(tmp_path, capsys):
    """``--ray HOST:PORT`` with nothing listening: a clear error within seconds (Ray alone
    retries for minutes), exit 2, and no run directory."""
    import time

    from twilight_env.util.distributed import _probe

    with pytest.raises(ValueError, match="nothing answers there"):
        _probe("127.0.0.1:1")
    if ray.is_initialized():  # another module's cluster in this worker: connect() would reuse it
        ray.shutdown()
    t0 = time.monotonic()
    out = tmp_path / "br"
    assert main(["--agent", "heuristic", "--players", "3", "--decisions", "100", "--out", str(out),
                 "--actors", "1", "--ray", "127.0.0.1:1", "--no-progress"]) == 2
    assert "nothing answers there" in capsys.readouterr().err
    assert time.monotonic() - t0 < 60 and not out.exists()


def _cfg(**kw):
    base = dict(agent="heuristic", players=3, decisions=1200, seed=5, games=16, chunk=400, batch_size=128,
                buffer_size=2000, eval_every=0, eval_deals=0, final_deals=0, progress=False, actors=1, ray="auto")
    base.update(kw)
    return BRConfig(**base)


def test_ray_actors_play_against_the_frozen_agent_and_the_run_resumes_without_ray(ray_cluster, tmp_path):
    run = tmp_path / "br"
    out = train_best_response(_cfg(actors=2), out=run)
    ck = load_br_checkpoint(run)
    assert ck["decisions"] >= 1200 and ck["updates"] > 0
    st = ck["br_state"]
    # the actors' deals are counted: sides started there, and their playing time in the CPU used
    # each actor's 16 deals, then one new per finished deal; a replacement is reported with the
    # actor's next chunk, which the learner may stop before receiving (how many depends on timing)
    assert 2 * 16 <= sum(st["sides_played"]) <= 2 * 16 + ck["episodes"]
    assert out["actor_cpu_seconds_this_run"] > 0 and st["cpu_seconds"] >= out["actor_cpu_seconds_this_run"]
    first = ck["decisions"]
    train_best_response(_cfg(decisions=first + 400, actors=0, ray=None), resume=run)
    ck2 = load_br_checkpoint(run / CHECKPOINT_NAME)
    assert ck2["decisions"] >= first + 400 and ck2["best_response"]["ray"] is None
    train_best_response(_cfg(decisions=ck2["decisions"] + 400), resume=run)
    ck3 = load_br_checkpoint(run)
    assert ck3["decisions"] >= ck2["decisions"] + 400 and ck3["best_response"]["actors"] == 1
    assert ck3["br_state"]["cpu_seconds"] > ck2["br_state"]["cpu_seconds"]


def test_ray_and_actors_go_together_and_the_resume_command_keeps_them(tmp_path, capsys):
    with pytest.raises(ValueError, match="--ray and --actors go together"):
        _cfg(actors=0).validate()
    with pytest.raises(ValueError, match="--ray and --actors go together"):
        _cfg(ray=None).validate()
    with pytest.raises(ValueError, match="actors must be an integer"):
        _cfg(actors=-1).validate()
    with pytest.raises(ValueError, match="--ray takes"):
        _cfg(ray="nowhere:port").validate()
    cmd = resume_command(tmp_path / "run", _cfg(actors=3).validate(), 0.0)
    assert "--actors 3 --ray auto" in cmd
    assert "--ray" not in resume_command(tmp_path / "run", _cfg(actors=0, ray=None).validate(), 0.0)
    assert main(["--agent", "heuristic", "--players", "3", "--out", str(tmp_path / "x"), "--decisions", "10",
                 "--ray"]) == 2
    assert "go together" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()
