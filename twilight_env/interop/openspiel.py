"""Twilight as an OpenSpiel game: ``pyspiel.load_game("python_twilight(players=3)")``.

Importing this module registers the Python game ``python_twilight`` with OpenSpiel
(``pip install open-spiel``; the ``test`` and ``bench`` extras install it). One
OpenSpiel episode is one deal (R2-R5, R7.1-R7.3), played by this package's engine.

Parameters
----------
| name | values (default) | meaning |
|---|---|---|
| ``players`` | 4 or 3 (4) | 4 players, or 3 with the solo and the new moon (R7) |
| ``three_player_scoring`` | ``"team"`` or ``"individual"`` (``"team"``) | how ``returns`` credit a 3-player deal (R7.5, R8) |
| ``goals_333`` | False | the R6.2 match rule; only ``False`` is accepted, as one deal has no match totals |
| ``fixed_solo`` | False | the R7.6 match rule; only ``False`` is accepted, for the same reason |
| ``tricks`` | 1..7 (7) | tricks per deal; fewer play the reduced deck of the engine's ``Config`` (``tricks`` cards a hand, each cult ``2 * tricks`` cards) |

The values are checked by the env's :class:`~twilight_env.rules.engine.Config`; a bad value,
or a match rule set to True, raises ``ValueError`` naming it.

Players and seats
-----------------
4 players: OpenSpiel player ``p`` sits at seat ``p`` (seats 0, 2 Sun; 1, 3 Moon, R2.1).
3 players: player 0 is the solo (seat 0, Moon) and also decides for the new moon
(seat 2, R7.3); players 1 and 2 are the Sun players at seats 1 and 3 (R7.2) -- the
env's ``player_0``..``player_2`` in a deal where ``player_0`` is solo.

Chance and actions
------------------
- 4 players: the first chance node draws the first leader (outcomes 0..3, uniform, as
  the env draws the dealer, R2.4). 3 players: the solo leads (R7.3); no such node.
- Then 28 chance nodes deal the cards one by one, seat 0's seven first, then seats 1,
  2, 3 (outcome = card id 0..27, uniform over the cards not dealt yet, R2.3). A reduced
  deck (``tricks`` < 7) deals its ``4 * tricks`` cards the same way, ``tricks`` to a seat.
  :func:`deal_state` plays these nodes for a given deal.
- Player actions are the env's: 0..27 play that card, 28/29/30 request the seat at
  offset +1/+2/+3 from the chooser (R3.2). At most 56 player actions (28 cards, 28
  requests).

Observations
------------
- ``observation_tensor(p)``: float32 ``(968,)``, exactly the env's observation of that
  player (``twilight_env.obs.encoding``, the layout table of ``docs/ENVIRONMENT.md``; deal episode, so the
  match fields are 0). All zeros while the cards are being dealt.
- ``information_state_tensor(p)``: ``(1080,)``: the observation, then ``[card, place]``
  (28 x 4) flags giving the place 0..3 of every played card within its trick, which makes
  the whole order of play recoverable (perfect recall).
- ``information_state_string(p)``: the player, the first leader, the cards dealt to the
  seats the player sees (its own; in 3 players also the new moon's open hand, R7.1) and
  the card backs (cult, R2.5) dealt to the others, then every player action in order (all
  plays and requests are public, R3.3).
- ``observation_string(p)``: the player's hand(s), every seat's counts, the current
  trick, the taken and pending cards and the deal scores so far.

Returns
-------
At a deal's end, as the env's rewards: (own side's deal points - the other side's) / 360
(R5); partners share it; in 3 players the solo gets (Moon - Sun) / 360 and each Sun
player (Sun - Moon) / 360. Under ``three_player_scoring="individual"`` (R8) each player
gets (own points - mean of the other three score lines, the new moon's included) / 360.
4 players are zero-sum; 3 players general-sum. 0 before the end.

``resample_from_infostate(p, sampler)`` draws a world uniformly from those consistent
with ``p``'s information set (:meth:`twilight_env.rules.infoset.InfoSet.sample_hands`, seeded
from ``sampler``) and replays the public actions on it, so OpenSpiel's ``ISMCTSBot``
can search this game.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pyspiel

from twilight_env.rules.cards import CARDS, MOON_MASK, NUM_CARDS, SUN_MASK, codes_of, deck_mask, ids_of
from twilight_env.obs.encoding import OBS_SIZE, encode_observation
from twilight_env.rules.engine import (HOLD, HAND_SIZE, NEW_MOON, NUM_ACTIONS, NUM_TRICKS, REQUEST_BASE, Config,
                                      ReducedState, State, validate_deal)
from twilight_env.rules.infoset import InfoSet

GAME_NAME = "python_twilight"
NUM_SEATS_CARDS = 4
"""Cards dealt per trick of the deal: one to each of the 4 seats (R2.3)."""
MAX_PLAYER_ACTIONS = 2 * NUM_CARDS
"""28 cards, each possibly after a request (R3.2)."""
INFO_STATE_SIZE = OBS_SIZE + NUM_CARDS * 4
"""Observation, then ``[card, place]`` flags of the played cards (1080)."""

_PARAMS = {"players": 4, "three_player_scoring": "team", "goals_333": False, "fixed_solo": False,
           "tricks": NUM_TRICKS}
_SEAT_OF_PLAYER = {4: (0, 1, 2, 3), 3: (0, 1, 3)}
_PLAYER_OF_SEAT = {4: (0, 1, 2, 3), 3: (0, 1, 0, 2)}
_SEEN_SEATS = {4: ((0,), (1,), (2,), (3,)), 3: ((0, 2), (1, 2), (3, 2))}
"""Seats whose cards each player sees (own; 3 players also the open new moon, R7.1)."""

_GAME_TYPE = pyspiel.GameType(
    short_name=GAME_NAME,
    long_name="Python Twilight",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.GENERAL_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=4,
    min_num_players=3,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=dict(_PARAMS),
)


def _config(params: dict) -> Config:
    unknown = sorted(set(params) - set(_PARAMS))
    if unknown:
        raise ValueError(f"python_twilight has no parameter {unknown}; its parameters: {sorted(_PARAMS)}")
    p = {**_PARAMS, **params}
    if p["players"] not in (3, 4) or isinstance(p["players"], bool):
        raise ValueError(f"python_twilight parameter 'players' must be 3 or 4, got {p['players']!r}")
    cfg = Config(num_players=p["players"], goals_333=p["goals_333"],
                 three_player_scoring=p["three_player_scoring"], fixed_solo=p["fixed_solo"],
                 tricks=p["tricks"])
    if cfg.num_players == 4 and cfg.three_player_scoring != "team":
        raise ValueError("three_player_scoring='individual' is a 3-player variant (R8); use players=3")
    if cfg.goals_333 or cfg.fixed_solo:
        raise ValueError("goals_333 and fixed_solo are match rules (R6.2, R7.6); python_twilight plays one "
                         "deal, so they must be False")
    return cfg


class TwilightGame(pyspiel.Game):
    """The OpenSpiel game (see the module docstring).

    Args:
        params: dict of the parameters in the module table (OpenSpiel passes them all).

    Raises:
        ValueError: on an unknown parameter or a bad value.
    """

    def __init__(self, params: dict | None = None):
        params = dict(params or {})
        self.config = _config(params)
        n = self.config.num_players
        self.num_seats_players = n
        self.tricks = t = self.config.tricks
        self.deck = deck_mask(t)
        self.deck_ids = ids_of(self.deck)
        game_type = _GAME_TYPE
        if n == 4:  # side against side: zero-sum
            game_type = pyspiel.GameType(
                short_name=GAME_NAME, long_name="Python Twilight",
                dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
                chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
                information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
                utility=pyspiel.GameType.Utility.ZERO_SUM,
                reward_model=pyspiel.GameType.RewardModel.TERMINAL,
                max_num_players=4, min_num_players=3,
                provides_information_state_string=True, provides_information_state_tensor=True,
                provides_observation_string=True, provides_observation_tensor=True,
                parameter_specification=dict(_PARAMS))
        info = pyspiel.GameInfo(
            num_distinct_actions=NUM_ACTIONS,
            max_chance_outcomes=NUM_CARDS,
            num_players=n,
            min_utility=-1.0,
            max_utility=1.0,
            utility_sum=0.0 if n == 4 else None,
            max_game_length=2 * NUM_SEATS_CARDS * t)
        full = {**_PARAMS, **params}
        super().__init__(game_type, info, full)

    def new_initial_state(self):
        """A state before the deal (a chance node)."""
        return TwilightState(self)

    def max_chance_nodes_in_history(self):
        """28 deal nodes (``4 * tricks`` with a reduced deck), plus the first-leader node in 4 players."""
        return NUM_SEATS_CARDS * self.tricks + (1 if self.num_seats_players == 4 else 0)

    def make_py_observer(self, iig_obs_type=None, params=None):
        """The observer for tensors and strings (see the module docstring).

        Raises:
            ValueError: on observer parameters, or an observation type other than one
                player's own view with the public information (the kinds this game has).
        """
        if params:
            raise ValueError(f"python_twilight observers take no parameters, got {params}")
        if iig_obs_type is None:
            iig_obs_type = pyspiel.IIGObservationType(perfect_recall=False)
        if iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER or not iig_obs_type.public_info:
            raise ValueError("python_twilight observes one player's own information with the public "
                             "information only (private_info=SINGLE_PLAYER, public_info=True)")
        return TwilightObserver(iig_obs_type.perfect_recall)


class _Core:
    """The Python-side fields of a state, copied by ``clone`` through ``__deepcopy__``."""

    __slots__ = ("engine", "dealt", "leader", "actions")

    def __init__(self):
        self.engine: State | None = None   # the deal in play, once all 28 cards are dealt
        self.dealt: list[int] = []         # card ids in deal order (seat k // 7 gets the k-th)
        self.leader = -1                   # first leader, once drawn or fixed
        self.actions: list[int] = []       # player actions in order

    def __deepcopy__(self, memo):
        c = _Core.__new__(_Core)
        c.engine = None if self.engine is None else self.engine.clone()
        c.dealt = self.dealt[:]
        c.leader = self.leader
        c.actions = self.actions[:]
        return c

    def __getstate__(self):
        return (self.engine, self.dealt, self.leader, self.actions)

    def __setstate__(self, st):
        self.engine, self.dealt, self.leader, self.actions = st


class TwilightState(pyspiel.State):
    """One deal of Twilight in OpenSpiel (see the module docstring)."""

    def __init__(self, game: TwilightGame):
        super().__init__(game)
        self._n = game.num_seats_players
        self._hand = game.tricks
        self._deck_ids = game.deck_ids
        self._scoring = game.config.three_player_scoring
        self._core = _Core()
        if self._n == 3:
            self._core.leader = 0  # the solo leads (R7.3)

    # -- who acts --------------------------------------------------------------------
    def current_player(self):
        core = self._core
        eng = core.engine
        if eng is None:
            return pyspiel.PlayerId.CHANCE
        if eng.done:
            return pyspiel.PlayerId.TERMINAL
        return _PLAYER_OF_SEAT[self._n][eng.deciding_seat]

    def is_terminal(self):
        eng = self._core.engine
        return eng is not None and eng.done

    def _legal_actions(self, player):
        return list(self._core.engine.legal_actions())

    def chance_outcomes(self):
        core = self._core
        if core.leader < 0:
            return [(s, 0.25) for s in range(4)]
        dealt = set(core.dealt)
        left = [c for c in self._deck_ids if c not in dealt]
        p = 1.0 / len(left)
        return [(c, p) for c in left]

    def _apply_action(self, action):
        core = self._core
        eng = core.engine
        if eng is not None:
            eng.apply(int(action))
            core.actions.append(int(action))
            return
        if core.leader < 0:
            if not 0 <= action < 4:
                raise ValueError(f"the first chance node draws the leader seat 0..3, got {action}")
            core.leader = int(action)
            return
        if action not in self._deck_ids or action in core.dealt:
            raise ValueError(f"chance deals a card of the deck not dealt yet ({' '.join(CARDS[c] for c in self._deck_ids)}), "
                             f"got {action}")
        core.dealt.append(int(action))
        k = self._hand
        if len(core.dealt) == NUM_SEATS_CARDS * k:
            hands = [0, 0, 0, 0]
            for i, c in enumerate(core.dealt):
                hands[i // k] |= 1 << c
            core.engine = (State if k == HAND_SIZE else ReducedState)(hands, core.leader, self._n)

    # -- results -----------------------------------------------------------------------
    def returns(self):
        eng = self._core.engine
        if eng is None or not eng.done:
            return [0.0] * self._n
        if self._n == 3 and self._scoring == "individual":
            seat = eng.seat_scores()
            pts = [seat[0], seat[1], seat[3], seat[NEW_MOON]]  # players 0..2, then the new-moon line (R8)
            total = sum(pts)
            return [(pts[i] - (total - pts[i]) / 3.0) / 360.0 for i in range(3)]
        ret = eng.returns()
        return [ret[s] / 360.0 for s in _SEAT_OF_PLAYER[self._n]]

    def rewards(self):
        return self.returns()

    # -- strings -------------------------------------------------------------------------
    def _action_to_string(self, player, action):
        if player == pyspiel.PlayerId.CHANCE:
            if self._core.leader < 0:
                return f"leader seat {action}"
            return f"deal {CARDS[action]} to seat {len(self._core.dealt) // self._hand}"
        if action >= REQUEST_BASE:
            return f"request +{action - REQUEST_BASE + 1}"
        return f"play {CARDS[action]}"

    def __str__(self):
        core = self._core
        if core.engine is None:
            k = self._hand
            dealt = [codes_of(sum(1 << c for c in core.dealt[k * s:k * s + k])) for s in range(4)]
            return f"dealing: leader {core.leader}, " + " | ".join(" ".join(h) for h in dealt)
        eng = core.engine
        hands = " | ".join(" ".join(codes_of(h)) for h in eng.hands)
        trick = " ".join(CARDS[c] for c in eng.cards if c >= 0)
        s0, s1 = eng.side_scores()
        return (f"trick {eng.trick} place {eng.place} phase {'hold' if eng.phase == HOLD else 'choose'} "
                f"leader {eng.leader}; hands {hands}; current trick [{trick}]; scores {s0}:{s1}; "
                f"actions {' '.join(map(str, core.actions))}")

    # -- resampling ----------------------------------------------------------------------
    def resample_from_infostate(self, player_id, probability_sampler):
        """A state drawn uniformly from ``player_id``'s information set.

        Args:
            player_id: the player whose information set is kept.
            probability_sampler: a callable returning floats in [0, 1) (OpenSpiel's);
                one draw seeds the ``numpy`` generator that picks the world.

        Returns:
            a new :class:`TwilightState` with the same information state string for
            ``player_id``, the hidden cards re-dealt (R2.5: each seat keeps its counts
            per cult; the cards each seat played stay with it).
        """
        rng = np.random.default_rng(int(probability_sampler() * 2 ** 53))
        return _resample(self, player_id, rng)

    # -- for the adapters and tests ------------------------------------------------------
    @property
    def engine_state(self) -> State | None:
        """The engine :class:`~twilight_env.rules.engine.State` (None while dealing); read only."""
        return self._core.engine

    def infoset(self, player: int) -> InfoSet:
        """The :class:`~twilight_env.rules.infoset.InfoSet` of ``player`` (after the deal)."""
        if self._core.engine is None:
            raise ValueError("the cards are still being dealt; an information set exists after the deal")
        return InfoSet(self._core.engine, _SEAT_OF_PLAYER[self._n][player])


def seat_of_player(num_players: int, player: int) -> int:
    """Seat of OpenSpiel player ``player`` (3 players: 0 solo, 1 and 2 at seats 1 and 3)."""
    return _SEAT_OF_PLAYER[num_players][player]


def player_of_seat(num_players: int, seat: int) -> int:
    """OpenSpiel player deciding at ``seat`` (3 players: the new moon, seat 2, is player 0)."""
    return _PLAYER_OF_SEAT[num_players][seat]


def _replay(game, leader: int, dealt: Sequence[int], actions: Sequence[int]):
    st = game.new_initial_state()
    if game.num_seats_players == 4 and leader >= 0:
        st.apply_action(leader)
    for c in dealt:
        st.apply_action(c)
    for a in actions:
        st.apply_action(a)
    return st


def _resample(state: TwilightState, player: int, rng: np.random.Generator) -> TwilightState:
    core = state._core
    n = state._n
    seen = _SEEN_SEATS[n][player]
    dealt = core.dealt[:]
    size = state._hand
    deck = state.get_game().deck
    hidden_pos = [k for k in range(len(dealt)) if k // size not in seen]
    if core.engine is None:
        # mid-deal: the hidden cards dealt so far, each keeping its cult (card back, R2.5)
        known = {dealt[k] for k in range(len(dealt)) if k // size in seen}
        for cmask in (SUN_MASK, MOON_MASK):
            pos = [k for k in hidden_pos if cmask >> dealt[k] & 1]
            pool = [c for c in ids_of(cmask & deck) if c not in known]
            pick = rng.choice(len(pool), size=len(pos), replace=False)
            for k, j in zip(pos, pick):
                dealt[k] = pool[j]
    else:
        info = InfoSet(core.engine, _SEAT_OF_PLAYER[n][player])
        hands = info.sample_hands(rng)
        for _, holder, card in info.history:
            hands[holder] |= 1 << card
        for s in range(4):
            if s in seen:
                continue
            block = range(size * s, size * s + size)
            for cmask in (SUN_MASK, MOON_MASK):
                pos = [k for k in block if cmask >> dealt[k] & 1]
                cards = list(ids_of(hands[s] & cmask))
                rng.shuffle(cards)
                for k, c in zip(pos, cards):
                    dealt[k] = c
    return _replay(state.get_game(), core.leader, dealt, core.actions)


def history_actions(history: Sequence[tuple[int, int, int]], phase: int = 0, chooser: int = -1,
                    holder: int = -1) -> list[int]:
    """The player actions that produce an engine history (and a pending request).

    Args:
        history: ``(chooser, holder, card)`` per card played (``State.history``).
        phase, chooser, holder: the state's phase now; in the hold phase the pending
            request of ``chooser`` to ``holder`` is appended.

    Returns:
        actions in the env's encoding (R3.2): a card id, preceded by the request
        ``28 + offset - 1`` when the holder is not the chooser.
    """
    out = []
    for c, h, card in history:
        if h != c:
            out.append(REQUEST_BASE + ((h - c) & 3) - 1)
        out.append(card)
    if phase == HOLD:
        out.append(REQUEST_BASE + ((holder - chooser) & 3) - 1)
    return out


def deal_state(game: TwilightGame, deal: Sequence[Sequence[str | int]], leader: int = 0) -> TwilightState:
    """A state after the chance nodes, for a given deal.

    Args:
        game: a loaded ``python_twilight`` game.
        deal: 4 hands of 7 card codes (or ids) by seat (R2.3); 3 players: seat 0 solo,
            seat 2 the new moon. A game with ``tricks`` < 7: hands of ``tricks`` cards of
            its reduced deck.
        leader: the first leader, a seat 0..3 (4 players); must be 0 in 3 players (R7.3).

    Returns:
        the state at the first player decision.

    Raises:
        ValueError: on a bad deal (as the engine's ``validate_deal``) or leader.
    """
    hands = validate_deal(deal, game.tricks)
    if isinstance(leader, bool) or not isinstance(leader, (int, np.integer)) or not 0 <= leader < 4:
        raise ValueError(f"leader must be a seat 0..3, got {leader!r}")
    if game.num_seats_players == 3 and leader != 0:
        raise ValueError(f"in 3 players the solo (seat 0) leads (R7.3); leader must be 0, got {leader!r}")
    dealt = [c for h in hands for c in ids_of(h)]
    return _replay(game, int(leader), dealt, ())


def state_from_world(game: TwilightGame, infoset: InfoSet, world: Sequence[int]) -> TwilightState:
    """The OpenSpiel state of one world of an information set: the world's hands as
    dealt (the played cards given back to the seats that held them), then the public
    actions (:func:`history_actions`).

    Args:
        game: a ``python_twilight`` game with the infoset's number of players.
        infoset: the deciding player's information set.
        world: 4 hand masks by seat, e.g. ``infoset.sample_hands(rng)``.

    Raises:
        ValueError: if the game and the information set disagree on the number of players,
            or the world contradicts the information set.
    """
    if game.num_seats_players != infoset.num_players:
        raise ValueError(f"the game has {game.num_seats_players} players, the information set "
                         f"{infoset.num_players}")
    infoset.world_state(world)  # checks the world against the information set
    hands = list(world)
    for _, holder, card in infoset.history:
        hands[holder] |= 1 << card
    dealt = [c for h in hands for c in ids_of(h)]
    phase = 1 if infoset.phase == "hold" else 0
    acts = history_actions(infoset.history, phase, infoset.chooser, infoset.holder)
    return _replay(game, infoset.first_leader, dealt, acts)


class TwilightObserver:
    """OpenSpiel's ``PyObserver`` for this game (see the module docstring).

    Args:
        perfect_recall: True for information states (tensor ``(1080,)``), False for
            observations (``(968,)``).
    """

    def __init__(self, perfect_recall: bool):
        self.perfect_recall = perfect_recall
        size = INFO_STATE_SIZE if perfect_recall else OBS_SIZE
        self.tensor = np.zeros(size, np.float32)
        self.dict = {"observation": self.tensor[:OBS_SIZE]}
        if perfect_recall:
            self.dict["place_of_card"] = self.tensor[OBS_SIZE:].reshape(NUM_CARDS, 4)

    def set_from(self, state: TwilightState, player: int) -> None:
        """Fill ``tensor`` with ``player``'s view of ``state``."""
        eng = state._core.engine
        if eng is None:
            self.tensor.fill(0.0)
            return
        seat = _SEAT_OF_PLAYER[state._n][player]
        encode_observation(eng, seat, out=self.dict["observation"])
        if self.perfect_recall:
            places = self.dict["place_of_card"]
            places.fill(0.0)
            for k, (_, _, card) in enumerate(eng.history):
                places[card, k & 3] = 1.0

    def string_from(self, state: TwilightState, player: int) -> str:
        """``player``'s information state string (perfect recall) or observation string."""
        core = state._core
        n = state._n
        seen = _SEEN_SEATS[n][player]
        if self.perfect_recall:
            parts = [f"p{player}", f"leader {core.leader}"]
            k = state._hand
            for s in range(4):
                block = core.dealt[k * s:k * s + k]
                if s in seen:
                    parts.append(f"s{s}:" + ",".join(CARDS[c] for c in block))
                else:
                    parts.append(f"s{s}:" + "".join("S" if c < 14 else "M" for c in block))
            parts.append(" ".join(CARDS[a] if a < REQUEST_BASE else f"r{a - REQUEST_BASE + 1}"
                                  for a in core.actions))
            return " ".join(parts)
        eng = core.engine
        if eng is None:
            mine = [CARDS[c] for i, c in enumerate(core.dealt) if i // state._hand in seen]
            return f"p{player} dealing, seen {','.join(mine)}"
        info = InfoSet(eng, _SEAT_OF_PLAYER[n][player])
        hands = " ".join(f"s{s}:" + ",".join(codes_of(info.known_masks[s])) for s in seen)
        counts = " ".join(f"{a}/{b}" for a, b in info.counts)
        trick = " ".join(f"{CARDS[c]}({h})" for c, h in zip(info.trick_cards, info.trick_holders) if c >= 0)
        taken = " ".join(",".join(codes_of(m)) or "-" for m in info.captured)
        s0, s1 = eng.side_scores()
        return (f"p{player} {hands} counts {counts} trick {info.trick} leader {info.leader} "
                f"chooser {info.chooser} holder {info.holder} [{trick}] taken {taken} "
                f"pending {','.join(codes_of(info.pending)) or '-'} scores {s0}:{s1}")


pyspiel.register_game(_GAME_TYPE, TwilightGame)

__all__ = ["GAME_NAME", "TwilightGame", "TwilightState", "TwilightObserver", "deal_state", "state_from_world",
           "history_actions", "seat_of_player", "player_of_seat", "INFO_STATE_SIZE", "MAX_PLAYER_ACTIONS"]
