"""What one seat may know (R2.5, R7.1), and determinizations of it.

An :class:`InfoSet` is built from a deal :class:`~twilight_env.rules.engine.State` by copying
only public facts and the hands the viewer sees; it keeps no reference to the state, so
the true deal cannot be reached from it. Search agents draw worlds with
:meth:`InfoSet.sample_world` and turn them into engine states with
:meth:`InfoSet.world_state`, then search forward with the engine's action encoding.

Known to a viewer:
- its own hand; in 3 players the new moon's open hand (every viewer, R7.1), which the
  solo also controls (R7.3);
- every seat's Sun and Moon card counts (card backs, R2.5);
- every play: chooser, holder (so every request) and card; every trick's result, the
  pending pile, cards each seat took, the neutral pile;
- the match context it was given (totals, target), if any.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from twilight_env.rules.cards import ALL_MASK, CARDS, CULT_MASK, MOON_MASK, SUN_MASK, codes_of, ids_of
from twilight_env.rules.engine import NEW_MOON, NUM_TRICKS, PHASE_NAMES, ReducedState, State, held_mask


class InfoSet:
    """The information set of one player at one moment of a deal.

    Attributes:
        seat: the viewer's own seat (0..3). In 3 players the solo is seat 0.
        num_players: 3 or 4.
        seat_cult: cult (0 Sun, 1 Moon) of each seat.
        acting_seat: seat whose choice or card the next action is about (chooser or holder).
        deciding_seat: seat that decides next (3p: the solo, 0, for the new moon).
        to_act: True when this viewer decides the next action.
        phase: ``"choose"`` or ``"hold"``.
        leader, trick, place, chooser, holder: as in the engine (holder -1 in choose phase).
        hand: the viewer's own cards (codes, id order).
        open_hand: 3 players: the new moon's cards (codes); 4 players: ``[]``.
        known_masks: tuple of 4 masks, the cards the viewer sees in each seat's hand.
        counts: tuple of 4 ``(sun, moon)`` pairs, cards each seat holds now.
        history: list of ``(chooser, holder, card_id)`` in play order (:meth:`history_codes`
            gives card codes).
        tricks: list of ``(leader, taker)`` per finished trick; taker None if it went pending.
        trick_cards: list of 4 card ids of the current trick by place (-1 empty).
        trick_holders: list of 4 holder seats by place (-1 empty).
        pending: mask of the pending Purgatory pile; captured: 4 masks; neutral: mask.
        played: mask of every card played so far.
        legal_actions: the legal actions if ``to_act``, else ``()``.
        totals, target: match context (score lines, target) or None.
        num_tricks, deck: tricks in the deal and the mask of its cards (7 and all 28, or
            a reduced deck's, :class:`~twilight_env.rules.engine.ReducedState`); public.
    """

    __slots__ = ("seat", "num_players", "seat_cult", "acting_seat", "deciding_seat", "to_act",
                 "phase", "leader", "first_leader", "trick", "place", "chooser", "holder",
                 "known_masks", "hand_counts", "history", "trick_cards", "trick_holders",
                 "pending", "captured", "neutral", "played", "legal_actions", "totals", "target",
                 "num_tricks", "deck")

    def __init__(self, state: State, seat: int, totals: Sequence[int] | None = None,
                 target: int | None = None):
        if not 0 <= seat < 4 or (state.num_players == 3 and seat == NEW_MOON):
            raise ValueError(f"seat must be a seat of a player (0..3, not the new moon 2 in 3 players), got {seat!r}")
        self.seat = seat
        self.num_players = state.num_players
        self.seat_cult = state.seat_cult
        done = state.done
        self.acting_seat = -1 if done else state.acting_seat
        self.deciding_seat = -1 if done else state.deciding_seat
        self.to_act = self.deciding_seat == seat
        self.phase = PHASE_NAMES[state.phase]
        self.leader = state.leader
        self.first_leader = state.first_leader
        self.trick = state.trick
        self.place = state.place
        self.chooser = -1 if done else state.chooser
        self.holder = state.holder
        known = [0, 0, 0, 0]
        known[seat] = state.hands[seat]
        if state.num_players == 3:
            known[NEW_MOON] = state.hands[NEW_MOON]
        self.known_masks = tuple(known)
        self.hand_counts = state.counts()
        self.history = list(state.history)
        self.trick_cards = list(state.cards)
        self.trick_holders = list(state.holders)
        self.pending = state.pending
        self.captured = tuple(state.captured)
        self.neutral = state.neutral
        played = 0
        for _, _, c in state.history:
            played |= 1 << c
        self.played = played
        self.legal_actions = state.legal_actions() if self.to_act else ()
        self.totals = None if totals is None else tuple(totals)
        self.target = target
        self.num_tricks = state.num_tricks
        self.deck = state.deck

    # -- public views (docs/API.md, Information sets) -----------------------------
    @property
    def hand(self) -> list[str]:
        """The viewer's own cards, as codes in id order."""
        return codes_of(self.known_masks[self.seat])

    @property
    def open_hand(self) -> list[str]:
        """3 players: the new moon's face-up hand (codes); 4 players: empty."""
        return codes_of(self.known_masks[NEW_MOON]) if self.num_players == 3 else []

    @property
    def counts(self) -> tuple[tuple[int, int], ...]:
        """Per seat ``(sun, moon)`` cards held now (R2.5)."""
        return self.hand_counts

    @property
    def tricks(self) -> list[tuple[int, int | None]]:
        """Per finished trick: ``(leader, taker)``, taker None when it went pending (R4.3)."""
        out = []
        # replay only the public plays; the hands don't matter
        st = State((ALL_MASK,) * 4, self.first_leader, self.num_players)
        for chooser, holder, card in self.history:
            lead = st.leader
            st._play(chooser, holder, card)
            if st.place == 0:
                taken = any(st.captured[s] >> card & 1 for s in range(4))
                out.append((lead, st.leader if taken else None))
        return out

    @property
    def unseen_mask(self) -> int:
        """Cards not played and not in a hand the viewer sees."""
        k = self.known_masks
        return self.deck & ~self.played & ~(k[0] | k[1] | k[2] | k[3])

    def history_codes(self) -> list[tuple[int, int, str]]:
        """History as ``(chooser, holder, card_code)`` tuples."""
        return [(c, h, CARDS[x]) for c, h, x in self.history]

    # -- determinization ----------------------------------------------------------
    def sample_hands(self, rng: np.random.Generator) -> list[int]:
        """One world as 4 hand masks, uniform over all consistent deals of the unseen cards.

        Consistent means: the seen hands as they are, and each hidden hand with exactly
        its public Sun and Moon counts (R2.5). Played cards and requests add no other
        constraint, so shuffling each cult's unseen cards among the hidden seats' slots is
        uniform.
        """
        hands = list(self.known_masks)
        unseen = self.unseen_mask
        hidden = [s for s in range(4) if s != self.seat and not (self.num_players == 3 and s == NEW_MOON)]
        for cult, cmask in ((0, SUN_MASK), (1, MOON_MASK)):
            pool = list(ids_of(unseen & cmask))
            if not pool:
                continue
            perm = rng.permutation(len(pool))
            i = 0
            for s in hidden:
                n = self.hand_counts[s][cult]
                m = 0
                for j in perm[i:i + n]:
                    m |= 1 << pool[j]
                hands[s] |= m
                i += n
            if i != len(pool):
                raise AssertionError("card counts and unseen cards disagree")
        return hands

    def sample_world(self, rng: np.random.Generator) -> list[list[str]]:
        """Four hands by seat (card codes) drawn uniformly from all deals of the unseen
        cards consistent with this information set (``docs/API.md``, Information sets)."""
        return [codes_of(h) for h in self.sample_hands(rng)]

    def world_state(self, world: Sequence[Sequence[str]] | Sequence[int]) -> State:
        """A full engine :class:`State` for a world (4 hands of codes, or 4 masks), with
        this information set's public history, ready to search with ``apply``.

        Raises:
            ValueError: if the world contradicts what the viewer knows.
        """
        hands = [h if isinstance(h, (int, np.integer)) else _mask(h) for h in world]
        if len(hands) != 4:
            raise ValueError("a world is 4 hands by seat")
        for s in range(4):
            if hands[s] & self.known_masks[s] != self.known_masks[s]:
                raise ValueError(f"world disagrees with the seen hand of seat {s}")
            sun, moon = bin(hands[s] & SUN_MASK).count("1"), bin(hands[s] & MOON_MASK).count("1")
            if (sun, moon) != self.hand_counts[s]:
                raise ValueError(f"world gives seat {s} {sun} Sun and {moon} Moon cards; it holds {self.hand_counts[s]}")
        if (hands[0] | hands[1] | hands[2] | hands[3]) & self.played:
            raise ValueError("world holds a card already played")
        if self.num_tricks == NUM_TRICKS:
            st = State.__new__(State)
        else:
            st = ReducedState.__new__(ReducedState)
            st.num_tricks = self.num_tricks
            st.deck = self.deck
        st.num_players = self.num_players
        st.seat_cult = self.seat_cult
        st.hands = [int(h) for h in hands]
        init = st.hands[:]
        for _, holder, card in self.history:
            init[holder] |= 1 << card
        st.initial_hands = tuple(init)
        st.leader = self.leader
        st.first_leader = self.first_leader
        st.trick = self.trick
        st.place = self.place
        st.phase = 0 if self.phase == "choose" else 1
        st.holder = self.holder
        st.cards = list(self.trick_cards)
        st.holders = list(self.trick_holders)
        st.pending = self.pending
        st.captured = list(self.captured)
        st.neutral = self.neutral
        st.history = list(self.history)
        st.held = held_mask(st.hands)
        return st

    def sample_state(self, rng: np.random.Generator) -> State:
        """A determinization: :meth:`world_state` of :meth:`sample_hands`."""
        return self.world_state(self.sample_hands(rng))

    def __repr__(self) -> str:
        return (f"InfoSet(seat={self.seat}, trick={self.trick}, place={self.place}, phase={self.phase}, "
                f"hand={self.hand}, open_hand={self.open_hand}, counts={self.counts})")


def _mask(hand) -> int:
    from twilight_env.rules.cards import mask_of
    return mask_of(hand)
