"""Information sets (R2.5, R7.1) and their determinizations (sample_world, world_state)."""

from collections import Counter
from math import factorial

import numpy as np
import pytest

from twilight_env.rules.cards import ALL_MASK, CARDS, MOON_MASK, SUN_MASK, card_id, mask_of
from twilight_env.rules.engine import NEW_MOON, State

from engine_helpers import codes, random_play, request_action
from positions import Spec, random_points, viewer_seats


@pytest.mark.parametrize("num_players", [3, 4])
def test_r2_5_infoset_public_facts(num_players):
    from twilight_env.rules.infoset import InfoSet
    for st in random_points(Spec(num_players, 1), every=5):
        for seat in viewer_seats(num_players):
            info = InfoSet(st, seat)
            assert set(info.hand) == codes(st.hands[seat])
            assert info.counts == st.counts()
            assert info.history == st.history and info.history is not st.history
            assert info.pending == st.pending and list(info.captured) == st.captured
            assert info.trick_cards == st.cards and info.trick_holders == st.holders
            played = 0
            for _, _, c in st.history:
                played |= 1 << c
            assert info.played == played
            if num_players == 3:
                assert set(info.open_hand) == codes(st.hands[NEW_MOON])
            else:
                assert info.open_hand == []
            assert info.to_act == (not st.done and st.deciding_seat == seat)
            assert info.legal_actions == (st.legal_actions() if info.to_act else ())


@pytest.mark.parametrize("num_players", [3, 4])
def test_infoset_sample_world_is_consistent(num_players):
    from twilight_env.rules.infoset import InfoSet
    rng = np.random.default_rng(2)
    for st in random_points(Spec(num_players, 3), every=3):
        for seat in viewer_seats(num_players):
            info = InfoSet(st, seat)
            for _ in range(3):
                world = info.sample_world(rng)
                masks = [mask_of(h) for h in world]
                assert set(world[seat]) == set(info.hand)  # own hand
                if num_players == 3:
                    assert set(world[NEW_MOON]) == set(info.open_hand)  # open hand
                for s in range(4):  # the public counts
                    assert (bin(masks[s] & SUN_MASK).count("1"), bin(masks[s] & MOON_MASK).count("1")) \
                        == info.counts[s]
                union = masks[0] | masks[1] | masks[2] | masks[3]
                assert sum(bin(m).count("1") for m in masks) == bin(union).count("1")  # disjoint
                assert union == ALL_MASK & ~info.played  # exactly the cards not yet played


def replay_actions(history):
    """History ``(chooser, holder, card)`` as engine actions (a request, then the card)."""
    out = []
    for chooser, holder, card in history:
        if holder != chooser:
            out.append(request_action(chooser, holder))
        out.append(card)
    return out


@pytest.mark.parametrize("num_players", [3, 4])
def test_infoset_history_replays_legally_on_world_state(num_players):
    from twilight_env.rules.infoset import InfoSet
    rng = np.random.default_rng(4)
    for st in random_points(Spec(num_players, 5), every=4):
        for seat in viewer_seats(num_players):
            info = InfoSet(st, seat)
            world = info.sample_world(rng)
            ws = info.world_state(world)
            # rebuild the deal as dealt in this world and replay the public history on it
            fresh = State(ws.initial_hands, info.first_leader, num_players)
            for a in replay_actions(info.history):
                assert fresh.is_legal(a)
                fresh.apply(a)
            if info.phase == "hold":
                fresh.apply(request_action(info.chooser, info.holder))
            for f in ("hands", "leader", "trick", "place", "phase", "holder", "cards", "holders",
                      "pending", "captured", "neutral", "history", "held"):
                assert getattr(fresh, f) == getattr(ws, f), f
            # the world state plays on to the end with the engine's rules
            random_play(ws, rng)
            assert ws.done


def test_infoset_world_state_rejects_inconsistent_worlds():
    from twilight_env.rules.infoset import InfoSet
    st = list(random_points(Spec(4, 6), every=3))[4]
    info = InfoSet(st, 0)
    world = info.sample_world(np.random.default_rng(0))
    bad = [list(h) for h in world]
    other = 1 if bad[1] else 2
    bad[0][0], bad[other][0] = bad[other][0], bad[0][0]  # swap a card out of the own hand
    with pytest.raises(ValueError):
        info.world_state(bad)
    with pytest.raises(ValueError, match="4 hands"):
        info.world_state(world[:3])
    played = CARDS[st.history[0][2]]
    bad = [list(h) for h in world]
    hidden = next(s for s in (1, 2, 3) if bad[s])
    bad[hidden][0] = played
    with pytest.raises(ValueError):
        info.world_state(bad)


def test_infoset_uniform_sample_world_chi_square():
    """Worlds are drawn uniformly: a small case with few consistent deals of the unseen cards."""
    scipy_stats = pytest.importorskip("scipy.stats")
    from twilight_env.rules.infoset import InfoSet
    # the 4-player state after 4 tricks of a fixed random deal: 80 consistent worlds
    rng = np.random.default_rng(11)
    st = State.random(rng)
    while st.trick < 4:
        legal = st.legal_actions()
        st.apply(legal[int(rng.integers(len(legal)))])
    info = InfoSet(st, 0)
    hidden = (1, 2, 3)
    n_worlds = 1
    for cult in (0, 1):
        counts = [info.counts[s][cult] for s in hidden]
        n = factorial(sum(counts))
        for k in counts:
            n //= factorial(k)
        n_worlds *= n
    assert n_worlds == 80
    draws = 60 * n_worlds
    sample_rng = np.random.default_rng(12)
    seen = Counter(tuple(info.sample_hands(sample_rng)) for _ in range(draws))
    assert len(seen) == n_worlds  # every consistent world shows up
    observed = np.array(list(seen.values()))
    p = scipy_stats.chisquare(observed).pvalue
    assert p > 1e-3, (p, n_worlds)
    # and card by card: each unseen card lies with each hidden seat in proportion to its count
    unseen = [c for c in range(28) if info.unseen_mask >> c & 1]
    for c in unseen:
        cult = 0 if c < 14 else 1
        total = sum(info.counts[s][cult] for s in hidden)
        loc = Counter()
        for world, k in seen.items():
            loc[next(s for s in hidden if world[s] >> c & 1)] += k
        expected = [draws * info.counts[s][cult] / total for s in hidden if info.counts[s][cult]]
        got = [loc[s] for s in hidden if info.counts[s][cult]]
        if len(got) > 1:
            assert scipy_stats.chisquare(got, expected).pvalue > 1e-3


def test_infoset_of_new_moon_is_refused_and_seat_checked():
    from twilight_env.rules.infoset import InfoSet
    st = State.random(np.random.default_rng(0), num_players=3)
    with pytest.raises(ValueError, match="new moon"):
        InfoSet(st, NEW_MOON)
    with pytest.raises(ValueError):
        InfoSet(st, 4)


def test_infoset_tricks_record_takers_and_pending():
    from twilight_env.rules.infoset import InfoSet
    from engine_helpers import NEUTRAL_END_TRICKS, SWEEP_DEAL, play_tricks
    st = State.from_deal(SWEEP_DEAL, leader=0)
    play_tricks(st, NEUTRAL_END_TRICKS)
    info = InfoSet(st, 2)
    assert info.tricks == [(0, 0)] * 5 + [(0, None), (1, None)]
    assert card_id("SP") in [c for _, _, c in info.history]
