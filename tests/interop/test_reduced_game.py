"""``python_twilight(tricks=T)``: the reduced decks as OpenSpiel games (OpenSpiel's own
checks, the deal, resampling), and the full game's parameters unchanged."""

import numpy as np
import pyspiel
import pytest

import twilight_env.interop.openspiel as tos
from twilight_env.rules.cards import deck_mask, ids_of
from twilight_env.rules.engine import ReducedState


@pytest.mark.parametrize("players", [3, 4])
@pytest.mark.parametrize("tricks", [1, 2, 3])
def test_random_sim_test_on_reduced_decks(players, tricks):
    game = pyspiel.load_game(f"python_twilight(players={players},tricks={tricks})")
    pyspiel.random_sim_test(game, num_sims=5, serialize=False, verbose=False)
    assert game.max_game_length() == 8 * tricks
    assert game.max_chance_nodes_in_history() == 4 * tricks + (players == 4)


def test_a_reduced_deal_plays_to_its_end():
    game = pyspiel.load_game("python_twilight(players=4,tricks=2)")
    st = game.new_initial_state()
    st.apply_action(0)  # first leader
    assert sorted(a for a, _ in st.chance_outcomes()) == list(ids_of(deck_mask(2)))
    rng = np.random.default_rng(0)
    while st.is_chance_node():
        st.apply_action(int(rng.choice([a for a, _ in st.chance_outcomes()])))
    assert isinstance(st.engine_state, ReducedState)
    n = 0
    while not st.is_terminal():
        st.apply_action(int(rng.choice(st.legal_actions())))
        n += 1
    assert n >= 8 and st.engine_state.trick == 2
    r = st.returns()
    assert r[0] == r[2] == -r[1] == -r[3]


def test_deal_state_and_resampling_keep_the_information_set():
    game = pyspiel.load_game("python_twilight(players=3,tricks=2)")
    st = tos.deal_state(game, [["SP", "S7"], ["MP", "M7"], ["SC1", "SO"], ["MC1", "MO"]])
    st.apply_action(st.legal_actions()[-1])
    for p in range(3):
        for k in range(5):
            draws = iter(np.linspace(0.05, 0.95, 5))
            other = st.resample_from_infostate(p, lambda: next(draws))
            assert other.information_state_string(p) == st.information_state_string(p)
    with pytest.raises(ValueError, match="not in the deck of 2 tricks"):
        tos.deal_state(game, [["SP", "S6"], ["MP", "M7"], ["SC1", "SO"], ["MC1", "MO"]])


@pytest.mark.parametrize("bad", [0, 8])
def test_bad_tricks_parameter(bad):
    with pytest.raises(ValueError, match="tricks must be an int 1..7"):
        pyspiel.load_game(f"python_twilight(tricks={bad})")


def test_full_game_keeps_its_sizes():
    game = pyspiel.load_game("python_twilight(players=4)")
    assert game.max_game_length() == tos.MAX_PLAYER_ACTIONS == 56
    assert game.max_chance_nodes_in_history() == 29 and game.get_parameters()["tricks"] == 7
