"""Helpers for the engine tests: deals and plays written with card codes.

A place is written ``"SC1"`` (the chooser plays SC1 from its own hand) or ``"3:M5"``
(the chooser requests seat 3, which plays M5 for it), R3.2.
"""

from __future__ import annotations

import numpy as np

from twilight_env.rules.cards import CARDS, card_id
from twilight_env.rules.engine import REQUEST_BASE, State

# A 4-player deal in which every hand holds its own cult only (R2.1: seats 0, 2 Sun;
# 1, 3 Moon), so every chooser can always play its own card and each trick below is
# written as the four cards in place order, led by seat 0.
SWEEP_DEAL = [
    ["SP", "SC1", "SC2", "SC3", "SC4", "SC5", "S4"],
    ["MP", "MC1", "MC2", "MC3", "MC4", "MC5", "M6"],
    ["S3", "S5", "S7", "SA", "ST", "SO", "S6"],
    ["MA", "MT", "MO", "M3", "M4", "M5", "M7"],
]
"""Seat 0 leads; with :data:`SWEEP_TRICKS` seat 0 takes every trick (Sun scores 360)."""
SWEEP_TRICKS = [
    ["SP", "MP", "S3", "MA"],    # two Purgatories: pending, seat 0 (first P) leads (R4.3)
    ["SC1", "MC1", "S5", "MT"],  # SC1 = MC1 in strength: the earlier wins (R4.1), takes the pile
    ["SC2", "MC2", "S7", "MO"],
    ["SC3", "MC3", "SA", "M3"],
    ["SC4", "MC4", "ST", "M4"],
    ["SC5", "MC5", "SO", "M5"],
    ["S4", "M6", "S6", "M7"],    # all souls: equal strength, the first wins
]

NEUTRAL_END_TRICKS = [
    ["SC1", "MC1", "S3", "MA"],
    ["SC2", "MC2", "S5", "MT"],
    ["SC3", "MC3", "S7", "MO"],
    ["SC4", "MC4", "SA", "M3"],
    ["SC5", "MC5", "ST", "M4"],
    ["S4", "MP", "SO", "M5"],   # pending: seat 1 leads the last trick
    ["M6", "S6", "M7", "SP"],   # a Purgatory in the 7th trick: both tricks neutral (R4.4)
]
"""With :data:`SWEEP_DEAL`: seat 0 takes tricks 1-5 (32 souls, Altar + Temple): Sun 96, Moon 0."""


def swap_cults(hands):
    """The same deal with Sun and Moon exchanged (for 3 players, where seat 0 is Moon)."""
    flip = {"S": "M", "M": "S"}
    return [[flip[c[0]] + c[1:] for c in hand] for hand in hands]


def request_action(chooser: int, holder: int) -> int:
    """The action by which ``chooser`` requests ``holder`` (28, 29, 30 = offset +1, +2, +3)."""
    offset = (holder - chooser) % 4
    assert offset in (1, 2, 3), "a chooser cannot request itself"
    return REQUEST_BASE + offset - 1


def place_actions(state: State, place: str) -> list[int]:
    """Actions that play one place written as ``"SC1"`` or ``"3:M5"`` from ``state``."""
    seat, _, code = place.rpartition(":")
    if seat:
        return [request_action(state.chooser, int(seat)), card_id(code)]
    return [card_id(code)]


def play(state: State, *places: str) -> State:
    """Apply the places in order (in place) and return the state."""
    for place in places:
        for a in place_actions(state, place):
            state.apply(a)
    return state


def play_tricks(state: State, tricks) -> State:
    """Apply a list of tricks, each a list of 4 places."""
    for trick in tricks:
        play(state, *trick)
    return state


def ids(*codes: str) -> set[int]:
    return {card_id(c) for c in codes}


def codes(mask: int) -> set[str]:
    """Card codes of a 28-bit mask, as a set."""
    return {CARDS[i] for i in range(28) if mask >> i & 1}


def random_play(state: State, rng: np.random.Generator, check=None) -> State:
    """Play ``state`` to the end with uniformly random legal actions; ``check(state)``
    is called before every action."""
    while not state.done:
        if check is not None:
            check(state)
        legal = state.legal_actions()
        state.apply(legal[int(rng.integers(len(legal)))])
    return state
