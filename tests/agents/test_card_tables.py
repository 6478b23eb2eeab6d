"""The derived card tables are stated once, in ``twilight_env.rules.cards`` (Python tuples)
and ``twilight_env.rules.tables`` (the same as NumPy arrays), and every kernel reads them
from there: the tables match their definition from the cards, and each kernel's module
constant is the rules' array (or, where a kernel needs its own layout, equals the layout
derived from it). ``cards.trick_so_far`` is the one "best card so far" (R4.1)."""

import numpy as np
import pytest

from twilight_env.rules import cards as C
from twilight_env.rules import tables as T
from twilight_env.rules.engine import SEAT_CULT_3, SEAT_CULT_4

HALF = range(1 << 14)


def _ids(m):
    return [b for b in range(14) if m >> b & 1]


def test_half_tables_match_their_definition():
    assert C.HALF_SOULS == tuple(sum(C.SOULS[b] for b in _ids(m)) for m in HALF)
    assert C.HALF_MULT == tuple(sum(C.MULTIPLIER[b] for b in _ids(m)) for m in HALF)
    assert C.HALF_COUNT == tuple(len(_ids(m)) for m in HALF)
    assert C.HALF_MAX_STRENGTH == tuple(max((C.STRENGTH[b] for b in _ids(m)), default=-1) for m in HALF)
    # both cults have the same kinds at the same offsets, so one half table serves both (R1)
    assert C.SOULS[:14] == C.SOULS[14:] and C.MULTIPLIER[:14] == C.MULTIPLIER[14:]
    assert C.STRENGTH[:14] == C.STRENGTH[14:]
    m = C.mask_of(["S3", "SC1", "M7", "MO", "SA"])
    assert C.souls_of(m) == 3 + 1 + 7 and C.multiplier_of(m, C.SUN) == 1 and C.multiplier_of(m, C.MOON) == 3


def test_card_tables_match_their_definition():
    assert C.SANCTUARY == tuple(C.KIND[i] in ("A", "T", "O") for i in range(28))
    for c in (C.SUN, C.MOON):
        assert C.MULT_OF_CULT[c] == tuple(C.MULTIPLIER[i] if C.CULT[i] == c else 0 for i in range(28))
        order = C.STRONG_FIRST[c]
        assert sorted(order) == list(range(14 * c, 14 * c + 14))
        keys = [(C.STRENGTH[i], C.SOULS[i], C.MULTIPLIER[i], -i) for i in order]
        assert keys == sorted(keys, reverse=True)
    assert [C.CARDS[i] for i in C.STRONG_FIRST[0][:7]] == ["SP", "SC1", "SC2", "SC3", "SC4", "SC5", "S7"]


@pytest.mark.parametrize("name", ["STRENGTH", "SOULS", "MULTIPLIER", "SANCTUARY", "MULT_OF_CULT", "HALF_SOULS",
                                  "HALF_MULT", "HALF_COUNT", "HALF_MAX_STRENGTH"])
def test_numpy_tables_equal_the_python_tables(name):
    a = getattr(T, name)
    assert a.dtype == np.int64 and not a.flags.writeable
    np.testing.assert_array_equal(a, np.array(getattr(C, name), dtype=np.int64))


def test_numpy_only_tables():
    np.testing.assert_array_equal(T.STRONG_FIRST, C.STRONG_FIRST[0] + C.STRONG_FIRST[1])
    np.testing.assert_array_equal(T.SEAT_CULT, [SEAT_CULT_4, SEAT_CULT_3])
    assert T.LOWBIT[0] == -1
    assert all(T.LOWBIT[m] == (m & -m).bit_length() - 1 for m in range(1, 1 << 14))


def test_solver_kernel_reads_the_rules_tables():
    nb = pytest.importorskip("twilight_env.agents._solver_nb")
    assert nb._STR is T.STRENGTH and nb._SOUL is T.SOULS and nb._SEAT_CULT is T.SEAT_CULT
    assert nb._HSOULS is T.HALF_SOULS and nb._HMULT is T.HALF_MULT and nb._LOWBIT is T.LOWBIT
    for v, seat_cult in enumerate((SEAT_CULT_4, SEAT_CULT_3)):
        for side in (0, 1):  # a side takes its own cult's sanctuaries' multipliers only (R5.2)
            np.testing.assert_array_equal(nb._MULT[v, side], C.MULT_OF_CULT[seat_cult[side]])
    for c in (0, 1):
        np.testing.assert_array_equal(nb._HOLD_ORDER[14 * c:14 * c + 14], C.STRONG_FIRST[c])
        np.testing.assert_array_equal(nb._OWN_ORDER[14 * c:14 * c + 14], C.STRONG_FIRST[c][::-1])


def test_python_solver_orders_from_the_rules_order():
    from twilight_env.agents import solver

    for c in (0, 1):
        for m in (0, 1, 0b1011, 0x3FFF, 0x2A5C):
            ids = [14 * c + b for b in _ids(m)]
            assert list(solver._HOLDER_ORDER[c][m]) == [i for i in C.STRONG_FIRST[c] if i in ids]
            assert list(solver._OWN_ORDER[c][m]) == [i for i in C.STRONG_FIRST[c][::-1] if i in ids]


def test_rollout_kernel_reads_the_rules_tables():
    nb = pytest.importorskip("twilight_env.agents._rollout_nb")
    from twilight_env.agents import heuristic

    for kernel, rules in [("_STR", T.STRENGTH), ("_SOUL", T.SOULS), ("_SANCT", T.SANCTUARY), ("_HSOULS", T.HALF_SOULS),
                          ("_HMULT", T.HALF_MULT), ("_HMAXSTR", T.HALF_MAX_STRENGTH), ("_POP", T.HALF_COUNT),
                          ("_SEAT_CULT", T.SEAT_CULT), ("_MULT_OF_CULT", T.MULT_OF_CULT)]:
        assert getattr(nb, kernel) is rules, kernel
    assert nb._PURG == C.PURGATORY_MASK
    # the one table the kernel builds itself: the heuristic's order weights, the same numbers
    for n in range(1, 15):
        for k in range(1, n + 1):
            assert tuple(nb._W[n, k, :n]) == heuristic._W[n][k]


def test_encoding_kernel_reads_the_layout_and_rules_tables():
    nb = pytest.importorskip("twilight_env.obs._encoding_nb")
    from twilight_env.obs import encoding, layout

    assert nb._HSOULS is T.HALF_SOULS and nb._HMULT is T.HALF_MULT and nb._POP is T.HALF_COUNT
    np.testing.assert_array_equal(nb._LOW, [-1] + [(b & -b).bit_length() - 1 for b in range(1, 256)])
    for name in ("NC", "SEATS", "SEAT_SIZE", "HAND", "COUNTS", "TRICK", "GONE", "PHASE", "ROLE", "SIDE", "TOTALS"):
        assert getattr(nb, "_" + name) == getattr(layout, name) == getattr(encoding, name), name
    assert encoding._ROLE_3P is layout.ROLE_3P and encoding._ROLE_4P is layout.ROLE_4P
    # the Moon seats (R2.1: 1 and 3; R7.1: the solo 0 and the new moon 2), from the engine's seat cults
    assert (layout.MOON_SEATS_4P, layout.MOON_SEATS_3P) == (0b1010, 0b0101)
    assert (nb._MOON_4P, nb._MOON_3P) == (encoding._MOON_4P, encoding._MOON_3P) == (0b1010, 0b0101)


def test_batch_engine_tables_equal_the_rules_tables():
    from twilight_env.envs import vector

    for name in ("HALF_SOULS", "HALF_MULT", "HALF_COUNT"):
        np.testing.assert_array_equal(getattr(vector, name), getattr(T, name))


# -- the best card so far (R4.1) -----------------------------------------------------------

def test_trick_so_far_ties_go_to_the_earlier_card():
    sc1, m3, m4, s5, sp, mp = (C.card_id(x) for x in ("SC1", "M3", "M4", "S5", "SP", "MP"))
    assert C.trick_so_far([sc1, m3], 0) == (-1, 0, 0)
    assert C.trick_so_far([m3, m4, s5], 3) == (1, 0, (1 << m3) | (1 << m4) | (1 << s5))  # souls all 1
    assert C.trick_so_far([m3, sc1, m4], 3)[:2] == (6, 1)
    assert C.trick_so_far([m3, sp, mp, sc1], 4)[:2] == (7, 1)  # the first Purgatory (R4.3)
    assert C.trick_so_far([m3], 1, pending=1 << sc1)[2] == (1 << m3) | (1 << sc1)


def test_users_call_the_rules_trick_so_far():
    """The heuristic, the network features, the solver, the deal log and the batch engine's
    ``set_states`` read the rules' function (no copy of their own)."""
    from twilight_env.agents import heuristic, solver
    from twilight_env.agents.nn import features
    from twilight_env.envs import vector_engine
    from twilight_env.records import deal_log

    for mod in (heuristic, features, solver, deal_log, vector_engine):
        assert mod.trick_so_far is C.trick_so_far, mod.__name__
