"""The ``nfsp`` agent (``twilight_env.agents.nfsp``) on the full deck: the distribution it gives
at a batch engine's rows (what the search responder reads) equals its ``action_probs`` at the
same information sets, it is 0 off the legal actions (R3.2, R3.5), the greedy option plays its
most probable action, seeded draws repeat, and bad weight files are refused."""

import numpy as np
import pytest

from twilight_env.agents.base import make_agent
from twilight_env.agents.nfsp import save_weights
from twilight_env.envs.vector import VectorEngine
from twilight_env.obs.encoding import OBS_SIZE
from twilight_env.rules.infoset import InfoSet


def _weights(tmp_path, players, tricks=7, seed=0):
    rng = np.random.default_rng(seed)
    sizes = (OBS_SIZE, 24, 31)
    layers = [(rng.normal(0, 0.3, (a, b)).astype(np.float32), rng.normal(0, 0.1, b).astype(np.float32))
              for a, b in zip(sizes[:-1], sizes[1:])]
    path = tmp_path / f"p{players}_{tricks}.npz"
    path.write_bytes(save_weights(layers, players, tricks))
    return path


@pytest.mark.parametrize("players", [3, 4])
def test_batch_rows_equal_action_probs(tmp_path, players):
    path = _weights(tmp_path, players)
    agent = make_agent(f"nfsp:path={path}")
    greedy = make_agent(f"nfsp:path={path},temperature=0")
    eng = VectorEngine(6, players)
    eng.reset(rng=np.random.default_rng(3))
    rng = np.random.default_rng(4)
    for _ in range(12):
        idx = np.arange(6)
        rows = agent.probs_rows(eng, idx)
        for i in idx:
            st = eng.to_state(int(i))
            info, legal = InfoSet(st, st.deciding_seat), st.legal_actions()
            p = agent.action_probs(info, legal)
            np.testing.assert_allclose(rows[i], p, atol=1e-6)  # float32 matmul of a batch vs one row
            assert p.sum() == pytest.approx(1.0) and p[[a for a in range(31) if a not in legal]].sum() == 0
            assert greedy.act(info, legal) == int(np.argmax(p))
            assert agent.act(info, legal, np.random.default_rng(9)) == agent.act(info, legal, np.random.default_rng(9))
        eng.apply(np.array([agent.act(InfoSet(eng.to_state(int(i)), eng.to_state(int(i)).deciding_seat),
                                      eng.to_state(int(i)).legal_actions(), rng) for i in range(6)]))


def test_bad_files_and_mismatched_games_are_refused(tmp_path):
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="not an NFSP average-policy file"):
        make_agent(f"nfsp:path={bad}")
    reduced = make_agent(f"nfsp:path={_weights(tmp_path, 3, tricks=1)}")
    eng = VectorEngine(2, 3)
    eng.reset(rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="1 tricks"):
        reduced.probs_rows(eng, np.arange(2))
    with pytest.raises(ValueError, match="temperature"):
        make_agent(f"nfsp:path={_weights(tmp_path, 4)},temperature=-1")


@pytest.mark.parametrize("temperature", [1.0, 0.0])
def test_the_search_responder_reads_an_nfsp_target_through_its_rows(tmp_path, temperature):
    """``respond:target=nfsp:...`` (issue item: exploitability of every stochastic agent): the
    target's probabilities in the responder are the agent's own, sampled or greedy, and the
    responder plays a legal action against it."""
    pytest.importorskip("torch")
    from twilight_env.training.search_response import TargetPolicy

    path = _weights(tmp_path, 3)
    spec = f"nfsp:path={path},temperature={temperature:g}"
    target, agent = TargetPolicy(spec), make_agent(spec)
    assert target.deterministic == (temperature == 0)
    eng = VectorEngine(5, 3)
    eng.reset(rng=np.random.default_rng(7))
    idx = np.arange(5)
    np.testing.assert_allclose(target.probs(eng, idx), agent.probs_rows(eng, idx))
    acts = target.actions(eng, idx, np.random.default_rng(1))
    for i, a in zip(idx, acts):
        assert a in eng.to_state(int(i)).legal_actions()
    if temperature == 0:
        np.testing.assert_array_equal(acts, agent.probs_rows(eng, idx).argmax(1))
    responder = make_agent(f"respond:target={spec.replace(',', ';')},worlds=4,candidates=2")
    st = eng.to_state(0)
    legal = st.legal_actions()
    assert responder.act(InfoSet(st, st.deciding_seat), legal, np.random.default_rng(2)) in legal
