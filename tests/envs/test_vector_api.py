"""Batch engine and vector env: auto-reset, rewards, bad input, memory, helpers."""

import numpy as np
import pytest

from twilight_env.rules.cards import ALL_MASK, card_id
from twilight_env.obs.encoding import OBS_SIZE, encode_observation
from twilight_env.rules.engine import State, validate_deal
from twilight_env.envs.vector import (
    TwilightVectorEnv,
    VectorEngine,
    deals_to_hands,
    random_hands_batch,
)
from twilight_env.obs.vector_obs import unpack_observation

# the publisher's R3 example deal is not given card by card; any valid deal will do here
DEAL = [
    ["SP", "SC1", "SC2", "S3", "MA", "MT", "MO"],
    ["MP", "MC1", "MC2", "M3", "SA", "ST", "SO"],
    ["SC3", "SC4", "SC5", "S4", "S5", "M4", "M5"],
    ["MC3", "MC4", "MC5", "S6", "S7", "M6", "M7"],
]


def _snapshot(eng):
    o = eng.ops
    fields = [f for f in eng._STATE_FIELDS if f != "_history"] + ["history"]  # history: without its scratch column
    return {f: o.to_numpy(getattr(eng, f)).copy() for f in fields}


def _assert_same(a, b):
    for k in a:
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)


def test_random_hands_batch_deals_every_card_once():
    """R2.3: 4 hands of 7, all 28 cards once, in every deal."""
    h = random_hands_batch(np.random.default_rng(0), 500)
    assert h.shape == (500, 4) and h.dtype == np.int64
    assert (np.bitwise_or.reduce(h, axis=1) == ALL_MASK).all()
    for row in h[:50]:
        assert [bin(int(x)).count("1") for x in row] == [7, 7, 7, 7]


def test_deals_to_hands_formats_agree():
    masks = np.array([validate_deal(DEAL)], dtype=np.int64)
    ids = np.array([[[card_id(c) for c in hand] for hand in DEAL]])
    np.testing.assert_array_equal(deals_to_hands([DEAL]), masks)
    np.testing.assert_array_equal(deals_to_hands(ids), masks)
    np.testing.assert_array_equal(deals_to_hands(masks), masks)


@pytest.mark.parametrize("bad, words", [
    ([[DEAL[0], DEAL[0], DEAL[2], DEAL[3]]], "twice"),                 # a card dealt twice
    ([[DEAL[0][:6], DEAL[1], DEAL[2], DEAL[3]]], "7"),                 # a short hand
    ([[DEAL[0][:6] + ["XX"], DEAL[1], DEAL[2], DEAL[3]]], "unknown"),  # an unknown code
    (np.zeros((1, 4), dtype=np.int64), "all 28"),                      # empty masks
    (np.zeros((1, 4, 7), dtype=np.int64), "all 28"),                   # card 0 seven times per hand
])
def test_deals_to_hands_rejects_bad_deals(bad, words):
    with pytest.raises(ValueError, match=words):
        deals_to_hands(bad)


def test_reset_with_given_deals_and_leaders():
    eng = VectorEngine(2, 4)
    eng.reset(deals=[DEAL, DEAL], leaders=[0, 3])
    st = eng.to_state(1)
    ref = State.from_deal(DEAL, leader=3)
    assert st.hands == list(ref.hands) and st.leader == 3 and st.legal_actions() == ref.legal_actions()
    np.testing.assert_array_equal(eng.legal_mask()[1].nonzero()[0], ref.legal_actions())


@pytest.mark.parametrize("kwargs, words", [
    ({}, "rng"),
    ({"rng": 5}, "Generator"),
    ({"deals": [DEAL]}, "1 deals for 2 rows"),
    ({"rng": np.random.default_rng(0), "leaders": 4}, "seats 0..3"),
    ({"rng": np.random.default_rng(0), "rows": [0, 0]}, "repeat"),
    ({"rng": np.random.default_rng(0), "rows": [2]}, "row indices"),
])
def test_reset_rejects_bad_arguments(kwargs, words):
    eng = VectorEngine(2, 4)
    with pytest.raises(ValueError, match=words):
        eng.reset(**kwargs)


def test_three_players_solo_leads_first_trick():
    """R7.2: in 3 players the solo (seat 0) leads; another leader is refused."""
    eng = VectorEngine(3, 3)
    with pytest.raises(ValueError, match="solo"):
        eng.reset(rng=np.random.default_rng(0), leaders=1)
    eng.reset(rng=np.random.default_rng(0))
    assert (eng.leader == 0).all()


@pytest.mark.parametrize("bad, words", [
    (np.zeros(3, dtype=np.int64), "shape"),
    (np.zeros(4, dtype=np.float32), "integers"),
    (np.full(4, 31), "not in legal actions"),
    (np.full(4, -1), "not in legal actions"),
])
def test_bad_actions_raise_and_change_nothing(bad, words):
    eng = VectorEngine(4, 4)
    eng.reset(rng=np.random.default_rng(1))
    before = _snapshot(eng)
    with pytest.raises(ValueError, match=words):
        eng.apply(bad)
    _assert_same(before, _snapshot(eng))


def test_illegal_action_names_the_batch_indices():
    """R3.2/R3.5: one bad row stops the whole step; the message names it and its legal actions."""
    eng = VectorEngine(6, 4)
    eng.reset(rng=np.random.default_rng(2))
    mask = eng.legal_mask()
    actions = eng.random_actions(np.random.default_rng(3))
    illegal = [int(np.flatnonzero(~mask[i])[0]) for i in (1, 4)]
    actions[1], actions[4] = illegal
    before = _snapshot(eng)
    with pytest.raises(ValueError) as err:
        eng.apply(actions)
    msg = str(err.value)
    assert "batch indices [1, 4]" in msg and "Nothing was changed" in msg
    assert str(np.flatnonzero(mask[1]).tolist()) in msg
    _assert_same(before, _snapshot(eng))


def test_finished_rows_refuse_actions_until_reset():
    eng = VectorEngine(2, 4)
    eng.reset(rng=np.random.default_rng(4), rows=[0])    # row 1 was never dealt: finished
    with pytest.raises(ValueError, match="deal is over"):
        eng.apply(np.zeros(2, dtype=np.int64))
    # stepping only the live row works; the finished row is left alone
    before = _snapshot(eng)
    a = eng.random_actions(np.random.default_rng(5))
    eng.apply(a, active=np.array([True, False]))
    after = _snapshot(eng)
    for k in before:
        np.testing.assert_array_equal(before[k][1], after[k][1], err_msg=k)
    assert not np.array_equal(before["hands"][0], after["hands"][0]) or after["phase"][0] == 1


def test_request_in_hold_phase_is_illegal():
    """R3.2: only the chooser requests; the requested holder must play a card."""
    eng = VectorEngine(1, 4)
    eng.reset(deals=[DEAL])
    st = State.from_deal(DEAL)
    req = next(a for a in st.legal_actions() if a >= 28)
    eng.apply(np.array([req]))
    assert int(eng.phase[0]) == 1
    with pytest.raises(ValueError, match="not in legal actions"):
        eng.apply(np.array([28]))


def test_random_actions_are_legal_and_uniform():
    """Every legal action of a position is drawn about equally often (chi-square)."""
    scipy_stats = pytest.importorskip("scipy.stats")
    B = 20000
    eng = VectorEngine(B, 4)
    eng.reset(deals=np.repeat(deals_to_hands([DEAL]), B, axis=0))
    legal = State.from_deal(DEAL).legal_actions()
    a = eng.random_actions(np.random.default_rng(6))
    assert set(np.unique(a)) == set(legal)
    counts = np.bincount(a, minlength=31)[list(legal)]
    assert scipy_stats.chisquare(counts).pvalue > 1e-4


def test_memory_per_deal_is_under_one_kilobyte():
    eng = VectorEngine(1024, 4)
    assert eng.nbytes_per_deal() <= 1024


def test_packed_observations_expand_to_the_same_vectors():
    eng = VectorEngine(64, 3)
    rng = np.random.default_rng(7)
    eng.reset(rng=rng)
    for _ in range(20):
        eng.apply(eng.random_actions(rng))
        flags, scalars = eng.observe_packed()
        assert flags.dtype == np.uint8 and scalars.dtype == np.float32
        np.testing.assert_array_equal(unpack_observation(flags, scalars), eng.observe())


@pytest.mark.parametrize("compiled", [True, False])
def test_observe_fills_the_out_buffer_and_checks_seats(compiled):
    """``observe`` writes into ``out`` what it returns, and refuses a seat outside 0..3
    (the rows' parity with the reference encoder is ``tests/rules/test_parity.py``'s)."""
    from twilight_env.obs import vector_obs

    B = 8
    eng = VectorEngine(B, 4)
    rng = np.random.default_rng(3)
    eng.reset(rng=rng)
    for _ in range(5):
        eng.apply(eng.random_actions(rng))
    a = vector_obs.observe(eng, compiled=compiled)
    out = np.full((B, OBS_SIZE), 7.0, dtype=np.float32)
    assert vector_obs.observe(eng, out=out, compiled=compiled) is out
    np.testing.assert_array_equal(out, a)
    with pytest.raises(ValueError, match="seats must be"):
        vector_obs.observe(eng, np.full(B, 4), compiled=compiled)


def test_observe_rejects_the_new_moon_as_viewer():
    """R7.3: the new moon (seat 2) is no player in 3 players."""
    eng = VectorEngine(2, 3)
    eng.reset(rng=np.random.default_rng(8))
    with pytest.raises(ValueError, match="new moon"):
        eng.observe(np.array([0, 2]))


@pytest.mark.parametrize("num_players", [4, 3])
def test_env_auto_reset_rewards_and_infos(num_players):
    """Deal episodes: rewards per seat = returns / 360 at the deal's end (docs/API.md, Rewards);
    finished rows start a new deal in the same step; obs and mask are the deciding
    player's."""
    B = 16
    env = TwilightVectorEnv(B, num_players, seed=9)
    obs, mask, info = env.reset()
    assert obs.shape == (B, OBS_SIZE) and obs.dtype == np.float32
    assert mask.shape == (B, 31) and mask.dtype == np.int8
    eng = env.engine
    states = [eng.to_state(i) for i in range(B)]
    firsts = [st.first_leader for st in states]
    totals = np.zeros((B, 4))
    finished = 0
    rng = np.random.default_rng(10)
    while finished < 3 * B:
        for i, st in enumerate(states):
            assert mask[i].nonzero()[0].tolist() == list(st.legal_actions())
            assert info["seat"][i] == st.deciding_seat
            np.testing.assert_array_equal(obs[i], encode_observation(st, st.deciding_seat))
        acts = np.array([rng.choice(st.legal_actions()) for st in states])
        for st, a in zip(states, acts):
            st.apply(int(a))
        obs, mask, reward, done, info = env.step(acts)
        assert reward.shape == (B, 4) and reward.dtype == np.float32 and done.dtype == np.bool_
        totals += reward
        for i, st in enumerate(states):
            assert bool(done[i]) == st.done
            if st.done:
                ret = np.array(st.returns()) / 360.0  # docs/API.md, Rewards: deal points difference / 360
                np.testing.assert_array_equal(reward[i], ret.astype(np.float32))
                assert reward[i, 0] == reward[i, 2] and reward[i, 0] == -reward[i, 1]
                assert tuple(info["deal_points"][i]) == st.side_scores()
                # the row already holds a fresh deal
                new = eng.to_state(i)
                assert new.trick == 0 and not new.history
                lead = (firsts[i] + 1) % 4 if num_players == 4 else 0
                assert new.leader == lead  # R2.4 dealer passes left; R7.2 solo leads
                firsts[i] = lead
                states[i] = new
                finished += 1
            else:
                assert not reward[i].any() and not info["deal_points"][i].any()
    assert env.deals_finished == finished
    assert np.abs(totals).max() <= 3 * 2  # at most 1 per deal, about 3 deals per row


def test_env_same_seed_same_deals():
    a = TwilightVectorEnv(8, 4, seed=11)
    b = TwilightVectorEnv(8, 4, seed=11)
    oa, ma, _ = a.reset()
    ob, mb, _ = b.reset()
    np.testing.assert_array_equal(oa, ob)
    for _ in range(60):
        act = a.random_actions()
        np.testing.assert_array_equal(act, b.random_actions())
        ra = a.step(act)
        rb = b.step(act)
        np.testing.assert_array_equal(ra[0], rb[0])
        np.testing.assert_array_equal(ra[2], rb[2])


def test_env_illegal_action_changes_nothing():
    env = TwilightVectorEnv(4, 4, seed=12)
    _, mask, _ = env.reset()
    before = _snapshot(env.engine)
    acts = env.random_actions()
    acts[2] = int(np.flatnonzero(mask[2] == 0)[0])
    with pytest.raises(ValueError, match=r"batch indices \[2\]"):
        env.step(acts)
    _assert_same(before, _snapshot(env.engine))


def test_env_copy_false_reuses_the_observation_buffer():
    env = TwilightVectorEnv(4, 4, seed=13, copy=False)
    obs0, _, _ = env.reset()
    obs1 = env.step(env.random_actions())[0]
    assert obs1 is obs0


def test_torch_env_matches_numpy_env():
    torch = pytest.importorskip("torch")
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        a = TwilightVectorEnv(8, 3, seed=14)
        b = TwilightVectorEnv(8, 3, seed=14, backend="torch")
        oa, ma, _ = a.reset()
        ob, mb, _ = b.reset()
        for _ in range(50):
            np.testing.assert_array_equal(oa, ob.numpy())
            np.testing.assert_array_equal(ma, mb.numpy())
            act = a.random_actions()
            np.testing.assert_array_equal(act, b.random_actions().numpy())
            oa, ma, ra, da, _ = a.step(act)
            ob, mb, rb, db, _ = b.step(torch.from_numpy(act))
            np.testing.assert_array_equal(ra, rb.numpy())
            np.testing.assert_array_equal(da, db.numpy())
    finally:
        torch.set_num_threads(n)


def test_torch_env_on_cuda_matches_numpy_env():
    """The torch backend on a CUDA device plays the same deals as NumPy (skipped without one)."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs a usable CUDA device")
    a = TwilightVectorEnv(64, 4, seed=15)
    b = TwilightVectorEnv(64, 4, seed=15, backend="torch", device="cuda")
    oa, ma, _ = a.reset()
    ob, mb, _ = b.reset()
    assert ob.device.type == "cuda"
    for _ in range(120):  # past the end of every deal: finished ones are re-dealt
        np.testing.assert_array_equal(oa, ob.cpu().numpy())
        np.testing.assert_array_equal(ma, mb.cpu().numpy())
        act = a.random_actions()
        on_gpu = b.random_actions()  # the same draws from the env's NumPy generator (re-deals stay in step)
        assert on_gpu.device.type == "cuda"
        np.testing.assert_array_equal(act, on_gpu.cpu().numpy())
        oa, ma, ra, da, _ = a.step(act)
        ob, mb, rb, db, _ = b.step(on_gpu)
        np.testing.assert_array_equal(ra, rb.cpu().numpy())
        np.testing.assert_array_equal(da, db.cpu().numpy())


def test_engine_rejects_bad_construction():
    with pytest.raises(ValueError, match="num_players"):
        VectorEngine(4, 5)
    with pytest.raises(ValueError, match="num_envs"):
        VectorEngine(0)
    with pytest.raises(ValueError, match="backend"):
        VectorEngine(4, backend="jax")
    with pytest.raises(ValueError, match="CPU"):
        VectorEngine(4, device="cuda")


@pytest.mark.parametrize("num_players", [4, 3])
def test_set_states_loads_mid_deal_states(num_players):
    """Scalar states taken mid-deal (some mid-trick, some in the hold phase, some with a
    pending pile) load into the batch and play on identically; counts match R2.5."""
    rng = np.random.default_rng(15)
    states = []
    for i in range(60):
        st = State.random(rng, 0 if num_players == 3 else i % 4, num_players)
        for _ in range(int(rng.integers(0, 45))):
            if st.done:
                break
            la = st.legal_actions()
            st.apply(la[int(rng.integers(len(la)))])
        states.append(st)
    eng = VectorEngine(len(states), num_players)
    eng.set_states(states)
    np.testing.assert_array_equal(eng.counts(), [st.counts() for st in states])
    for _ in range(60):
        obs = eng.observe()
        for i, st in enumerate(states):
            got = eng.to_state(i)
            assert (got.hands, got.history, got.cards, got.pending, got.captured) == \
                (st.hands, st.history, st.cards, st.pending, st.captured)
            np.testing.assert_array_equal(obs[i], encode_observation(st, st.deciding_seat))
        live = ~eng.done
        if not live.any():
            break
        acts = eng.random_actions(rng)
        eng.apply(acts, active=live)
        for st, a, on in zip(states, acts, live):
            if on:
                st.apply(int(a))
    assert eng.done.all()
    np.testing.assert_array_equal(eng.returns(), [st.returns() for st in states])
