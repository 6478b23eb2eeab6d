"""``python_twilight``: OpenSpiel's own checks, and agreement with the env's rules, scoring
and observations."""

import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms import evaluate_bots

import twilight_env
import twilight_env.interop.openspiel as tos
from twilight_env.interop.openspiel_bots import make_ismcts_bot
from twilight_env.rules.cards import CARDS
from twilight_env.obs.encoding import OBS_SIZE, encode_observation
from twilight_env.rules.engine import random_hands, hands_to_codes


def _load(**params):
    args = ",".join(f"{k}={v}" for k, v in params.items())
    return pyspiel.load_game(f"python_twilight({args})")


def _deal(seed):
    return hands_to_codes(random_hands(np.random.default_rng(seed)))


@pytest.mark.parametrize("params", [{"players": 3}, {"players": 4},
                                    {"players": 3, "three_player_scoring": "individual"}])
def test_openspiel_random_sim_test(params):
    """OpenSpiel's own consistency checks (chance, legal actions, clone, serialization)."""
    game = _load(**params)
    pyspiel.random_sim_test(game, num_sims=3, serialize=True, verbose=False)


def test_game_facts():
    g3, g4 = _load(players=3), _load(players=4)
    assert (g3.num_players(), g4.num_players()) == (3, 4)
    assert g3.num_distinct_actions() == 31 and g3.max_chance_outcomes() == 28
    assert g3.observation_tensor_shape() == [OBS_SIZE]
    assert g3.information_state_tensor_shape() == [tos.INFO_STATE_SIZE]
    assert g4.get_type().utility == pyspiel.GameType.Utility.ZERO_SUM
    assert g3.get_type().utility == pyspiel.GameType.Utility.GENERAL_SUM
    assert g3.max_game_length() == 56
    s = g4.new_initial_state()
    assert s.is_chance_node() and [a for a, _ in s.chance_outcomes()] == [0, 1, 2, 3]
    s.apply_action(2)
    assert len(s.chance_outcomes()) == 28 and abs(sum(p for _, p in s.chance_outcomes()) - 1) < 1e-12


@pytest.mark.parametrize("params, match", [
    ({"players": 5}, "parameter 'players' must be 3 or 4"),
    ({"players": 4, "three_player_scoring": "individual"}, "3-player"),
    ({"players": 3, "three_player_scoring": "best"}, "three_player_scoring"),
    ({"players": 3, "goals_333": True}, "match rules"),
    ({"players": 3, "fixed_solo": True}, "match rules"),
])
def test_bad_parameters_are_refused(params, match):
    with pytest.raises(ValueError, match=match):
        tos.TwilightGame(params)


@pytest.mark.parametrize("players", [3, 4])
def test_returns_observations_and_actions_match_the_env(players):
    """The same deal and actions in the PettingZoo env and in OpenSpiel: same legal
    actions, same observation vectors for every player, same final rewards."""
    game = _load(players=players)
    leader = 0 if players == 3 else 2
    for seed in range(3):
        deal = _deal(seed)
        st = tos.deal_state(game, deal, leader=leader)
        env = twilight_env.env(num_players=players)
        opts = {"deal": deal, "solo": 0} if players == 3 else {"deal": deal, "dealer": leader - 1}
        env.reset(seed=seed, options=opts)
        rng = np.random.default_rng(seed)
        names = env.possible_agents
        while not st.is_terminal():
            agent = env.agent_selection
            p = st.current_player()
            assert agent == names[p]
            obs = env.observe(agent)
            assert st.legal_actions() == list(np.flatnonzero(obs["action_mask"]))
            for q in range(players):
                np.testing.assert_array_equal(np.asarray(st.observation_tensor(q), np.float32),
                                              env.observe(names[q])["observation"])
            a = int(rng.choice(st.legal_actions()))
            st.apply_action(a)
            env.step(a)
        rewards = {a: env.rewards[a] for a in names}
        assert st.returns() == pytest.approx([rewards[a] for a in names])
        if players == 4:
            assert sum(st.returns()) == pytest.approx(0.0)


def test_individual_scoring_returns_match_the_env():
    game = _load(players=3, three_player_scoring="individual")
    deal = _deal(11)
    st = tos.deal_state(game, deal)
    env = twilight_env.env(num_players=3, three_player_scoring="individual")
    env.reset(seed=0, options={"deal": deal, "solo": 0})
    rng = np.random.default_rng(3)
    while not st.is_terminal():
        a = int(rng.choice(st.legal_actions()))
        st.apply_action(a)
        env.step(a)
    assert st.returns() == pytest.approx([env.rewards[a] for a in env.possible_agents])


def test_deal_state_deals_the_given_hands_and_checks_input():
    game = _load(players=4)
    deal = _deal(5)
    st = tos.deal_state(game, deal, leader=1)
    eng = st.engine_state
    assert [sorted(CARDS[c] for c in range(28) if h >> c & 1) for h in eng.hands] == [sorted(h) for h in deal]
    assert eng.leader == 1 and st.current_player() == 1
    with pytest.raises(ValueError):
        tos.deal_state(game, deal[:3])
    with pytest.raises(ValueError, match="leader"):
        tos.deal_state(game, deal, leader=4)
    with pytest.raises(ValueError, match="solo"):
        tos.deal_state(_load(players=3), deal, leader=1)


def _midgame(players, seed, steps):
    game = _load(players=players)
    st = game.new_initial_state()
    rng = np.random.default_rng(seed)
    while st.is_chance_node():
        st.apply_action(int(rng.choice([a for a, _ in st.chance_outcomes()])))
    for _ in range(steps):
        st.apply_action(int(rng.choice(st.legal_actions())))
    return st


@pytest.mark.parametrize("players", [3, 4])
def test_resample_keeps_the_information_state_and_moves_hidden_cards(players):
    st = _midgame(players, 1, 13)
    p = st.current_player()
    key = st.information_state_string(p)
    tensor = st.information_state_tensor(p)
    rng = np.random.default_rng(0)
    hidden_seen = set()
    for _ in range(30):
        r = st.resample_from_infostate(p, rng.random)
        assert r.information_state_string(p) == key
        assert r.information_state_tensor(p) == tensor
        assert r.legal_actions() == st.legal_actions()
        n = 28 if players == 3 else 29  # chance nodes: the public actions follow them
        assert r.history()[n:] == st.history()[n:] and len(r.history()) == len(st.history())
        hidden_seen.add(tuple(r.engine_state.hands))
    assert len(hidden_seen) > 1  # the hidden cards do move
    # another player's view is not kept: its hand changes in some draws
    other = (p + 1) % players
    assert any(st.resample_from_infostate(p, rng.random).information_state_string(other)
               != st.information_state_string(other) for _ in range(10))


def test_resample_during_the_deal():
    game = _load(players=3)
    st = game.new_initial_state()
    rng = np.random.default_rng(2)
    for _ in range(20):
        st.apply_action(int(rng.choice([a for a, _ in st.chance_outcomes()])))
    for p in range(3):
        r = st.resample_from_infostate(p, rng.random)
        assert r.information_state_string(p) == st.information_state_string(p)
        assert r.is_chance_node() and len(r.chance_outcomes()) == 8


def test_information_state_tensor_gives_the_place_of_each_played_card():
    st = _midgame(4, 3, 20)
    t = np.asarray(st.information_state_tensor(0)).reshape(-1)
    places = t[OBS_SIZE:].reshape(28, 4)
    hist = st.engine_state.history
    assert places.sum() == len(hist)
    for k, (_, _, card) in enumerate(hist):
        assert places[card, k % 4] == 1
    np.testing.assert_array_equal(t[:OBS_SIZE], encode_observation(st.engine_state, 0))


def test_clone_is_independent_and_strings_describe_the_state():
    st = _midgame(3, 4, 6)
    c = st.clone()
    c.apply_action(c.legal_actions()[0])
    assert len(c.history()) == len(st.history()) + 1
    assert st.engine_state.history != c.engine_state.history or st.engine_state.phase != c.engine_state.phase
    assert "p0" in st.observation_string(0) and "trick" in st.observation_string(0)
    assert st.action_to_string(st.current_player(), 30) == "request +3"
    assert str(st).startswith("trick ")


def test_state_from_world_of_the_true_deal_has_the_same_information_state():
    """The adapter's construction: the true world gives back the same information state."""
    game = _load(players=3)
    st = tos.deal_state(game, _deal(8))
    rng = np.random.default_rng(0)
    for _ in range(9):
        st.apply_action(int(rng.choice(st.legal_actions())))
    p = st.current_player()
    info = st.infoset(p)
    built = tos.state_from_world(game, info, st.engine_state.hands)
    assert built.information_state_string(p) == st.information_state_string(p)
    assert built.history() == st.history()
    other = info.sample_hands(rng)
    assert tos.state_from_world(game, info, other).information_state_string(p) == st.information_state_string(p)
    with pytest.raises(ValueError, match="players"):
        tos.state_from_world(_load(players=4), info, other)


@pytest.mark.parametrize("players", [3, 4])
def test_openspiel_ismcts_bot_plays_a_deal_with_evaluate_bots(players):
    """OpenSpiel's IS-MCTS plays whole deals; the returns are the env's scoring of the end state."""
    game = _load(players=players)
    bots = [make_ismcts_bot(game, iterations=4, seed=i) for i in range(players)]
    st = game.new_initial_state()
    returns = evaluate_bots.evaluate_bots(st, bots, np.random.RandomState(0))
    eng = st.engine_state
    s0, s1 = eng.side_scores()
    assert st.is_terminal() and eng.done
    if players == 3:
        assert returns == pytest.approx([(s0 - s1) / 360, (s1 - s0) / 360, (s1 - s0) / 360])
    else:
        assert returns == pytest.approx([(s0 - s1) / 360, (s1 - s0) / 360] * 2)
        assert sum(returns) == pytest.approx(0.0)
