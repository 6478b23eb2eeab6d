"""The observation vector: layout, decode round trip on real states, and no leaks (R2.5, R7.1)."""

from __future__ import annotations

import numpy as np
import pytest

from positions import Spec, random_points, viewer_seats
from twilight_env.obs import encoding as E
from twilight_env.rules.cards import CARDS, MOON_MASK, SUN_MASK, codes_of, multiplier_of, souls_of
from twilight_env.rules.engine import HOLD, NEW_MOON, State
from twilight_env.rules.infoset import InfoSet


# ---------------------------------------------------------------------------------
# layout
# ---------------------------------------------------------------------------------
def test_layout_ranges_tile_the_vector():
    pos = 0
    for name, start, size, _ in E.LAYOUT:
        assert start == pos, f"{name} starts at {start}, expected {pos}"
        assert getattr(E, name) == start
        pos += size
    assert pos == E.OBS_SIZE
    pos = 0
    for name, off, size, _ in E.SEAT_LAYOUT:
        assert off == pos and getattr(E, name) == off
        pos += size
    assert pos == E.SEAT_SIZE
    assert E.NUM_BITS == E.SIDE
    assert E.NUM_BITS + E.NUM_SCALARS == E.OBS_SIZE


def test_docstring_table_is_the_layout():
    assert E.layout_table() in E.__doc__


# ---------------------------------------------------------------------------------
# decode round trip: every field against the state, computed the plain way
# ---------------------------------------------------------------------------------
def expected_fields(st: State, seat: int, totals=None, target=None) -> dict:
    """What the observation of ``seat`` must say, computed directly from the state."""
    n = st.num_players
    done = st.done
    to_act = (not done) and st.deciding_seat == seat
    ego = st.acting_seat if to_act else seat

    def rel(s):
        return (s - ego) % 4

    def by_rel(masks):
        return [codes_of(masks[(ego + r) % 4]) for r in range(4)]

    visible = {seat} | ({NEW_MOON} if n == 3 else set())
    known = [codes_of(st.hands[(ego + r) % 4]) if (ego + r) % 4 in visible else [] for r in range(4)]
    counts = [(bin(st.hands[(ego + r) % 4] & SUN_MASK).count("1"), bin(st.hands[(ego + r) % 4] & MOON_MASK).count("1"))
              for r in range(4)]
    trick = [(CARDS[st.cards[p]], rel((st.leader + p) % 4), rel(st.holders[p])) for p in range(4) if st.cards[p] >= 0]
    pf, hb, tm, gone = [0] * 4, [0] * 4, [0] * 7, 0
    for i, (c, h, x) in enumerate(st.history):
        pf[c] |= 1 << x
        hb[h] |= 1 << x
        tm[i // 4] |= 1 << x
        gone |= 1 << x
    own_side = ego % 2
    own_cult = st.seat_cult[ego]
    a = st.captured[own_side] | st.captured[own_side + 2]
    b = st.captured[1 - own_side] | st.captured[3 - own_side]
    if n == 4:
        role = "sun side" if seat % 2 == 0 else "moon side"
    else:
        role = {0: "solo", 1: "left sun", 3: "right sun"}[seat]
    if totals is None:
        tot, tg = [0.0] * 4, 0.0
    else:
        per_seat = E.seat_totals(totals, n)
        tot = [float(np.float32(min(per_seat[(ego + r) % 4] / target, 4.0))) for r in range(4)]
        tg = float(target)
    return {
        "known": known,
        "counts": counts,
        "trick": trick,
        "gone": codes_of(gone),
        "played_for": by_rel(pf),
        "held_by": by_rel(hb),
        "trick_of": [codes_of(m) for m in tm],
        "pending": codes_of(st.pending),
        "taken": by_rel(st.captured),
        "phase": "over" if done else ("hold" if st.phase == HOLD else "choose"),
        "to_act": to_act,
        "acting": -1 if done else rel(st.acting_seat),
        "chooser": -1 if done else rel(st.chooser),
        "holder": rel(st.holder) if (not done and st.phase == HOLD) else -1,
        "leader": rel(st.leader),
        "tricks_finished": st.trick,
        "place": st.place,
        "role": role,
        "new_moon_decision": n == 3 and to_act and ego == NEW_MOON,
        "new_moon_at": rel(NEW_MOON) if n == 3 else -1,
        "moon_seats": sorted(rel(s) for s in range(4) if st.seat_cult[s] == 1),
        "match": totals is not None,
        "souls": (souls_of(a), souls_of(b)),
        "multiplier": (multiplier_of(a, own_cult), multiplier_of(b, 1 - own_cult)),
        "denied": (multiplier_of(a, 1 - own_cult), multiplier_of(b, own_cult)),
        "score": (souls_of(a) * multiplier_of(a, own_cult), souls_of(b) * multiplier_of(b, 1 - own_cult)),
        "totals": tot,
        "target": tg,
    }


@pytest.mark.parametrize("num_players", [4, 3])
@pytest.mark.parametrize("match", [False, True])
def test_decode_round_trip_on_real_states(num_players, match):
    rng = np.random.default_rng(11 + num_players + 7 * match)
    checked = 0
    for st in random_points(Spec(num_players, 11 + num_players + 7 * match, 6), every=2):
        totals = tuple(int(x) for x in rng.integers(0, 1200, 4)) if match else None
        target = int(rng.integers(100, 2000)) if match else None
        for seat in viewer_seats(num_players):
            vec = E.encode_observation(st, seat, totals, target)
            assert vec.dtype == np.float32 and vec.shape == (E.OBS_SIZE,)
            got = E.decode_observation(vec)
            exp = expected_fields(st, seat, totals, target)
            got["totals"] = [float(np.float32(t)) for t in got["totals"]]
            assert got == exp, f"seat {seat}: {st!r}"
            checked += 1
    assert checked > 200


def test_acting_seat_is_relative_zero_and_new_moon_decision():
    saw_new_moon = False
    for st in random_points(Spec(3, 5, 10)):
        if st.done:
            continue
        d = E.decode_observation(E.encode_observation(st, st.deciding_seat))
        assert d["to_act"] and d["acting"] == 0
        if st.acting_seat == NEW_MOON:
            saw_new_moon = True
            assert d["new_moon_decision"] and d["new_moon_at"] == 0
            assert d["known"][0] == codes_of(st.hands[NEW_MOON])  # the hand it plays from (R7.3)
            assert d["known"][2] == codes_of(st.hands[0])  # the solo's own hand, opposite
    assert saw_new_moon


def test_out_buffer_clone_and_mask_give_identical_bytes():
    """The out buffer, a clone and ``observation_and_mask`` give the encoder's bytes (the
    encoders' parity with the reference encoder is ``tests/rules/test_parity.py``'s)."""
    out = np.full(E.OBS_SIZE, 7.0, dtype=np.float32)
    for n in (4, 3):
        for st in random_points(Spec(n, 3, 8), every=3):
            for seat in viewer_seats(n):
                for totals, target in ((None, None), ((100, 250, 300, 0), 666)):
                    ref = E.encode_observation(st, seat, totals, target)
                    assert ref.tobytes() == E.encode_observation(st, seat, totals, target, out=out).tobytes()
                    assert ref.tobytes() == E.encode_observation(st.clone(), seat, totals, target).tobytes()
                    obs, mask = E.observation_and_mask(st, seat, totals, target)
                    assert obs.tobytes() == ref.tobytes()
                    legal = st.legal_actions() if (not st.done and st.deciding_seat == seat) else ()
                    assert np.flatnonzero(mask).tolist() == list(legal)


def test_returned_arrays_are_fresh_so_memoized_parts_cannot_be_corrupted():
    # the side scalars and the action masks are memoized: writing into a returned array
    # must not change what later calls return
    for n in (4, 3):
        for st in random_points(Spec(n, 11, 3), every=5):
            seat = st.deciding_seat if not st.done else 0
            obs, mask = E.observation_and_mask(st, seat)
            ref_obs, ref_mask = obs.copy(), mask.copy()
            obs[:] = 9.0
            mask[:] = 5
            obs2, mask2 = E.observation_and_mask(st, seat)
            assert obs2.tobytes() == ref_obs.tobytes() and mask2.tobytes() == ref_mask.tobytes()
            assert obs2.shape == (E.OBS_SIZE,) and obs2.dtype == np.float32 and obs2.flags.c_contiguous
            assert mask2.shape == (31,) and mask2.dtype == np.int8
            v = E.encode_observation(st, seat)
            v[:] = -1.0
            assert E.encode_observation(st, seat).tobytes() == ref_obs.tobytes()


def test_pure_python_encoder_is_chosen_by_the_environment_variable():
    import os
    import subprocess
    import sys

    code = "import twilight_env.obs.encoding as E; print(E.backend())"
    env = dict(os.environ, TWILIGHT_ENV_PURE_PYTHON="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "python"
    env.pop("TWILIGHT_ENV_PURE_PYTHON")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    import importlib.util
    assert out.stdout.strip() == ("numba" if importlib.util.find_spec("numba") else "python")


def test_a_compiled_encoder_that_disagrees_is_dropped_with_a_warning(monkeypatch):
    pytest.importorskip("numba")
    from twilight_env.obs import _encoding_nb

    def wrong(out, mask, *args):
        out[:] = 0.5  # not what the Python encoder writes
        mask[:] = 0
        return 0

    monkeypatch.setattr(_encoding_nb, "encode_into", wrong)
    monkeypatch.setattr(E, "_ENCODE_INTO", None)
    monkeypatch.delenv("TWILIGHT_ENV_PURE_PYTHON", raising=False)
    with pytest.warns(RuntimeWarning, match="pure-Python"):
        assert E.backend() == "python"
    st = State.random(np.random.default_rng(2))
    v = E.encode_observation(st, 0)
    assert set(np.unique(v[:E.NUM_BITS])) <= {0.0, 1.0} and v.sum() > 0


def test_a_bad_out_buffer_raises_saying_what_is_wrong_and_is_not_written():
    st = State.random(np.random.default_rng(5))
    read_only = np.zeros(E.OBS_SIZE, np.float32)
    read_only.flags.writeable = False
    for bad, why in ((np.zeros(E.OBS_SIZE, np.float64), "dtype float64"),
                     (np.zeros(E.OBS_SIZE - 1, np.float32), "shape"),
                     (np.zeros(2 * E.OBS_SIZE, np.float32)[::2], "non-contiguous"),
                     (read_only, "read-only"),
                     ([0.0] * E.OBS_SIZE, "a list, not a numpy array")):
        keep = bad.copy() if isinstance(bad, np.ndarray) else None
        with pytest.raises(ValueError, match="float32 array of shape") as err:
            E.encode_observation(st, 0, out=bad)
        assert why in str(err.value)
        if keep is not None:
            assert np.array_equal(keep, bad)


@pytest.mark.parametrize("value, pure", [(None, False), ("", False), ("0", False), ("false", False), ("No", False),
                                         ("1", True), ("yes", True), ("true", True)])
def test_pure_python_switch_values(value, pure):
    assert E.pure_python_asked(value) is pure


def test_action_mask_marks_the_legal_actions_and_rejects_others():
    m = E.action_mask((0, 13, 28, 30))
    assert m.dtype == np.int8 and m.shape == (31,) and np.flatnonzero(m).tolist() == [0, 13, 28, 30]
    out = np.ones(31, dtype=np.int8)
    assert E.action_mask((), out=out) is out and not out.any()
    for bad in ((31,), (-1,), (True,)):
        with pytest.raises(ValueError, match="0..30"):
            E.action_mask(bad)


def test_values_stay_in_bounds_and_flags_are_binary():
    for st in random_points(Spec(4, 8, 5)):
        v = E.encode_observation(st, 0, (5000, 0), 1000)
        assert set(np.unique(v[:E.NUM_BITS])) <= {0.0, 1.0}
        assert v.min() >= 0.0 and v[E.SIDE:E.TOTALS].max() <= 1.0 and v.max() <= E.TOTALS_CAP


def test_bad_arguments_raise():
    st = State.random(np.random.default_rng(0), 0, 3)
    with pytest.raises(ValueError, match="new moon"):
        E.encode_observation(st, NEW_MOON)
    with pytest.raises(ValueError, match="seat"):
        E.encode_observation(st, 4)
    with pytest.raises(ValueError, match="totals"):
        E.encode_observation(st, 0, (1, 2, 3), 1000)
    with pytest.raises(ValueError, match="target"):
        E.encode_observation(st, 0, (1, 2, 3, 4))
    with pytest.raises(ValueError, match="shape"):
        E.decode_observation(np.zeros(5))
    bad = E.encode_observation(st, 0)
    bad[E.PHASE:E.PHASE + 3] = 1
    with pytest.raises(ValueError, match="PHASE"):
        E.decode_observation(bad)


# ---------------------------------------------------------------------------------
# no leaks: counterfactual re-deals of everything the viewer cannot see
# ---------------------------------------------------------------------------------
@pytest.mark.parametrize("num_players", [4, 3])
def test_counterfactual_redeal_leaves_observation_byte_identical(num_players):
    """R2.5/R7.1: re-dealing every unseen card (own hand, open hand, counts and history
    kept) must not change a single byte of the viewer's observation."""
    rng = np.random.default_rng(100 + num_players)
    changed_worlds = 0
    points = 0
    for st in random_points(Spec(num_players, 100 + num_players, 25), every=2):
        for seat in viewer_seats(num_players):
            info = InfoSet(st, seat, (10, 20, 30, 40), 1000)
            ref = E.encode_observation(st, seat, (10, 20, 30, 40), 1000).tobytes()
            for _ in range(3):
                world = info.sample_hands(rng)
                other = info.world_state(world)
                changed_worlds += list(world) != list(st.hands)
                assert E.encode_observation(other, seat, (10, 20, 30, 40), 1000).tobytes() == ref
                obs, _ = E.observation_and_mask(other, seat, (10, 20, 30, 40), 1000)
                assert obs.tobytes() == ref
            points += 1
    assert points > 300
    assert changed_worlds > points  # the re-deals really moved hidden cards


def _swap_in_initial_deal(st: State, a: int, b: int) -> State:
    """The same public history on a deal where unplayed cards ``a`` and ``b`` swap hands."""
    init = list(st.initial_hands)
    for s in range(4):
        if init[s] >> a & 1:
            sa = s
        if init[s] >> b & 1:
            sb = s
    init[sa] ^= (1 << a) | (1 << b)
    init[sb] ^= (1 << a) | (1 << b)
    new = State(init, st.first_leader, st.num_players)
    for c, h, x in st.history:
        if new.phase == 0 and c != h:
            new.apply(28 + ((h - c) % 4) - 1)
        new.apply(x)
    if st.phase == HOLD:
        new.apply(28 + ((st.holder - st.chooser) % 4) - 1)
    assert (new.trick, new.place, new.phase) == (st.trick, st.place, st.phase)
    return new


@pytest.mark.parametrize("num_players", [4, 3])
def test_own_hand_and_open_hand_change_the_observation(num_players):
    """Converse of the no-leak test: what the viewer does see is in the vector."""
    rng = np.random.default_rng(200 + num_players)
    tested = 0
    for st in random_points(Spec(num_players, 200 + num_players, 20), every=3):
        if st.done:
            continue
        for seat in viewer_seats(num_players):
            visible = [seat] + ([NEW_MOON] if num_players == 3 else [])
            for vs in visible:
                for cult_mask in (SUN_MASK, MOON_MASK):
                    mine = st.hands[vs] & cult_mask
                    hidden = [s for s in range(4) if s not in visible and st.hands[s] & cult_mask]
                    if not mine or not hidden:
                        continue
                    a = int(rng.choice([i for i in range(28) if mine >> i & 1]))
                    other = st.hands[hidden[0]] & cult_mask
                    b = int(rng.choice([i for i in range(28) if other >> i & 1]))
                    alt = _swap_in_initial_deal(st, a, b)
                    assert alt.counts() == st.counts()
                    assert (E.encode_observation(alt, seat).tobytes()
                            != E.encode_observation(st, seat).tobytes())
                    tested += 1
    assert tested > 100


# ---------------------------------------------------------------------------------
# the fourth place of the current trick (docs/API.md, Observation)
# ---------------------------------------------------------------------------------
FOURTH_PLACE = slice(E.TRICK + 3 * E.TRICK_PLACE_SIZE, E.TRICK + 4 * E.TRICK_PLACE_SIZE)


@pytest.mark.parametrize("num_players", [4, 3])
def test_fourth_place_of_the_trick_is_always_empty(num_players, monkeypatch):
    """Slots 620..655 stay 0: the fourth card resolves the trick in the same step (R4.1-R4.3),
    so no observation shows a trick with four cards; checked for both scalar encoders and
    the batch engine, over many random steps, while the third place is seen filled."""
    from twilight_env.obs import vector_obs
    from twilight_env.envs.vector import VectorEngine

    assert (FOURTH_PLACE.start, FOURTH_PLACE.stop) == (620, 656) and FOURTH_PLACE.stop == E.GONE
    third = slice(E.TRICK + 2 * E.TRICK_PLACE_SIZE, FOURTH_PLACE.start)
    rng = np.random.default_rng(620 + num_players)
    steps = third_seen = 0
    for st in random_points(Spec(num_players, 620 + num_players, 40)):
        for seat in viewer_seats(num_players):
            vecs = [E.encode_observation(st, seat)]
            with monkeypatch.context() as m:
                m.setattr(E, "_ENCODE_INTO", False)  # the pure-Python encoder
                vecs.append(E.encode_observation(st, seat))
            for v in vecs:
                assert not v[FOURTH_PLACE].any(), f"place 3 of the trick is set at trick {st.trick}, place {st.place}"
                third_seen += bool(v[third].any())
        steps += 1
    assert steps > 40 * 28 and third_seen > 0  # the third place does show when it is filled

    B = 64
    eng = VectorEngine(B, num_players)
    eng.reset(rng=rng)
    third_seen = 0
    for _ in range(300):
        for compiled in (True, False):
            obs = vector_obs.observe(eng, compiled=compiled)
            assert not obs[:, FOURTH_PLACE].any()
            third_seen += int(obs[:, third].any(axis=1).sum())
        eng.apply(eng.random_actions(rng))
        done = eng.done
        if done.any():
            eng.reset(np.nonzero(done)[0], rng=rng)
    assert third_seen > 0


@pytest.mark.parametrize("num_players", [4, 3])
def test_r5_deal_score_so_far_in_the_observation_is_the_engines(num_players):
    """The SIDE fields restate R5 (souls x own multipliers) from the encoders' own tables;
    the decoded deal score so far equals the engine's side scores, own side first."""
    from twilight_env.obs.encoding import decode_observation, encode_observation

    rng = np.random.default_rng(17 + num_players)
    for _ in range(40):
        s = State.random(rng, leader=0, num_players=num_players)
        while not s.done:
            legal = s.legal_actions()
            s.apply(legal[int(rng.integers(len(legal)))])
            for seat in ((0, 1, 3) if num_players == 3 else range(4)):  # the new moon has no view of its own
                own = seat & 1
                scores = s.side_scores()
                got = decode_observation(encode_observation(s, seat))["score"]
                assert tuple(got) == (scores[own], scores[1 - own])
