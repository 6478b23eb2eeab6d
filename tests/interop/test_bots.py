"""``openspiel:*`` agents: specs, acting from the information set only, arena and edge runs."""

import json

import numpy as np
import pytest

from twilight_env.agents.base import make_agent, parse_spec, play_deal
from twilight_env.cli import main
from twilight_env.rules.engine import State
from twilight_env.rules.infoset import InfoSet
from positions import Spec, positions


def test_specs_parse_the_bot_name_then_its_options():
    assert parse_spec("openspiel:ismcts:iterations=7,uct_c=1.5") == (
        "openspiel", {"bot": "ismcts", "iterations": 7, "uct_c": 1.5})
    assert parse_spec("openspiel:random") == ("openspiel", {"bot": "random"})
    assert parse_spec("openspiel:iterations=3") == ("openspiel", {"iterations": 3})
    a = make_agent("openspiel:ismcts:iterations=7")
    assert (a.bot, a.iterations, a.uct_c) == ("ismcts", 7, 2.0)
    assert make_agent("openspiel").bot == "ismcts"


@pytest.mark.parametrize("spec, match", [
    ("openspiel:mcts", "valid: ismcts, random"),
    ("openspiel:random:iterations=3", "no options"),
    ("openspiel:ismcts:iterations=0", "iterations"),
    ("openspiel:ismcts:uct_c=-1", "uct_c"),
    ("openspiel:ismcts:world_samples=0", "world_samples"),
    ("openspiel:ismcts:depth=3", "no option 'depth'"),
])
def test_bad_specs_are_refused(spec, match):
    with pytest.raises(ValueError, match=match):
        make_agent(spec)


def _decision(players, seed, steps):
    return positions(Spec(players, seed, steps=steps))[0]


@pytest.mark.parametrize("spec", ["openspiel:ismcts:iterations=30", "openspiel:random"])
@pytest.mark.parametrize("players", [3, 4])
def test_no_leak_counterfactual_redeal_gives_the_same_action(spec, players):
    """Re-deal the hidden cards (same counts, same public history): same information set,
    so the same generator must give the same action. Over several positions at least one
    action differs between generators, so the action is not a constant."""
    agent = make_agent(spec)
    differs = False
    tested = 0
    for seed in range(6):
        st = _decision(players, seed, 9 + seed)
        seat = st.deciding_seat
        info = InfoSet(st, seat)
        twins = (info.world_state(info.sample_hands(np.random.default_rng(100 + k))) for k in range(30))
        twin_state = next((t for t in twins if t.hands != st.hands), None)  # other hidden cards
        if twin_state is None:  # the counts leave one deal only
            continue
        tested += 1
        twin = InfoSet(twin_state, seat)
        legal = info.legal_actions
        assert twin.legal_actions == legal
        a = agent.act(info, legal, np.random.default_rng(7))
        b = agent.act(twin, legal, np.random.default_rng(7))
        assert a == b and a in legal
        differs |= any(agent.act(info, legal, np.random.default_rng(k)) != a for k in range(8))
    assert tested >= 3 and differs


def test_the_searched_state_is_a_sampled_world_not_the_true_deal():
    agent = make_agent("openspiel:ismcts:iterations=5")
    st = _decision(3, 1, 10)
    info = InfoSet(st, st.deciding_seat)
    worlds = {tuple(agent.state_for(info, np.random.default_rng(k)).engine_state.hands) for k in range(10)}
    assert len(worlds) > 1  # drawn from the information set, different per generator
    for w in worlds:  # the seen hands are the viewer's own and the open new moon
        assert w[info.seat] == st.hands[info.seat] and w[2] == st.hands[2]
        assert [bin(h).count("1") for h in w] == [bin(h).count("1") for h in st.hands]


def test_openspiel_agents_play_whole_deals():
    for players in (3, 4):
        agents = [make_agent("openspiel:ismcts:iterations=3"), make_agent("openspiel:random")] * 2
        st = play_deal(State.random(np.random.default_rng(players), 0, players), agents, np.random.default_rng(0))
        assert st.done and sum(st.side_scores()) <= 720


def test_arena_openspiel_ismcts_against_pimc(tmp_path):
    """``twilight arena openspiel:ismcts pimc --players 3 --deals 3`` (tiny budgets)."""
    out = tmp_path / "arena"
    rc = main(["arena", "openspiel:ismcts:iterations=3", "pimc:worlds=2", "--players", "3", "--deals", "3",
               "--workers", "1", "--quiet", "--out", str(out)])
    assert rc == 0
    doc = json.loads((out / "arena.json").read_text())
    (p,) = doc["results"]["pairings"]
    assert (p["a"], p["b"], p["deals"]) == ("openspiel:ismcts:iterations=3", "pimc:worlds=2", 3)
    for (a0, b0), (a1, b1) in p["side_scores"]:
        assert 0 <= min(a0, b0, a1, b1) and max(a0, b0, a1, b1) <= 360


def test_edge_runs_with_an_openspiel_agent(tmp_path):
    out = tmp_path / "edge"
    rc = main(["edge", "openspiel:random", "--deals", "2", "--workers", "1", "--quiet", "--out", str(out)])
    assert rc == 0
    assert (out / "edge.json").exists()
