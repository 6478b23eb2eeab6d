"""The derived card tables as NumPy arrays, for the compiled kernels and the batch engine.

Every array here is built at import time from the one Python table of
:mod:`twilight_env.rules.cards` (or the engine's seat cults), so the numba kernels
(``twilight_env.agents._solver_nb``, ``_rollout_nb``, ``twilight_env.obs._encoding_nb``)
and the batch engine (``twilight_env.envs.vector``) hold no copy of their own. All are
int64 and read-only.

| array | shape | meaning | rule | built from |
|-------|-------|---------|------|------------|
| ``STRENGTH`` | (28,) | strength of each card id | R1, R4.1 | ``cards.STRENGTH`` |
| ``SOULS`` | (28,) | souls counted at scoring | R5.1 | ``cards.SOULS`` |
| ``MULTIPLIER`` | (28,) | Altar 1, Temple 2, Obelisk 3, else 0 | R5.2 | ``cards.MULTIPLIER`` |
| ``SANCTUARY`` | (28,) | 1 for a sanctuary, else 0 | R5.2 | ``cards.SANCTUARY`` |
| ``MULT_OF_CULT`` | (2, 28) | ``[cult, card]``: the card's multiplier for a side of that cult | R5.2 | ``cards.MULT_OF_CULT`` |
| ``STRONG_FIRST`` | (28,) | cult ``c``'s ids strongest first at ``14c..14c+13`` | R4.1, R5 | ``cards.STRONG_FIRST`` |
| ``SEAT_CULT`` | (2, 4) | ``[variant, seat]``: variant 0 = 4 players, 1 = 3 players | R2.1, R7.1 | ``engine.SEAT_CULT_4``, ``SEAT_CULT_3`` |
| ``HALF_SOULS`` | (16384,) | souls of a 14-bit half mask | R5.1 | ``cards.HALF_SOULS`` |
| ``HALF_MULT`` | (16384,) | sanctuary multipliers of a half mask | R5.2 | ``cards.HALF_MULT`` |
| ``HALF_COUNT`` | (16384,) | cards in a half mask | R2.5 | ``cards.HALF_COUNT`` |
| ``HALF_MAX_STRENGTH`` | (16384,) | strongest strength in a half mask, -1 when empty | R4.1 | ``cards.HALF_MAX_STRENGTH`` |
| ``LOWBIT`` | (16384,) | lowest card offset of a half mask (its strongest card), -1 when empty | R1 | ``cards.HALF_IDS`` |

numba reads a global array as a compile-time constant and caches the compiled code on
disk keyed by the kernel's own source file (``cache=True``): after a change of a table
here or in ``cards``, delete the kernels' ``__pycache__/*.nbi``/``*.nbc`` files (or edit
the kernel files) so that they compile again.
``tests/agents/test_card_tables.py`` checks every array against its Python table.
"""

from __future__ import annotations

import numpy as np

from twilight_env.rules import cards as _cards
from twilight_env.rules.engine import SEAT_CULT_3, SEAT_CULT_4


def _frozen(values) -> np.ndarray:
    a = np.array(values, dtype=np.int64)
    a.setflags(write=False)
    return a


STRENGTH = _frozen(_cards.STRENGTH)
SOULS = _frozen(_cards.SOULS)
MULTIPLIER = _frozen(_cards.MULTIPLIER)
SANCTUARY = _frozen(_cards.SANCTUARY)
MULT_OF_CULT = _frozen(_cards.MULT_OF_CULT)
STRONG_FIRST = _frozen(_cards.STRONG_FIRST[0] + _cards.STRONG_FIRST[1])
SEAT_CULT = _frozen([SEAT_CULT_4, SEAT_CULT_3])
HALF_SOULS = _frozen(_cards.HALF_SOULS)
HALF_MULT = _frozen(_cards.HALF_MULT)
HALF_COUNT = _frozen(_cards.HALF_COUNT)
HALF_MAX_STRENGTH = _frozen(_cards.HALF_MAX_STRENGTH)
LOWBIT = _frozen([ids[0] if ids else -1 for ids in _cards.HALF_IDS[0]])

__all__ = ["STRENGTH", "SOULS", "MULTIPLIER", "SANCTUARY", "MULT_OF_CULT", "STRONG_FIRST", "SEAT_CULT",
           "HALF_SOULS", "HALF_MULT", "HALF_COUNT", "HALF_MAX_STRENGTH", "LOWBIT"]
