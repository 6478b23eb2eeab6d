"""The observation vector's layout: the offset of every field (the table in
:mod:`twilight_env.obs.encoding`'s docstring says what each holds) and the role flags.

One definition read by the Python encoder (:mod:`twilight_env.obs.encoding`), the
compiled one (:mod:`twilight_env.obs._encoding_nb`, as compile-time constants) and the
batch encoder (:mod:`twilight_env.obs.vector_obs`). It imports only the rules layer, so
the compiled encoder does not import the Python one.
"""

from __future__ import annotations

from twilight_env.rules.cards import MOON, NUM_CARDS
from twilight_env.rules.engine import NUM_TRICKS, SEAT_CULT_3, SEAT_CULT_4

# ---------------------------------------------------------------------------------
# Layout constants (flags first, then scalars); see encoding's module table.
# ---------------------------------------------------------------------------------
NUM_REL = 4          # relative seats 0..3
NC = NUM_CARDS       # 28 cards
COUNT_SLOTS = 8      # one-hot of a card count 0..7

# one record per relative seat: offsets inside the record
HAND = 0                                   # [card] cards the viewer sees in that hand (own hand, open hand)
PLAYED_FOR = HAND + NC                     # [card] played for that seat as chooser (R3.3)
HELD_BY = PLAYED_FOR + NC                  # [card] came from that seat's hand (own play or as holder, R3.2)
TAKEN = HELD_BY + NC                       # [card] taken by that seat (R4.2)
COUNTS = TAKEN + NC                        # [cult, n] one-hot: that seat holds n (0..7) Sun / Moon cards (R2.5)
SEAT_SIZE = COUNTS + 2 * COUNT_SLOTS       # 128 flags per seat record

SEATS = 0                                  # [rel, SEAT_SIZE] the seat records, relative seat 0 first
TRICK = SEATS + NUM_REL * SEAT_SIZE        # [place, 36]: card (28), chooser rel (4), holder rel (4) of the current trick
TRICK_PLACE_SIZE = NC + 2 * NUM_REL        # 36 flags per place of the current trick
GONE = TRICK + 4 * TRICK_PLACE_SIZE        # [card] played already (this trick included)
PENDING = GONE + NC                        # [card] in the pending Purgatory pile (R4.3)
TRICK_OF = PENDING + NC                    # [trick, card] card was played in trick 0..6
PHASE = TRICK_OF + NUM_TRICKS * NC         # [3] choose, hold, deal over
TO_ACT = PHASE + 3                         # [1] the viewer decides the pending action
ACTING = TO_ACT + 1                        # [rel] seat the pending action is about (chooser or holder); 0s when over
CHOOSER = ACTING + NUM_REL                 # [rel] chooser of the current place (R3.1); 0s when over
HOLDER = CHOOSER + NUM_REL                 # [rel] requested holder in the hold phase (R3.2); else 0s
LEADER = HOLDER + NUM_REL                  # [rel] leader of the current trick (R2.4, R4.2, R4.3)
TRICK_NO = LEADER + NUM_REL                # [8] one-hot tricks finished 0..7
PLACE = TRICK_NO + NUM_TRICKS + 1          # [4] one-hot places filled 0..3
ROLE = PLACE + 4                           # [5] viewer: 4p Sun side, 4p Moon side, 3p solo, 3p left Sun, 3p right Sun
NEW_MOON_DECISION = ROLE + 5               # [1] the pending decision is for the new-moon seat (R7.3)
NEW_MOON_AT = NEW_MOON_DECISION + 1        # [rel] where the new moon sits (3 players); 0s in 4 players
MOON_SEAT = NEW_MOON_AT + NUM_REL          # [rel] that seat is of the Moon cult (R2.1, R7.1)
MATCH = MOON_SEAT + NUM_REL                # [1] match episode: TOTALS and TARGET are filled
NUM_BITS = MATCH + 1                       # number of 0/1 flags

SIDE = NUM_BITS                            # [2 sides, 4]: own side then other side: souls/60, own-cult
SIDE_FIELDS = 4                            #   multiplier/6, denied (other cult's sanctuaries)/6, score/360 (R5)
TOTALS = SIDE + 2 * SIDE_FIELDS            # [rel] match total of that seat's score line / target, capped at 4
TARGET = TOTALS + NUM_REL                  # [1] match target / 1000, capped at 4
OBS_SIZE = TARGET + 1
"""Length of the observation vector."""
NUM_SCALARS = OBS_SIZE - NUM_BITS

TOTALS_CAP = 4.0
"""Upper bound of the TOTALS and TARGET scalars."""

ROLE_4P = (0, 1, 0, 1)          # 4p: seat -> role bit (Sun side 0, Moon side 1) (R2.1)
"""4 players: the ``ROLE`` flag of each seat."""
ROLE_3P = (2, 3, -1, 4)         # 3p: solo 2, left Sun 3, right Sun 4 (seat 2 is never a viewer)
"""3 players: the ``ROLE`` flag of each seat (R7.2); seat 2, the new moon, never views."""
MOON_SEATS_4P = sum(1 << s for s in range(4) if SEAT_CULT_4[s] == MOON)
"""4 players: the Moon seats as a 4-bit set, bit ``s`` for seat ``s`` (1 and 3, R2.1); the
``MOON_SEAT`` flags are this set seen from the ego seat."""
MOON_SEATS_3P = sum(1 << s for s in range(4) if SEAT_CULT_3[s] == MOON)
"""3 players: the Moon seats as a 4-bit set (0 and 2: the solo and the new moon, R7.1)."""

__all__ = ["NUM_REL", "NC", "COUNT_SLOTS", "HAND", "PLAYED_FOR", "HELD_BY", "TAKEN", "COUNTS", "SEAT_SIZE", "SEATS",
           "TRICK", "TRICK_PLACE_SIZE", "GONE", "PENDING", "TRICK_OF", "PHASE", "TO_ACT", "ACTING", "CHOOSER",
           "HOLDER", "LEADER", "TRICK_NO", "PLACE", "ROLE", "NEW_MOON_DECISION", "NEW_MOON_AT", "MOON_SEAT", "MATCH",
           "NUM_BITS", "SIDE", "SIDE_FIELDS", "TOTALS", "TARGET", "OBS_SIZE", "NUM_SCALARS", "TOTALS_CAP",
           "ROLE_4P", "ROLE_3P", "MOON_SEATS_4P", "MOON_SEATS_3P"]
