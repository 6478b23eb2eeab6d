"""The Twilight rules engine: deal state, legal actions, tricks, scoring, matches.

The engine is one import, ``twilight_env.rules.engine``, over four modules that hold the code
(every public name of theirs is importable from here):

- :mod:`twilight_env.rules.hands`: hand masks, explicit deals checked, random deals (R2.3);
- :mod:`twilight_env.rules.state`: the rules ``_Rules``, :class:`PurePythonState`, the
  compiled :class:`State`, :class:`Config`, the action encoding;
- :mod:`twilight_env.rules.reduced`: :class:`ReducedState`, the reduced decks;
- :mod:`twilight_env.rules.match`: :class:`Match`, deals until the target (R2.4, R6-R8).

Pure modules: they import only the standard library, NumPy, the sibling ``cards`` and
``scoring`` modules and each other. The engine speaks in seats (0..3) and phases; agent names exist
only in the PettingZoo adapter.

Representation
--------------
Hands, piles and captured cards are 28-bit int masks (bit ``i`` = card id ``i``), and
legal-move lists come from precomputed tables: ``cards.HALF_IDS`` (card ids of a
14-bit half mask) and ``state._REQUESTS_BY`` (requests allowed by ``State.held``, an 8-bit
mask of which seat holds which cult, R3.5). A state is a small mutable object: its
:meth:`apply` changes it in place and :meth:`clone` copies it (a handful of ints and four
short lists). The functional :func:`apply_action` (clone, then apply) is there for callers
that want a new state. We chose a mutable state over a frozen dataclass for speed: a
random-play step then allocates only the history record, and searches clone only where
they branch; building a frozen dataclass per step runs ``object.__setattr__`` for every
field. ``benchmarks/engine_speed.py`` measures random play and clone cost against
OpenSpiel, and the design choice itself: the allocation one frozen-dataclass step cannot
avoid (``dataclasses.replace``) costs several times our whole in-place ``apply``.

Two classes hold the same fields and follow the same rules, written once, in Python, in
``_Rules``:

- :class:`PurePythonState`: the rules as written here, in plain Python;
- :class:`State` (what every other module uses): the same class with a compiled core,
  ``twilight_env/rules/_engine_c.c``, built at install time when a C compiler is present. The
  core runs the hot path of ``apply``, ``legal_actions`` and ``done``: a legal plain-int
  action on a state whose fields are all set. It hands every other case (an illegal
  action, a NumPy integer, a state built field by field without ``held``) to the Python
  methods, so errors and odd inputs behave exactly as in :class:`PurePythonState`.
  Without the core (no compiler, or ``TWILIGHT_ENV_PURE_PYTHON=1``), ``State`` is
  :class:`PurePythonState`; :func:`backend` says which. The parity harness,
  ``tests/rules/test_parity.py``, plays both against the rules reference
  (:mod:`twilight_env.rules.reference`) and compares every field after every action.

When the core is built these are two classes, so a check of the type of a state, in
either engine, is ``isinstance(x, DealState)`` (an ABC registered for both).

Action encoding (``docs/API.md``, Actions)
------------------------------------------
| action | meaning |
|--------|---------|
| 0..27  | play that card id from the acting hand (the chooser's own hand in the choose phase, the holder's in the hold phase) |
| 28, 29, 30 | as chooser, request the seat at offset +1, +2, +3 in play order (R3.2) |

Choices where the rule texts are silent (R9)
-------------------------------------------
- 4 players: the dealer passes to the left after each deal (R2.4); the seat after the
  dealer leads. Seats 0 and 2 are Sun, seats 1 and 3 Moon (R2.1).
- 3 players: seats per deal are 0 = solo (Moon), 1 = Sun player on the solo's left,
  2 = new moon (Moon, open hand), 3 = Sun player on the solo's right (R7.2). The solo
  leads the first trick and decides for the new-moon seat (R7.3). Solo rotation
  p0, p2, p1, ... (R7.4).
- A tie at or above the target plays another deal (R6.1, R7.5). In 3 players the two
  Sun players of a ``fixed_solo`` match form one side, so they never "tie" each other;
  they share one score line, so their starting totals must be equal.
- All played cards are public history (perfect recall).
"""

from __future__ import annotations

from twilight_env.rules.cards import (  # noqa: F401  (re-exported: the card tables the engine's callers read here)
    CARDS,
    CULT_MASK,
    HALF_IDS,
    MOON,
    NUM_CARDS,
    PURGATORY_MASK,
    STRENGTH,
    SUN,
    SUN_MASK,
    card_id,
    codes_of,
    deck_mask,
)
from twilight_env.rules.hands import (  # noqa: F401  (re-exported)
    CARD_BIT, HAND_SIZE, NUM_SEATS, NUM_TRICKS, hands_to_codes, held_mask, random_hands, validate_deal)
from twilight_env.rules.match import GOALS_333, Match, fixed_solo_scores_problem  # noqa: F401  (re-exported)
from twilight_env.rules.reduced import ReducedState  # noqa: F401  (re-exported)
from twilight_env.rules.scoring import score_mask  # noqa: F401  (re-exported)
from twilight_env.rules.state import (  # noqa: F401  (re-exported)
    ACTION_TYPES, CHOOSE, HOLD, NEW_MOON, NUM_ACTIONS, PHASE_NAMES, REQUEST_BASE, SEAT_CULT_3, SEAT_CULT_4, Config,
    DealState, PurePythonState, State, action_or_none, apply_action, as_action, backend, legal_actions,
    pure_python_asked)
