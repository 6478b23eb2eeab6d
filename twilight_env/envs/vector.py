"""A batch engine: B Twilight deals held as arrays and stepped with one call.

The scalar :class:`~twilight_env.rules.engine.State` is the reference; :class:`VectorEngine`
plays the same rules (R3-R5, R7.1-R7.3) on B deals at once, and
:class:`TwilightVectorEnv` wraps it as a vectorized RL environment with auto-reset.
The parity harness (``tests/rules/test_parity.py``) plays random deals through both engines
and the rules reference action by action and checks that masks, tricks, piles and scores agree.

Backends
--------
The kernels are written once against a small array-ops shim, so the same code runs on
NumPy arrays (the default; this module imports only NumPy at load time) or on torch
tensors, CPU or CUDA (``backend="torch"``; torch is imported only then). A step is a
fixed sequence of whole-batch array operations: no Python loop over the batch and no
data-dependent branch. Lookup tables (strength, souls, multipliers, the flags of a 14-bit
half mask) are built once in NumPy and copied to the backend. Per-row reads and writes
of ``(B, k)`` arrays go through flat indices ``row * k + column`` (NumPy's ``take`` and
flat assignment are several times faster than 2-D fancy indexing).

State arrays (``B`` = ``num_envs``; masks are 28-bit ints, bit ``i`` = card id ``i``)
----------------------------------------------------------------------------------
| name | shape, dtype | meaning |
|------|--------------|---------|
| ``hands`` | (B, 4) int64 | cards each seat holds now |
| ``leader``, ``first_leader`` | (B,) int64 | seat leading this trick / the first trick |
| ``trick`` | (B,) int64 | tricks finished, 0..7 (7 = deal over) |
| ``place`` | (B,) int64 | places filled in this trick, 0..3 |
| ``phase`` | (B,) int64 | 0 choose, 1 hold (R3.2) |
| ``holder`` | (B,) int64 | requested seat in the hold phase, else -1 |
| ``trick_code`` | (B,) int64 | this trick by place ``p``: bits ``8p..8p+4`` card id + 1 (0 empty), bits ``8p+5..8p+6`` holder seat; read it as ``cards`` / ``holders`` (B, 4) |
| ``trick_mask`` | (B,) int64 | cards of this trick |
| ``best``, ``best_place`` | (B,) int64 | strength and place of the card leading this trick (R4.1); -1 / 0 when empty |
| ``pending`` | (B,) int64 | the pending Purgatory pile (R4.3) |
| ``neutral`` | (B,) int64 | cards left neutral by a last-trick Purgatory (R4.4) |
| ``captured`` | (B, 4) int64 | cards taken by each seat (R4.2) |
| ``played_for`` | (B, 4) int64 | cards played for each seat as chooser (R3.3) |
| ``held_by`` | (B, 4) int64 | cards that left each seat's hand (R3.2) |
| ``trick_of`` | (B, 7) int64 | cards played in each trick 0..6 (the current one included) |
| ``history`` | (B, 28) int8 | card ids in play order, -1 after the last play |

About 310 bytes per deal (:meth:`VectorEngine.nbytes_per_deal`); ``history`` carries one
extra column (index 28) that absorbs the writes of rows that played no card.

Action encoding (``docs/API.md``, Actions): ``0..27`` play that card id from the acting hand,
``28 + o - 1`` request the seat at offset ``o`` (1..3) from the chooser (R3.2).

Usage
-----
The RL view (deal episodes, auto-reset; see :class:`TwilightVectorEnv` for the reward
convention)::

    env = TwilightVectorEnv(num_envs=1024, num_players=4, seed=0)
    obs, mask, info = env.reset()          # (B, OBS_SIZE) float32, (B, 31) int8
    for _ in range(1000):
        actions = policy(obs, mask)        # (B,) ints, legal where mask == 1
        obs, mask, reward, done, info = env.step(actions)   # reward (B, 4) per seat

The engine view, for rollouts and evaluation: ``VectorEngine.reset`` (random or given
deals), ``legal_bits`` / ``legal_mask``, ``random_actions``, ``apply`` (optionally on a
subset of rows), ``observe`` (any viewer seats), ``side_scores`` / ``seat_scores`` /
``returns``, and ``to_state`` / ``set_states`` to move rows to and from the scalar engine.

Choices
-------
- Finished rows stay finished in :class:`VectorEngine` (an action there is an error)
  until ``reset``; :class:`TwilightVectorEnv` re-deals them in the step that ends them.
- The first leader of a new deal (4 players) passes to the next seat in each row
  (the dealer passes left, R2.4); in 3 players the solo, seat 0, always leads (R7.2).
- Randomness: deals and the env's random actions come from one
  ``numpy.random.Generator``; the torch backend draws from the same generator (so both
  backends play the same games from the same seed) unless given a ``torch.Generator``.

Speed
-----
``benchmarks/batch_speed.py`` (one CPU thread, CPU seconds, best of 3 rounds) on a 2-core
machine shared with other jobs, so figures moved by tens of percent between runs; in
the same runs OpenSpiel's oh_hell random play made 0.2M decisions/s. Without
observations the batch engine plays 1.5M-1.7M decisions/s at B = 1024 and 3.2M-4.9M at
B = 8192 (8x and 15x-25x OpenSpiel, 3.6x and 7x-12x our scalar engine). With the full
float32 observation of every deciding player (968 floats, 3.9 KB written per decision)
it plays 0.28M-0.47M decisions/s at B >= 1024: 1.3x-2.2x OpenSpiel's plain random play
(short of the 20x target), 13x-25x OpenSpiel with ``information_state_tensor``, 5x-9x our
scalar engine with ``encode_observation``. The packed form (``observe_packed``, 173 bytes
per decision) reaches 0.6M-0.78M (3x-4x OpenSpiel). Per row and step at B = 1024,
writing the float32 observation costs about 0.5 microseconds, building it about 0.6-0.8,
``apply`` 0.2. Small batches pay NumPy's per-call overhead (about 300 calls per env step):
B = 1 is far slower than the scalar engine; B >= 1024 is where the batch engine pays.
"""

from __future__ import annotations

# the code lives in three modules; every name below stays importable from here
from twilight_env.envs.vector_engine import VectorEngine  # noqa: F401  (re-exported)
from twilight_env.envs.vector_env import TwilightVectorEnv  # noqa: F401  (re-exported)
from twilight_env.envs.vector_ops import (  # noqa: F401  (re-exported: the tables and array ops)
    ALL_CARDS, CULT_MASK_X, DUMP, HALF, HALF_BITS, HALF_COUNT, HALF_MASK, HALF_MULT, HALF_SELECT, HALF_SOULS,
    POW2_X, SEAT_CULT, STRENGTH_X, check_int_at_least, deals_to_hands, make_ops, random_hands_batch)


__all__ = ["VectorEngine", "TwilightVectorEnv", "make_ops", "random_hands_batch", "deals_to_hands",
           "HALF_BITS", "HALF_SOULS", "HALF_MULT", "HALF_COUNT", "HALF_SELECT"]
