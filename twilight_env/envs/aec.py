"""PettingZoo AEC environment for Twilight: ``env(**config)`` and ``raw_env(**config)``.

The env module that imports PettingZoo (``twilight_env/__init__.py`` also imports it, to
register ``twilight/Twilight-v0``). Rules live in :mod:`twilight_env.rules.engine`,
the observation vector in :mod:`twilight_env.obs.encoding`; this adapter holds spaces,
masks, ``infos``, rendering and the scaling of scores into rewards.

| | |
|---|---|
| Creation | ``twilight_env.env(num_players=4)`` or ``pettingzoo.make("aec", "twilight/Twilight-v0", num_players=3)`` |
| Agents | ``player_0`` .. ``player_3`` (4 players, agent i sits at seat i); ``player_0`` .. ``player_2`` (3 players) |
| Action space | ``Discrete(31)``: 0..27 play that card id from the acting hand; 28, 29, 30 request the seat at offset +1, +2, +3 from the chooser (R3.2) |
| Observation | ``{"observation": float32 (OBS_SIZE,), "action_mask": int8 (31,)}``; flags in {0, 1}, scalars in [0, 1], match totals in [0, 4] |
| Rewards | deal episodes: at the deal's end (own side's deal points − the other side's) / 360; matches: +1 winners, −1 others at the end |
| Episode | ``"deal"``: one deal; ``"match"``: deals until the target (R6, R7.5) |

Config keywords (any other keyword, or a bad value, raises ``ValueError`` naming it and
the allowed values): ``num_players`` (4 or 3), ``episode`` (``"deal"`` or ``"match"``),
``target`` (1000), ``goals_333`` (False, R6.2), ``three_player_scoring`` (``"team"`` or
``"individual"``, R8), ``fixed_solo`` (False, R7.6), ``tricks`` (7: tricks per deal, 1..7;
fewer play the reduced deck of :class:`~twilight_env.rules.engine.Config`, whose hands
hold ``tricks`` cards and whose left-out cards are flagged as gone in the observation),
``render_mode`` (None, ``"human"``, ``"ansi"``).

Seats and agents
----------------
4 players: agent ``player_i`` sits at seat i (seats 0, 2 Sun; 1, 3 Moon, R2.1). 3 players:
in each deal the solo sits at seat 0 and also decides for the new moon at seat 2 (R7.3);
the Sun players sit at seats 1 (solo's left) and 3 (solo's right), and the solo role
rotates p0, p2, p1, ... in matches (R7.4). The new moon is never an agent.

``reset(seed=None, options=None)``: ``seed`` (an int >= 0 or None; a bool, a negative or
a non-integer seed raises ``ValueError`` naming ``seed``) seeds this env's own ``numpy``
generator (never the global one), so the same seed gives the same deals. ``options`` may hold
``"deal"`` (4 lists of 7 card codes by seat; ``tricks`` codes of the reduced deck when ``tricks`` < 7), ``"dealer"`` (4 players: the dealer's
seat; the seat after it leads, R2.4), ``"solo"`` (3 players: the solo player 0..2) and
``"scores"`` (match episodes: starting totals by score line, see
:class:`~twilight_env.rules.engine.Match`; under ``fixed_solo`` the two Sun players share one
score line, R7.6, R7.5, so their totals must be equal, else ``ValueError``). Without
``dealer``/``solo`` the first dealer or solo is drawn from the seeded generator. A malformed option raises ``ValueError``; an
unknown option key is ignored with a warning (PettingZoo's ``api_test`` passes one).

Observation
-----------
``observe(agent)`` is the vector of :func:`twilight_env.obs.encoding.encode_observation` for
that agent's own seat: the information set only (R2.5, R7.1), laid out from the acting
seat's point of view when it is that agent's decision (the solo deciding for the new
moon sees seat 2 as relative seat 0), else from its own seat. ``action_mask`` is the
engine's legal actions for the agent to act, all zeros for the others and after the
end. Each ``observe`` and ``last`` call returns a new dict of new, writeable arrays that
the caller owns: changing them in place (normalising the vector, editing the mask) never
changes a later read. The observation layout (``twilight_env.obs.encoding``; ``rel`` =
relative seat):

OBSERVATION_LAYOUT
 An illegal action raises
``ValueError`` and changes nothing; wrap ``raw_env`` in PettingZoo's
``TerminateIllegalWrapper`` to end the game on it instead.

Rewards
-------
Deal episodes: when the deal ends every agent gets (own side's deal points − the other
side's) / 360 (R5): partners get the same reward; in 3 players the solo gets (Moon −
Sun) / 360. Under 3-player ``"individual"`` scoring (R8) each player gets (own deal
points − the mean of the other three score lines, new moon included) / 360. Match
episodes: 0 until the match is decided, then +1 to the winning player(s) and −1 to the
others (all −1 if the new-moon line wins under ``"individual"`` scoring).

Infos (one fixed schema for the whole episode)
----------------------------------------------
``infos[agent]``: ``"seat"`` int, the seat the agent acts for at this decision (3
players: 2 when the solo decides for the new moon), −1 when not to act; ``"phase"``
``"choose"`` or ``"hold"``; ``"deal_points"`` dict of the last finished deal (4 players:
``{"sun", "moon"}``; 3 players: ``{"player_0", ..}`` plus ``"new_moon"`` under
individual scoring), zeros before the first deal ends; ``"totals"`` dict (same keys as
``deal_points`` with ``player_i`` for 4 players) of running totals credited by the rules;
``"deals_played"`` int.

Terminal steps (AEC bookkeeping)
--------------------------------
At the end every agent's ``terminations`` flag turns True together; each agent then
appears once more in ``agent_iter`` with its final ``last()`` (cumulative reward,
termination True) and must step ``None``, which removes it from ``env.agents``
(``_was_dead_step``). ``env.agents`` is empty only after the last of these dead steps;
stepping ``raw_env`` after that (or before the first ``reset``) raises ``RuntimeError``
saying so (the wrapped :func:`env` logs PettingZoo's warning and ignores the step).

Version history
---------------
- v0 (0.1.0): first release.

There is no ``parallel_env``: the game's actions are sequential. One seat acts at a time
(the chooser requests a seat, R3; the seats play to a trick in turn, R4) and each choice
depends on what was played before it, so the AEC form is the natural one; a parallel
step, where all agents act at once, would not describe the game.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils.env_logger import EnvLogger
from pettingzoo.utils.wrappers import OrderEnforcingWrapper
from pettingzoo.utils.wrappers.order_enforcing import AECOrderEnforcingIterable, AECOrderEnforcingIterator

from twilight_env import ENV_ID  # noqa: F401  (the PettingZoo registry id, defined once in the package)
from twilight_env.obs.encoding import OBS_SIZE, TOTALS, TOTALS_CAP, layout_table, observation_and_mask
from twilight_env.rules.engine import (ACTION_TYPES, HOLD, NUM_ACTIONS, PHASE_NAMES, Config, Match, action_or_none,
                     fixed_solo_scores_problem, validate_deal)
from twilight_env.rules.infoset import InfoSet
from twilight_env.envs.render import render_deal
from twilight_env.util.seeding import check_seed

__doc__ = __doc__.replace("OBSERVATION_LAYOUT", layout_table())


CONFIG_DEFAULTS: dict[str, Any] = {
    "num_players": 4,
    "episode": "deal",
    "target": 1000,
    "goals_333": False,
    "three_player_scoring": "team",
    "fixed_solo": False,
    "tricks": 7,
    "render_mode": None,
}
"""Accepted config keywords and their defaults (``docs/API.md``, Environment)."""

EPISODES = ("deal", "match")
RENDER_MODES = ("human", "ansi")
RESET_OPTIONS = ("deal", "dealer", "solo", "scores")


def parse_config(config: dict) -> tuple[Config, str, str | None]:
    """Check env config keywords and build the engine :class:`Config`.

    Returns:
        ``(Config, episode, render_mode)``.

    Raises:
        ValueError: on an unknown keyword (listing the accepted ones) or a bad value
            (naming the keyword and the allowed values).
    """
    unknown = [k for k in config if k not in CONFIG_DEFAULTS]
    if unknown:
        raise ValueError(f"unknown config keyword(s) {', '.join(map(repr, unknown))}; "
                         f"accepted: {', '.join(CONFIG_DEFAULTS)}")
    c = {**CONFIG_DEFAULTS, **config}
    if c["episode"] not in EPISODES:
        raise ValueError(f"episode must be 'deal' or 'match', got {c['episode']!r}")
    if c["render_mode"] is not None and c["render_mode"] not in RENDER_MODES:
        raise ValueError(f"render_mode must be None, 'human' or 'ansi', got {c['render_mode']!r}")
    if c["num_players"] == 4 and c["three_player_scoring"] == "individual":
        raise ValueError("three_player_scoring='individual' is a 3-player variant (R8); use num_players=3")
    if c["num_players"] == 4 and isinstance(c["fixed_solo"], (bool, np.bool_)) and c["fixed_solo"]:
        raise ValueError("fixed_solo=True is a 3-player option (R7.6); use num_players=3")
    cfg = Config(num_players=c["num_players"], target=c["target"], goals_333=c["goals_333"],
                 three_player_scoring=c["three_player_scoring"], fixed_solo=c["fixed_solo"], tricks=c["tricks"])
    return cfg, c["episode"], c["render_mode"]


def _is_int(x) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


class raw_env(AECEnv):
    """Twilight as a PettingZoo AEC environment (see the module docstring)."""

    metadata = {"render_modes": ["human", "ansi"], "name": "twilight_v0", "is_parallelizable": False,
                "render_fps": 1}

    def __init__(self, **config):
        super().__init__()
        self.config, self.episode, self.render_mode = parse_config(config)
        n = self.config.num_players
        self.num_players = n
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self._agent_index = {a: i for i, a in enumerate(self.possible_agents)}
        high = np.ones(OBS_SIZE, dtype=np.float32)
        high[TOTALS:] = TOTALS_CAP  # match totals and target (see the encoding table)
        low = np.zeros(OBS_SIZE, dtype=np.float32)
        self.observation_spaces = {
            a: spaces.Dict({"observation": spaces.Box(low, high, (OBS_SIZE,), np.float32),
                            "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), np.int8)})
            for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(NUM_ACTIONS) for a in self.possible_agents}
        self._rng = np.random.default_rng()
        self._match: Match | None = None
        if n == 4:
            self._line_keys = ["sun", "moon"]
        else:
            self._line_keys = [f"player_{i}" for i in range(3)]
            if self.config.three_player_scoring == "individual":
                self._line_keys.append("new_moon")
        self.agents = []

    # -- spaces ---------------------------------------------------------------------
    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    # -- reset ----------------------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Start a new episode (see the module docstring for ``seed`` and ``options``).

        Raises:
            ValueError: on a malformed option or a seed that is not an int >= 0 or None
                (a bool is refused: ``seed=True`` is not read as 1; the message names
                ``seed``); the env is then left as it was.
        """
        seed = check_seed(seed)
        opts = {} if options is None else options
        if not isinstance(opts, dict):
            raise ValueError(f"options must be a dict with keys {', '.join(RESET_OPTIONS)}, got {options!r}")
        extra = [k for k in opts if k not in RESET_OPTIONS]
        if extra:
            warnings.warn(f"ignoring unknown reset option(s) {', '.join(map(repr, extra))}; "
                          f"known: {', '.join(RESET_OPTIONS)}", stacklevel=2)
        # check every option before drawing anything, so a bad one leaves the env as it was
        dealer, solo, deal, scores = self._checked_options(opts)
        n = self.num_players
        # a refused option leaves the env as it was: a new generator is kept only on success,
        # and the current one's state is put back if drawing the solo reveals a bad option
        rng = np.random.default_rng(seed) if seed is not None else self._rng
        saved = rng.bit_generator.state if seed is None and opts else None
        if n == 4 and dealer is None:
            dealer = int(rng.integers(4))
        if n == 3 and solo is None:
            solo = int(rng.integers(3))
        if scores is not None and n == 3:
            why = fixed_solo_scores_problem(self.config, solo, scores)
            if why is not None:
                if saved is not None:
                    rng.bit_generator.state = saved
                raise ValueError(f"option 'scores': {why}")
        try:
            match = Match(self.config, rng, deal=deal, dealer=dealer if n == 4 else None,
                          solo=solo if n == 3 else None, scores=scores)
        except ValueError as e:
            if saved is not None:
                rng.bit_generator.state = saved
            raise ValueError(f"bad reset options: {e}") from None
        self._rng = rng
        self._match = match
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        zeros = {k: 0 for k in self._line_keys}
        self.infos = {a: {"seat": -1, "phase": "choose", "deal_points": dict(zeros),
                          "totals": self._totals_dict(), "deals_played": 0} for a in self.agents}
        self._rewards_dirty = False
        self._phase_name = "choose"
        self._skip_agent_selection = None
        self._new_deal()

    def _checked_options(self, opts: dict) -> tuple:
        """``(dealer, solo, deal, scores)`` of the reset options ``opts``, checked (None where
        not given; ``scores`` as a list of ints); ValueError naming a bad option."""
        n = self.num_players
        dealer, solo, deal = opts.get("dealer"), opts.get("solo"), opts.get("deal")
        if n == 4:
            if "solo" in opts:
                raise ValueError("option 'solo' is for 3 players; in 4 players give 'dealer' (a seat 0..3)")
            if dealer is not None and (not _is_int(dealer) or not 0 <= dealer < 4):
                raise ValueError(f"option 'dealer' must be a seat 0..3, got {dealer!r}")
        else:
            if "dealer" in opts:
                raise ValueError("option 'dealer' is for 4 players; in 3 players give 'solo' (a player 0..2)")
            if solo is not None and (not _is_int(solo) or not 0 <= solo < 3):
                raise ValueError(f"option 'solo' must be a player 0..2, got {solo!r}")
        if deal is not None:
            try:
                validate_deal(deal, self.config.tricks)
            except ValueError as e:
                raise ValueError(f"option 'deal': {e}") from None
        scores = opts.get("scores")
        if scores is not None:
            if self.episode != "match":
                raise ValueError("option 'scores' (starting totals) is for match episodes (episode='match')")
            nl = len(self._line_keys)
            if (isinstance(scores, (str, bytes)) or not hasattr(scores, "__len__") or len(scores) != nl
                    or not all(_is_int(x) and x >= 0 for x in scores)):
                raise ValueError(f"option 'scores' must be {nl} non-negative ints "
                                 f"({', '.join(self._line_keys)}), got {scores!r}")
            scores = [int(x) for x in scores]
        return dealer, solo, deal, scores

    # -- bookkeeping ----------------------------------------------------------------
    def _totals_dict(self) -> dict:
        t = self._match.totals
        if self.num_players == 4:
            return {f"player_{i}": t[i & 1] for i in range(4)}
        return {k: t[i] for i, k in enumerate(self._line_keys)}

    def _new_deal(self) -> None:
        """Map agents to seats for the current deal (R7.4) and select the first decider."""
        m = self._match
        st = m.state
        self._state = st
        if self.num_players == 4:
            self._agent_of_seat = list(self.possible_agents)
            self._seat_of_agent = {a: i for i, a in enumerate(self.possible_agents)}
        else:
            self._agent_of_seat = [self.possible_agents[m.player_of_seat(s)] for s in range(4)]
            self._seat_of_agent = {a: m.seat_of_player(i) for i, a in enumerate(self.possible_agents)}
        if self.episode == "match":
            t = m.totals
            if self.num_players == 4:
                self._seat_totals = (t[0], t[1], t[0], t[1])
            else:
                nm = t[3] if len(t) == 4 else t[m.solo]
                self._seat_totals = (t[m.player_of_seat(0)], t[m.player_of_seat(1)], nm, t[m.player_of_seat(3)])
            self._target = self.config.target
        else:
            self._seat_totals = None
            self._target = None
        for a in self.agents:
            self.infos[a]["seat"] = -1
        self._acting_agent = None
        self._select()

    def _select(self) -> None:
        """Point ``agent_selection`` at the agent deciding next and refresh ``infos`` seat/phase."""
        st = self._state
        seat = st.holder if st.phase == HOLD else (st.leader + st.place) & 3
        agent = self._agent_of_seat[seat]
        infos = self.infos
        prev = self._acting_agent
        if prev is not None and prev != agent:
            infos[prev]["seat"] = -1
        infos[agent]["seat"] = seat
        phase = PHASE_NAMES[st.phase]
        if phase != self._phase_name:  # the same str for every agent; rewrite only on change
            for a in self.agents:
                infos[a]["phase"] = phase
            self._phase_name = phase
        self._acting_agent = agent
        self.agent_selection = agent

    # -- observation ----------------------------------------------------------------
    def observe(self, agent):
        """``{"observation": float32 (OBS_SIZE,), "action_mask": int8 (31,)}`` of ``agent`` now.

        Every call encodes afresh and returns a new dict of new, writeable arrays that
        the caller owns: normalising the vector in place or editing the mask changes
        nothing that a later ``observe`` or ``last`` returns. (Nothing is cached: a cache
        would have to copy on every call, and the usual loop reads once per step.)

        Raises:
            ValueError: if ``agent`` is not one of ``possible_agents``.
        """
        vec, mask = observation_and_mask(self._state, self.seat_of(agent), self._seat_totals, self._target)
        return {"observation": vec, "action_mask": mask}

    def last(self, observe: bool = True):
        """``(observation, cumulative reward, terminated, truncated, info)`` of ``agent_selection``;
        the observation is new arrays the caller owns, as :meth:`observe` returns.

        Raises:
            RuntimeError: before the first ``reset()``, or after the game ended and every
                agent has stepped its final ``None`` (as :meth:`step`).
        """
        if self._match is None:
            raise RuntimeError("reset() needs to be called before last()")
        agent = self.agent_selection
        if agent not in self._cumulative_rewards:
            raise RuntimeError("last() called after the game ended: every agent has stepped its final None and "
                               "left; call reset() to play again")
        return (self.observe(agent) if observe else None, self._cumulative_rewards[agent],
                self.terminations[agent], self.truncations[agent], self.infos[agent])

    def infoset(self, agent) -> InfoSet:
        """What ``agent`` knows now, as a :class:`~twilight_env.rules.infoset.InfoSet` (own seat;
        3 players: the solo's seat 0, which also sees the open hand). Match context uses
        per-seat totals (see :func:`twilight_env.obs.encoding.seat_totals`).

        Raises:
            ValueError: if ``agent`` is not one of ``possible_agents``.
        """
        if agent not in self._agent_index:
            raise ValueError(f"unknown agent {agent!r}; agents: {', '.join(self.possible_agents)}")
        if self._match is None:
            raise ValueError("call reset() before infoset()")
        return InfoSet(self._state, self._seat_of_agent[agent], self._seat_totals, self._target)

    def seat_of(self, agent) -> int:
        """The seat ``agent`` occupies in the current deal (3 players: the solo is 0).

        Raises:
            ValueError: if ``agent`` is not one of ``possible_agents``.
        """
        try:
            return self._seat_of_agent[agent]
        except (KeyError, TypeError):
            raise ValueError(f"unknown agent {agent!r}; agents: {', '.join(self.possible_agents)}") from None

    # -- step -----------------------------------------------------------------------
    def _illegal(self, action, why: str):
        legal = list(self._state.legal_actions())
        raise ValueError(f"illegal action {action!r} for {self.agent_selection}: {why}; legal actions: {legal}")

    def step(self, action) -> None:
        """Apply the selected agent's action (see the module docstring).

        Args:
            action: 0..30, of any integer type :func:`twilight_env.rules.engine.as_action` reads
                (a Python int, a NumPy integer scalar, a 0-d integer array; not a bool);
                None for an agent that is already terminated.

        Raises:
            ValueError: on an illegal or malformed action (nothing changes; a non-integer
                gets a message naming the accepted types), or a non-None action from an
                agent that is already terminated.
            RuntimeError: before the first ``reset()``, or after the game ended and every
                agent stepped its final ``None`` (``env.agents`` is empty; PettingZoo's
                order-enforcing wrapper, which :func:`env` adds, warns and ignores such a
                step instead); nothing changes.
        """
        if not hasattr(self, "_state"):
            raise RuntimeError("reset() needs to be called before step()")
        if not self.agents:
            raise RuntimeError("step() called after the game ended: every agent has stepped its final None and "
                               "env.agents is empty; call reset() to start a new game")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            # dead step: removes the agent, selects the next dead one (AECEnv._was_dead_step)
            self._was_dead_step(action)
            return
        if type(action) is not int:
            value = action_or_none(action)
            if value is None:
                self._illegal(action, f"an action is an int 0..30 ({ACTION_TYPES})")
            action = value
        st = self._state
        try:
            st.apply(action)  # validates first; on an illegal action nothing changes
        except ValueError:
            self._illegal(action, "not legal here (R3.2, R3.5)" if 0 <= action <= 30
                          else "out of range: actions are ints 0..30")
        # the acting agent collected its cumulative reward in last(); start it over
        self._cumulative_rewards[agent] = 0.0
        if self._rewards_dirty:
            for a in self.rewards:
                self.rewards[a] = 0.0
            self._rewards_dirty = False
        if st.trick == st.num_tricks:
            self._end_deal()
        else:
            self._select()
        if self.render_mode == "human":
            self.render()

    def _end_deal(self) -> None:
        m = self._match
        m.finish_deal()
        pts = dict(zip(self._line_keys, m.last_deal_points))
        totals = self._totals_dict()
        for a in self.agents:
            info = self.infos[a]
            info["deal_points"] = dict(pts)
            info["totals"] = dict(totals)
            info["deals_played"] = m.deals_played
        if self.episode == "deal":
            self._finish(self._deal_rewards())
        elif m.done:
            won = set(m.winners)
            if self.num_players == 4:
                r = {a: (1.0 if (i & 1) in won else -1.0) for i, a in enumerate(self.possible_agents)}
            else:
                r = {a: (1.0 if i in won else -1.0) for i, a in enumerate(self.possible_agents)}
            self._finish(r)
        else:
            m.next_deal(self._rng)
            self._new_deal()

    def _deal_rewards(self) -> dict:
        """Deal episode rewards in points / 360 (R5, R7.5, R8)."""
        st = self._state
        if self.num_players == 3 and self.config.three_player_scoring == "individual":
            pts = self._match.last_deal_points  # players 0..2, new moon 3
            total = sum(pts)
            return {a: (pts[i] - (total - pts[i]) / 3.0) / 360.0 for i, a in enumerate(self.possible_agents)}
        ret = st.returns()
        return {a: ret[self._seat_of_agent[a]] / 360.0 for a in self.possible_agents}

    def _finish(self, rewards: dict) -> None:
        """End the episode: final rewards, every agent terminated, first dead agent selected."""
        for a in self.agents:
            self.rewards[a] = float(rewards[a])
            self._cumulative_rewards[a] += self.rewards[a]
            self.terminations[a] = True
            self.infos[a]["seat"] = -1
            self.infos[a]["phase"] = PHASE_NAMES[self._state.phase]
        self._phase_name = PHASE_NAMES[self._state.phase]
        self._rewards_dirty = True
        self._acting_agent = None
        self._deads_step_first()

    # -- rendering ------------------------------------------------------------------
    def render(self):
        """Spectator table (``"ansi"`` returns it, ``"human"`` prints it); None without a mode."""
        if self.render_mode is None:
            warnings.warn("render() called without render_mode; use raw_env(render_mode='ansi' or 'human')",
                          stacklevel=2)
            return None
        if self._match is None:
            text = "Twilight: call reset() to deal.\n"
        else:
            m = self._match
            ep = f"match, deal {m.deals_played + 1}" if self.episode == "match" else "deal episode"
            who = (f"dealer seat {m.dealer}" if self.num_players == 4 else f"solo {self.possible_agents[m.solo]}")
            text = render_deal(self._state, self._agent_of_seat,
                               header=f"Twilight, {self.num_players} players, {ep}, {who}",
                               deal_points=dict(zip(self._line_keys, m.last_deal_points)),
                               totals=self._totals_dict() if self.episode == "match" else None)
        if self.render_mode == "ansi":
            return text
        print(text, end="")
        return None

    def close(self) -> None:
        """Nothing to release (text rendering only)."""

    def __str__(self) -> str:
        return self.metadata["name"]


class TwilightOrderEnforcingWrapper(OrderEnforcingWrapper):
    """PettingZoo's ``OrderEnforcingWrapper`` with direct accessors for the hot attributes.

    The base wrapper forwards ``agents``, ``agent_selection``, ``terminations`` etc.
    through ``__getattr__`` and ``last()`` through several layers; these properties and
    methods do the same checks with fewer calls, so the wrapped env stays close to the
    raw env's speed. Behaviour (errors before ``reset``, the warning on stepping after
    the end) is unchanged.
    """

    def _need_reset(self, name):
        if not self._has_reset:
            raise AttributeError(f"{name} cannot be accessed before reset")

    @property
    def agents(self):
        self._need_reset("agents")
        return self.env.agents

    @property
    def agent_selection(self):
        self._need_reset("agent_selection")
        return self.env.agent_selection

    @property
    def terminations(self):
        self._need_reset("terminations")
        return self.env.terminations

    @property
    def truncations(self):
        self._need_reset("truncations")
        return self.env.truncations

    @property
    def rewards(self):
        self._need_reset("rewards")
        return self.env.rewards

    @property
    def infos(self):
        self._need_reset("infos")
        return self.env.infos

    @property
    def _cumulative_rewards(self):
        return self.env._cumulative_rewards

    def last(self, observe: bool = True):
        if not self._has_reset:
            EnvLogger.error_observe_before_reset()
        return self.env.last(observe)

    def observe(self, agent):
        if not self._has_reset:
            EnvLogger.error_observe_before_reset()
        return self.env.observe(agent)

    def __str__(self) -> str:
        return str(self.env)

    def agent_iter(self, max_iter: int = 2**63):
        if not self._has_reset:
            EnvLogger.error_agent_iter_before_reset()
        return _OrderEnforcingIterable(self, max_iter)

    def step(self, action) -> None:
        if not self._has_reset:
            EnvLogger.error_step_before_reset()
        elif not self.env.agents:
            self._has_updated = True
            EnvLogger.warn_step_after_terminated_truncated()
        else:
            self._has_updated = True
            self.env.step(action)


class _OrderEnforcingIterable(AECOrderEnforcingIterable):
    def __iter__(self):
        return _OrderEnforcingIterator(self.env, self.max_iter)


class _OrderEnforcingIterator(AECOrderEnforcingIterator):
    """``AECOrderEnforcingIterator`` with its checks done in one call."""

    def __next__(self):
        wrapper = self.env
        raw = wrapper.env
        if not raw.agents or self.iters_til_term <= 0:
            raise StopIteration
        self.iters_til_term -= 1
        assert wrapper._has_updated, "need to call step() or reset() in a loop over `agent_iter`"
        wrapper._has_updated = False
        return raw.agent_selection


def env(**config) -> AECEnv:
    """The wrapped environment, as PettingZoo's classic games provide it.

    Wrapped in an order-enforcing wrapper (errors on use before ``reset``). Illegal and
    out-of-range actions raise ``ValueError`` in the raw env already, so no
    out-of-bounds or terminate-on-illegal wrapper is added.

    Raises:
        ValueError: on an unknown config keyword or a bad value.
    """
    return TwilightOrderEnforcingWrapper(raw_env(**config))

