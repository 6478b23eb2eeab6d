"""The AEC env's contract: masks, terminal steps, rewards, infos, options, errors.

See docs/API.md, sections Actions, Reset options, Infos, Rewards and End of episode.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import twilight_env
from env_helpers import play_aec
from twilight_env.rules.cards import codes_of
from twilight_env.rules.engine import HOLD, NEW_MOON


def _deal_codes(seed: int) -> list[list[str]]:
    perm = np.random.default_rng(seed).permutation(28)
    from twilight_env.rules.cards import CARDS
    return [[CARDS[i] for i in sorted(perm[7 * s:7 * s + 7])] for s in range(4)]


# ---------------------------------------------------------------------------------
# masks
# ---------------------------------------------------------------------------------
@pytest.mark.parametrize("num_players", [4, 3])
def test_mask_equals_engine_legal_actions_for_every_agent(num_players):
    env = twilight_env.env(num_players=num_players, episode="match", target=400)
    env.reset(seed=num_players)
    raw = env.unwrapped
    checked = 0

    def check(env, agent, last):
        nonlocal checked
        obs, _, term, _, info = last
        st = raw._state
        for a in env.agents:
            o = raw.observe(a)
            assert o["action_mask"].dtype == np.int8 and o["action_mask"].shape == (31,)
            if a == agent and not term:
                assert np.flatnonzero(o["action_mask"]).tolist() == list(st.legal_actions())
                seat = st.acting_seat
                assert info["seat"] == seat
                assert raw._agent_of_seat[seat] == a  # 3p: the solo acts for the new moon (R7.3)
                checked += 1
            else:
                assert not o["action_mask"].any()

    play_aec(env, np.random.default_rng(1), check)
    assert checked > 50


# ---------------------------------------------------------------------------------
# terminal steps and rewards
# ---------------------------------------------------------------------------------
@pytest.mark.parametrize("num_players, scoring", [(4, "team"), (3, "team"), (3, "individual")])
def test_terminal_conventions_and_deal_rewards(num_players, scoring):
    rng = np.random.default_rng(20)
    for episode in range(8):
        env = twilight_env.env(num_players=num_players, three_player_scoring=scoring)
        env.reset(seed=episode)
        raw = env.unwrapped
        finals = []

        def check(env, agent, last):
            obs, reward, term, trunc, info = last
            assert not trunc
            if term:
                finals.append(agent)
                assert agent in env.agents  # never removed before its final last()
            else:
                assert not finals, "an agent acted after the end"

        sums, seen = play_aec(env, rng, check)
        assert sorted(finals) == sorted(raw.possible_agents)  # exactly one final last() each
        assert env.agents == [] and env.unwrapped.agents == []
        st = raw._state
        assert st.done
        if scoring == "team":
            ret = st.returns()  # own side minus other side, deal points (R5)
            for a in raw.possible_agents:
                assert sums[a] == pytest.approx(ret[raw.seat_of(a)] / 360.0)
            if num_players == 4:
                assert sums["player_0"] == sums["player_2"] and sums["player_1"] == sums["player_3"]
                assert sums["player_0"] == -sums["player_1"]
            else:
                solo = raw.possible_agents[raw._match.solo]
                suns = [a for a in raw.possible_agents if a != solo]
                assert sums[suns[0]] == sums[suns[1]] == -sums[solo]
        else:
            pts = raw._match.last_deal_points
            for i, a in enumerate(raw.possible_agents):
                assert sums[a] == pytest.approx((pts[i] - (sum(pts) - pts[i]) / 3) / 360.0)
        # after the end: stepping warns, nothing breaks
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            env.step(None)


@pytest.mark.parametrize("num_players", [4, 3])
def test_match_episode_rewards_and_rotation(num_players):
    env = twilight_env.env(num_players=num_players, episode="match", target=250)
    env.reset(seed=3)
    raw = env.unwrapped

    def check(env, agent, last):
        _, reward, term, _, info = last
        if not term:
            assert reward == 0.0  # match episodes pay only at the end

    sums, _ = play_aec(env, np.random.default_rng(2), check)
    m = raw._match
    assert m.done and m.deals_played >= 1
    winners = set(m.winners)
    for i, a in enumerate(raw.possible_agents):
        line = i % 2 if num_players == 4 else i
        assert sums[a] == (1.0 if line in winners else -1.0)


@pytest.mark.parametrize("num_players", [4, 3])
def test_match_rotates_dealer_or_solo_between_deals(num_players):
    env = twilight_env.env(num_players=num_players, episode="match", target=100000)
    env.reset(seed=1)
    raw = env.unwrapped
    rng = np.random.default_rng(0)
    seen = []
    for agent in env.agent_iter():
        m = raw._match
        if len(seen) == m.deals_played:
            seen.append((m.dealer, m.solo, raw._state.leader, env.infos[agent]["totals"]))
        if m.deals_played == 4:
            break
        obs, *_ = env.last()
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    if num_players == 4:
        d0 = seen[0][0]
        assert [s[0] for s in seen] == [(d0 + k) % 4 for k in range(5)]  # R2.4
        assert [s[2] for s in seen] == [(d0 + k + 1) % 4 for k in range(5)]
    else:
        s0 = seen[0][1]
        assert [s[1] for s in seen[:4]] == [s0, (s0 + 2) % 3, (s0 + 1) % 3, s0]  # R7.4
        assert all(s[2] == 0 for s in seen)  # the solo leads (R7.2)
    assert sum(seen[-1][3].values()) > 0  # totals accumulate


def test_infos_schema_is_fixed_for_the_whole_episode():
    for config in (dict(num_players=4, episode="match", target=300), dict(num_players=3, episode="match", target=300),
                   dict(num_players=3, three_player_scoring="individual")):
        env = twilight_env.env(**config)
        env.reset(seed=1)
        ref = {a: {k: type(v) for k, v in env.infos[a].items()} for a in env.agents}
        keys = {a: {k: sorted(v) for k, v in env.infos[a].items() if isinstance(v, dict)} for a in env.agents}
        assert set(next(iter(ref.values()))) >= {"seat", "phase", "deal_points", "totals"}

        def check(env, agent, last):
            for a in env.agents:
                info = env.infos[a]
                assert {k: type(v) for k, v in info.items()} == ref[a]
                assert {k: sorted(v) for k, v in info.items() if isinstance(v, dict)} == keys[a]
                assert info["phase"] in ("choose", "hold")
                assert info["seat"] == (-1 if (a != agent or last[2]) else env.unwrapped._state.acting_seat)

        play_aec(env, np.random.default_rng(0), check)


# ---------------------------------------------------------------------------------
# reset options and seeding
# ---------------------------------------------------------------------------------
def test_deal_and_dealer_options_are_used():
    deal = _deal_codes(5)
    env = twilight_env.env(num_players=4)
    env.reset(options={"deal": deal, "dealer": 1})
    st = env.unwrapped._state
    assert [codes_of(h) for h in st.hands] == deal
    assert st.leader == 2 and env.agent_selection == "player_2"  # dealer + 1 leads (R2.4)


def test_solo_option_seats_players():
    env = twilight_env.env(num_players=3)
    for solo in range(3):
        env.reset(seed=0, options={"solo": solo})
        raw = env.unwrapped
        assert raw.seat_of(f"player_{solo}") == 0 and env.agent_selection == f"player_{solo}"  # R7.2
        assert raw.seat_of(f"player_{(solo + 1) % 3}") == 1
        assert raw.seat_of(f"player_{(solo + 2) % 3}") == 3


def test_scores_option_starts_match_totals():
    env = twilight_env.env(num_players=3, episode="match", target=1000)
    env.reset(seed=0, options={"scores": [990, 0, 5], "solo": 1})
    assert env.infos["player_0"]["totals"] == {"player_0": 990, "player_1": 0, "player_2": 5}
    d = env.unwrapped.observe(env.agent_selection)["observation"]
    from twilight_env.obs.encoding import decode_observation
    dec = decode_observation(d)
    assert dec["match"] and dec["target"] == 1000.0


def test_same_seed_same_deals_even_after_global_rng_use():
    import random

    hands = []
    for k in range(2):
        env = twilight_env.env(num_players=4)
        np.random.seed(k)
        random.seed(k)
        np.random.random(10)
        env.reset(seed=42)
        hands.append(list(env.unwrapped._state.hands))
        env.reset()
        hands.append(list(env.unwrapped._state.hands))
    assert hands[0] == hands[2] and hands[1] == hands[3] and hands[0] != hands[1]


# ---------------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------------
@pytest.mark.parametrize("make", [twilight_env.env, twilight_env.raw_env])
@pytest.mark.parametrize("bad", [31, -1, 1.5, True, None, "3", np.float32(2.0)])
def test_bad_action_raises_and_changes_nothing(make, bad):
    env = make(num_players=3)
    env.reset(seed=9)
    raw = env.unwrapped
    before = (raw._state.hands[:], list(raw._state.history), env.agent_selection, raw._state.phase,
              {a: dict(i) for a, i in env.infos.items()}, raw.observe(env.agent_selection)["observation"].copy())
    with pytest.raises(ValueError, match="action"):
        env.step(bad)
    after = (raw._state.hands[:], list(raw._state.history), env.agent_selection, raw._state.phase,
             {a: dict(i) for a, i in env.infos.items()}, raw.observe(env.agent_selection)["observation"].copy())
    assert before[:5] == after[:5] and np.array_equal(before[5], after[5])


def test_illegal_card_raises_with_legal_list_and_changes_nothing():
    env = twilight_env.env(num_players=4)
    env.reset(seed=2)
    raw = env.unwrapped
    legal = raw._state.legal_actions()
    illegal = next(a for a in range(31) if a not in legal)
    hist = list(raw._state.history)
    with pytest.raises(ValueError, match="legal actions"):
        env.step(illegal)
    assert raw._state.history == hist
    env.step(np.int64(legal[0]))  # NumPy ints are accepted
    assert len(raw._state.history) + (raw._state.phase == HOLD) >= 1


@pytest.mark.parametrize("config, match", [
    (dict(players=4), "unknown config keyword"),
    (dict(num_players=5), "num_players"),
    (dict(num_players="4"), "num_players"),
    (dict(episode="game"), "episode"),
    (dict(target=0), "target"),
    (dict(target=True), "target"),
    (dict(target=2.5), "target"),
    (dict(goals_333="yes"), "goals_333"),
    (dict(three_player_scoring="solo"), "three_player_scoring"),
    (dict(num_players=4, three_player_scoring="individual"), "three_player_scoring"),
    (dict(fixed_solo=1), "fixed_solo"),
    (dict(num_players=4, fixed_solo=True), "fixed_solo"),
    (dict(render_mode="rgb_array"), "render_mode"),
])
def test_bad_config_raises(config, match):
    with pytest.raises(ValueError, match=match):
        twilight_env.env(**config)
    with pytest.raises(ValueError, match=match):
        twilight_env.raw_env(**config)


def _bad_deals():
    deal = _deal_codes(1)
    dup = [h[:] for h in deal]
    dup[1][0] = dup[0][0]
    return [deal[:3], [deal[0][:6]] + deal[1:], [["XX"] + deal[0][1:]] + deal[1:], dup, "SP SC1"]


@pytest.mark.parametrize("num_players, options, match", [
    *[(4, {"deal": d}, "deal|hand|card") for d in _bad_deals()],
    (4, {"dealer": 4}, "dealer"),
    (4, {"dealer": "1"}, "dealer"),
    (4, {"solo": 0}, "solo"),
    (3, {"solo": 3}, "solo"),
    (3, {"solo": True}, "solo"),
    (3, {"dealer": 0}, "dealer"),
    (4, {"scores": [0, 0]}, "match episodes"),
    (4, "deal", "options"),
])
def test_bad_options_raise(num_players, options, match):
    env = twilight_env.env(num_players=num_players)
    with pytest.raises(ValueError, match=match):
        env.reset(seed=0, options=options)


@pytest.mark.parametrize("scores", [[0], [1, 2, 3], [-1, 0], [0.5, 1], "ab"])
def test_bad_scores_raise_in_match(scores):
    env = twilight_env.env(num_players=4, episode="match")
    with pytest.raises(ValueError, match="scores"):
        env.reset(seed=0, options={"scores": scores})


def test_unknown_option_key_warns_and_is_ignored():
    env = twilight_env.env(num_players=4)
    with pytest.warns(UserWarning, match="ignoring unknown reset option"):
        env.reset(seed=0, options={"dealr": 1})
    assert env.agents


def test_use_before_reset_is_an_error():
    env = twilight_env.env()
    with pytest.raises(AttributeError):
        env.agents
    with pytest.raises(Exception):
        env.step(0)


# ---------------------------------------------------------------------------------
# rendering
# ---------------------------------------------------------------------------------
def test_ansi_render_is_a_spectator_view():
    env = twilight_env.env(num_players=3, render_mode="ansi")
    env.reset(seed=6)
    rng = np.random.default_rng(0)
    raw = env.unwrapped
    for _ in range(9):
        obs, *_ = env.last()
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    text = env.render()
    st = raw._state
    open_hand = " ".join(codes_of(st.hands[NEW_MOON]))
    assert open_hand in text  # the new moon's hand is face up (R7.1)
    tokens = set(text.replace("(", " ").replace(")", " ").replace(",", " ").split())
    for s in (0, 1, 3):
        for c in codes_of(st.hands[s]):
            assert c not in tokens, f"hidden card {c} of seat {s} shown"
    for s in range(4):
        sun, moon = st.counts()[s]
        assert f"{sun}/{moon}" in text  # card backs (R2.5)
    assert "solo" in text and "new moon" in text and "Pending pile" in text


def test_human_render_prints(capsys):
    env = twilight_env.env(num_players=4, render_mode="human")
    env.reset(seed=0)
    assert env.render() is None
    assert "Sun side" in capsys.readouterr().out


def test_terminate_illegal_wrapper_handles_illegal_moves_the_pettingzoo_way():
    from pettingzoo.utils.wrappers import OrderEnforcingWrapper, TerminateIllegalWrapper

    env = OrderEnforcingWrapper(TerminateIllegalWrapper(twilight_env.raw_env(num_players=4), illegal_reward=-1))
    env.reset(seed=0)
    seen = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for agent in env.agent_iter():
            obs, reward, term, trunc, _ = env.last()
            seen.append((agent, reward, term or trunc))
            if term or trunc:
                env.step(None)
            else:
                env.step(int(np.flatnonzero(obs["action_mask"] == 0)[0]))
    first = seen[0][0]
    assert (first, -1.0, True) in seen and env.agents == []
    assert sorted(a for a, _, done in seen if done) == sorted(env.unwrapped.possible_agents)


def test_failed_reset_leaves_the_env_as_it_was():
    env = twilight_env.env(num_players=4)
    env.reset(seed=3)
    obs, *_ = env.last()
    env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    raw = env.unwrapped
    before = (list(raw._state.hands), list(raw._state.history), env.agent_selection, raw._rng.bit_generator.state)
    bad = _deal_codes(0)
    bad[0][0] = bad[1][0]
    for options in ({"deal": bad}, {"dealer": 9}, {"solo": 1}):
        with pytest.raises(ValueError):
            env.reset(seed=99, options=options)
        assert (list(raw._state.hands), list(raw._state.history), env.agent_selection,
                raw._rng.bit_generator.state) == before


@pytest.mark.parametrize("options", [{"scores": [0, 0, 2000], "solo": 0}, {"scores": [0, 2000, 0], "solo": 0},
                                     {"scores": [7, 0, 8]}])
def test_fixed_solo_refuses_unequal_sun_scores_and_leaves_the_env_as_it_was(options):
    env = twilight_env.env(num_players=3, episode="match", fixed_solo=True)
    env.reset(seed=3)
    before = (env.unwrapped._state.initial_hands, env.unwrapped._rng.bit_generator.state)
    with pytest.raises(ValueError, match=r"option 'scores'.*fixed_solo.*one score line \(R7\.6, R7\.5\)"):
        env.reset(options=options)
    assert (env.unwrapped._state.initial_hands, env.unwrapped._rng.bit_generator.state) == before


@pytest.mark.parametrize("solo", [0, 1, 2])
def test_fixed_solo_match_with_sun_at_the_target_ends_after_one_deal(solo):
    scores = [2000, 2000, 2000]
    scores[solo] = 0
    env = twilight_env.env(num_players=3, episode="match", fixed_solo=True)
    env.reset(seed=solo, options={"scores": scores, "solo": solo})
    deals = set()
    for agent in env.agent_iter():
        obs, _, term, trunc, info = env.last()
        deals.add(info["deals_played"])
        env.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))
    assert deals == {0, 1}  # decided after the first deal: the Sun side is over the target
