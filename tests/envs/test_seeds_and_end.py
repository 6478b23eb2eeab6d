"""Seeds are checked wherever one is accepted (``seed=True`` is not read as 1; a negative
or fractional seed names ``seed``), and ``raw_env`` stepped before ``reset`` or after the
end answers with a clear error instead of a ``KeyError``."""

import numpy as np
import pytest

from twilight_env.util.seeding import check_seed

pytest.importorskip("pettingzoo")

BAD_SEEDS = [True, False, -1, 1.5, 2.0, "3", [1]]


@pytest.mark.parametrize("seed", BAD_SEEDS)
def test_check_seed_refuses_naming_the_seed(seed):
    with pytest.raises(ValueError, match=r"^seed must be an integer >= 0 or None, got "):
        check_seed(seed)


def test_check_seed_accepts_ints_numpy_ints_and_none():
    assert check_seed(None) is None and check_seed(0) == 0 and type(check_seed(np.int64(7))) is int
    with pytest.raises(ValueError, match="--seed must be an integer >= 0, got None"):
        check_seed(None, "--seed", allow_none=False)


@pytest.mark.parametrize("seed", BAD_SEEDS)
def test_aec_reset_refuses_a_bad_seed_and_keeps_the_game(seed):
    from twilight_env.envs.aec import raw_env

    env = raw_env()
    env.reset(seed=1)
    before = env.observe(env.agent_selection)["observation"].copy()
    with pytest.raises(ValueError, match=r"\bseed must be an integer >= 0"):
        env.reset(seed=seed)
    assert np.array_equal(env.observe(env.agent_selection)["observation"], before)


def test_seed_true_is_not_seed_one():
    """Before the check, ``reset(seed=True)`` dealt the deal of ``seed=1``."""
    from twilight_env.envs.aec import raw_env

    with pytest.raises(ValueError, match="a bool is not a seed"):
        raw_env().reset(seed=True)


@pytest.mark.parametrize("seed", [True, -1, 0.5])
def test_the_gymnasium_wrapper_refuses_a_bad_seed(seed):
    from twilight_env.envs.wrappers import SingleAgentEnv

    env = SingleAgentEnv(num_players=4)
    with pytest.raises(ValueError, match=r"\bseed must be an integer >= 0"):
        env.reset(seed=seed)


@pytest.mark.parametrize("seed", [True, -1, 0.5])
def test_the_vector_env_refuses_a_bad_seed(seed):
    from twilight_env.envs.vector import TwilightVectorEnv

    with pytest.raises(ValueError, match=r"\bseed must be an integer >= 0"):
        TwilightVectorEnv(2, 4, seed=seed)
    env = TwilightVectorEnv(2, 4, seed=0)
    with pytest.raises(ValueError, match=r"\bseed must be an integer >= 0"):
        env.reset(seed=seed)


@pytest.mark.parametrize("seed", [True, -1, 1.5])
def test_the_studies_refuse_a_bad_seed_before_making_a_folder(tmp_path, seed):
    import twilight_env.experiments.edge.individual_edge as individual
    import twilight_env.experiments.ladder as ladder
    import twilight_env.experiments.edge.solo_edge as edge
    from twilight_env.experiments.arena import play_arena

    out = tmp_path / "out"
    quiet = dict(workers=1, progress=False, verbose=False, out=str(out))
    for run in (lambda: edge.run_study(["random"], deals=2, seed=seed, **quiet),
                lambda: individual.run_study(["random"], deals=2, seed=seed, **quiet),
                lambda: ladder.run_ladder(["random", "random"], deals=2, seed=seed, **quiet)):
        with pytest.raises(ValueError, match=r"\bseed must be an integer >= 0"):
            run()
        assert not out.exists()
    with pytest.raises(ValueError, match=r"\bseed must be an integer >= 0"):
        play_arena(["random", "random"], [], 4, seed, 1, progress=False)


def test_ladder_seed_flag_names_itself(capsys, tmp_path):
    from twilight_env.cli import main

    with pytest.raises(SystemExit) as e:  # an argparse error: usage, then one line naming the flag
        main(["ladder", "random", "random", "--seed", "-1", "--out", str(tmp_path / "o")])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "--seed" in err and "Traceback" not in err


# ---------------------------------------------------------------------------------
# stepping a finished game
# ---------------------------------------------------------------------------------

def _play_to_the_end(env):
    while env.agents:
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))


@pytest.mark.parametrize("num_players", [4, 3])
@pytest.mark.parametrize("action", [None, 0])
def test_raw_env_stepped_after_the_end_says_so(num_players, action):
    from twilight_env.envs.aec import raw_env

    env = raw_env(num_players=num_players)
    env.reset(seed=3)
    _play_to_the_end(env)
    with pytest.raises(RuntimeError, match=r"after the game ended.*call reset\(\)"):
        env.step(action)
    env.reset(seed=3)  # and the env plays on after a reset
    assert env.agents


@pytest.mark.parametrize("num_players", [4, 3])
def test_raw_env_last_after_the_end_and_before_reset_says_so(num_players):
    from twilight_env.envs.aec import raw_env

    with pytest.raises(RuntimeError, match=r"reset\(\) needs to be called before last\(\)"):
        raw_env(num_players=num_players).last()
    env = raw_env(num_players=num_players)
    env.reset(seed=5)
    _play_to_the_end(env)
    with pytest.raises(RuntimeError, match=r"last\(\) called after the game ended.*call reset\(\)"):
        env.last()


def test_raw_env_stepped_before_reset_says_so():
    from twilight_env.envs.aec import raw_env

    with pytest.raises(RuntimeError, match=r"reset\(\) needs to be called before step\(\)"):
        raw_env().step(0)


def test_the_wrapped_env_keeps_pettingzoos_warning_after_the_end():
    """``env()`` (PettingZoo's order-enforcing wrapper) logs a warning and ignores the step,
    as PettingZoo's own games do."""
    from twilight_env.envs.aec import env as make_env

    env = make_env()
    env.reset(seed=3)
    _play_to_the_end(env)
    env.step(None)  # PettingZoo's EnvLogger warning, no error
    assert env.agents == []
