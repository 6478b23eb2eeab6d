"""A search responder: determinized search in which a fixed network agent's own policy plays its seats.

For a fixed, deterministic agent (``exit:...`` or ``neural:...``: the greedy action of a
network over the deciding seat's compact row; or ``heuristic``), a responder on the other side
can simulate the agent *exactly* inside its search, because the agent's policy is one
forward pass. The ``respond`` agent (``respond:target=exit:default,worlds=32``) does so:

1. **Worlds consistent with the agent's play.** It draws ``worlds × candidates`` deals
   of the unseen cards uniformly from its information set (R2.5;
   :func:`twilight_env.agents.fast_ismcts.sample_hands`), replays the deal's public
   actions in each with the batch engine and keeps the worlds in which the fixed agent
   would have made every one of its past decisions as it did (Bayes' rule for a
   deterministic policy: the other worlds have probability 0). The first ``worlds``
   consistent ones are used; if none is, all candidates are (uniform worlds).
2. **Every legal action, played out.** In each kept world, each legal action is
   applied and the deal played to its end with the fixed agent's policy on every seat
   (the responder's own later decisions included), all worlds and actions in lockstep,
   one forward pass per step.
3. It plays the action with the best mean outcome for its side (R5; ties to the lowest id).

Its margin against the fixed agent (duplicate deals, both sides) is a lower bound on the
agent's exploitability; it is the *search* responder of the exploitability table, beside
the DMC best responder of :mod:`twilight_env.training.best_response`. It looks one
decision ahead (its own later moves are the fixed agent's), so it is a lower bound and
not a best response.

In the last ``exact_tricks`` tricks (option, 0..3; 0, the default, is off) the responder
plays the exact best response instead: every deal of the unseen cards is enumerated
(when there are at most ``max_worlds``), the ones consistent with the target's play are
kept (the partner's past play, like the responder's own, rules out no world), and the
deciding seat's remaining decisions are chosen by backward induction with the target's
policy on every other seat, the partner's included
(:func:`exact_value`, validated by :mod:`twilight_env.training.br_validation`). For the 3-player solo, who
decides for both Moon hands (R7.3), this is the exact best response to the target in those
tricks; for a seat with a partner it is exact when the partner plays the target's policy
and its past play is not used.

Spec: ``respond:target=SPEC,worlds=32,candidates=8,exact_tricks=0,max_worlds=2000`` where SPEC is ``exit:default``,
``exit:PATH``, ``neural:default``, ``neural:PATH``, ``policy:default``, ``policy:PATH`` (the ``threads`` and ``backend``
options of those agents are not taken here) or ``heuristic`` (deterministic too: its
compiled copy, :func:`twilight_env.agents.fast_rollout.decide_state`, which
``tests/agents/test_fast_rollout.py`` holds equal to it, is what is simulated).
"""

from __future__ import annotations

import itertools

import numpy as np
import torch

from twilight_env.agents.base import make_agent
from twilight_env.agents.pimc import _positive_int
from twilight_env.envs.vector import VectorEngine
from twilight_env.rules.cards import MOON_MASK, SUN_MASK
from twilight_env.rules.engine import NUM_ACTIONS, State
from twilight_env.rules.infoset import InfoSet
from twilight_env.training.vec_selfplay import greedy_actions, vector_rows

TARGETS = ("exit", "neural", "policy", "heuristic")
"""Agents whose policy the responder simulates exactly (deterministic: the greedy network
agents and the heuristic, simulated by its compiled copy)."""


def public_actions(info) -> list[int]:
    """The deal's actions so far, as action ids (cards 0..27, requests 28..30, R3.2),
    rebuilt from an information set's public history (``(chooser, holder, card)`` per
    card; a card held by another seat was requested first), plus a request in progress."""
    out = []
    for chooser, holder, card in info.history:
        if holder != chooser:
            out.append(27 + ((holder - chooser) & 3))
        out.append(card)
    if info.phase == "hold":
        out.append(27 + ((info.holder - info.chooser) & 3))
    return out


def initial_hands(info, hands: np.ndarray) -> np.ndarray:
    """``(n, 4)`` int64: the dealt hands of worlds given by their current hands ``(n, 4)``:
    each seat's hand plus the cards played from it (R3.3)."""
    init = np.array(hands, dtype=np.int64, copy=True)
    for _, holder, card in info.history:
        init[:, holder] |= 1 << card
    return init


class TargetPolicy:
    """The exact greedy policy of a fixed network agent, over batch-engine rows.

    Args:
        spec: ``exit:...`` or ``neural:...`` (:data:`TARGETS`).

    Raises:
        ValueError: another agent, or a bad spec or checkpoint.
    """

    def __init__(self, spec: str):
        agent = make_agent(spec)
        kind = spec.split(":", 1)[0]
        if kind not in TARGETS or (kind not in ("heuristic", "policy") and not hasattr(agent, "model_for")):
            raise ValueError(f"the target must be a deterministic agent ({', '.join(TARGETS)}), got {spec!r}")
        self.spec, self.kind, self.agent = spec, kind, agent

    def actions(self, eng: VectorEngine, idx: np.ndarray) -> np.ndarray:
        """The agent's action in each row ``idx`` of ``eng`` (deals in progress), as it would
        choose from its deciding seat's information there. Returns ``(len(idx),)`` int64."""
        if self.kind == "heuristic":
            from twilight_env.agents.fast_rollout import decide_state

            return np.array([decide_state(eng.to_state(int(i))) for i in idx], dtype=np.int64)
        rows = vector_rows(eng, eng.deciding_seat)[idx]
        roles = eng.acting_seat[idx] if eng.num_players == 3 else np.zeros(idx.size, dtype=np.int64)
        bits = eng.legal_bits()[idx]
        if self.kind == "policy":  # the NumPy network: the greedy action, lowest id on ties, as the agent
            legal = ((bits[:, None] >> np.arange(NUM_ACTIONS)) & 1).astype(bool)
            probs, _ = self.agent.net_for(eng.num_players).forward(rows, roles, legal)
            return np.where(legal, probs, -1.0).argmax(1)
        model = self.agent.model_for(eng.num_players)
        if self.kind == "neural":
            return greedy_actions(model, rows, roles, bits, "cpu")
        legal = ((bits[:, None] >> np.arange(NUM_ACTIONS)) & 1).astype(bool)
        with torch.no_grad():
            logits, _ = model(torch.from_numpy(rows), torch.from_numpy(roles), torch.from_numpy(legal))
        return logits.argmax(1).numpy()  # the first maximum: ties to the lowest id, as the agent


def _replay(num_players: int, init: np.ndarray, leader: int, actions: list[int]) -> VectorEngine:
    eng = VectorEngine(len(init), num_players)
    eng.reset(deals=init, leaders=np.full(len(init), leader))
    for a in actions:
        eng.apply(np.full(len(init), a, dtype=np.int64))
    return eng


# ---------------------------------------------------------------------------------
# the exact best response on enumerable endgames (exact_tricks; training/br_validation.py)
# ---------------------------------------------------------------------------------

NEW_MOON = 2
"""The new moon's seat in 3 players (R7.1)."""


def enumerate_hands(info: InfoSet) -> list[list[int]]:
    """Every world of an information set: 4 hand masks per world, each hidden hand holding
    exactly its public Sun and Moon counts (R2.5), the seen hands as they are.

    Returns:
        the worlds, in a fixed order (the same for the same information set).
    """
    hidden = [s for s in range(4) if s != info.seat and not (info.num_players == 3 and s == NEW_MOON)]
    unseen = info.unseen_mask
    per_cult = []
    for cult, cmask in ((0, SUN_MASK), (1, MOON_MASK)):
        pool = [c for c in range(28) if unseen >> c & 1 and cmask >> c & 1]
        per_cult.append(list(_splits(pool, [info.hand_counts[s][cult] for s in hidden])))
    worlds = []
    for sun, moon in itertools.product(*per_cult):
        hands = list(info.known_masks)
        for k, s in enumerate(hidden):
            hands[s] |= sun[k] | moon[k]
        worlds.append(hands)
    return worlds


def _splits(pool: list[int], counts: list[int]):
    """Every way to deal the cards ``pool`` into hands of ``counts`` cards, as masks."""
    if not counts:
        if pool:
            raise AssertionError("card counts and unseen cards disagree")
        yield []
        return
    for chosen in itertools.combinations(pool, counts[0]):
        mask = sum(1 << c for c in chosen)
        rest = [c for c in pool if not mask >> c & 1]
        for tail in _splits(rest, counts[1:]):
            yield [mask, *tail]


class Target:
    """The fixed agent, asked one batch of decisions at a time (``act_batch`` when it has one).

    Args:
        spec: a deterministic agent (its action a function of the information set): the
            greedy networks (``exit``, ``neural``, ``policy``) or ``heuristic``.

    Raises:
        ValueError: an agent that is not deterministic (e.g. ``pimc``, ``ismcts``): the
            worlds consistent with its play, and so the exact best response, assume that
            its action is a function of the information set.
    """

    def __init__(self, spec: str):
        # the same check as the search responder's (its ValueError names the allowed agents)
        self.spec, self.agent = spec, TargetPolicy(spec).agent
        self.calls = 0

    def actions(self, states: list[State]) -> list[int]:
        """The target's action in each state, from its deciding seat's information set."""
        infos = [InfoSet(s, s.deciding_seat) for s in states]
        self.calls += len(states)
        if hasattr(self.agent, "act_batch"):
            return [int(a) for a in self.agent.act_batch(infos, [i.legal_actions for i in infos])]
        return [int(self.agent.act(i, i.legal_actions, np.random.default_rng(0))) for i in infos]


def consistent_worlds(info: InfoSet, target: Target, resp: frozenset[int], worlds=None) -> list[State]:
    """The states of the worlds in which the target made each of its past decisions as it did.

    Every world (``worlds``, 4 hand masks each; None: :func:`enumerate_hands`) is replayed
    from its dealt hands through the deal's public actions; at each decision of a seat the
    responder does not play, the worlds where the target would have chosen another action
    are dropped.
    """
    worlds = enumerate_hands(info) if worlds is None else worlds
    if not worlds:
        return []
    states = [State([int(h) for h in init], info.first_leader, info.num_players)
              for init in initial_hands(info, np.array(worlds, dtype=np.int64))]
    for a in public_actions(info):
        if not states:  # no world explains the target's play (it did not play these seats)
            break
        dec = states[0].deciding_seat  # public: the same in every world
        if dec not in resp:
            states = [s for s, t in zip(states, target.actions(states)) if t == a]
        for s in states:
            s.apply(a)
    return states


def _outcome(s: State, side: int) -> int:
    a, b = s.side_scores()
    return (a - b) if side == 0 else (b - a)


def _split(states: list[State], acts: list[int]) -> dict[int, list[State]]:
    groups: dict[int, list[State]] = {}
    for s, a in zip(states, acts):
        c = s.clone()
        c.apply(a)
        groups.setdefault(a, []).append(c)
    return groups


def exact_value(states: list[State], target: Target, resp: frozenset[int], side: int) -> tuple[float, dict]:
    """The exact best response's total outcome over ``states`` (worlds the responder cannot
    tell apart), and at the root each legal action's total.

    Returns:
        ``(total, {action: total})`` in deal points summed over the worlds (divide by their
        number for the mean); the dict is empty unless the responder decides at the root.
    """
    if states[0].done:
        return float(sum(_outcome(s, side) for s in states)), {}
    dec = states[0].deciding_seat
    if dec in resp:
        per = {}
        for a in states[0].legal_actions():
            per[a] = exact_value(_split(states, [a] * len(states))[a], target, resp, side)[0]
        return max(per.values()), per
    groups = _split(states, target.actions(states))
    return float(sum(exact_value(g, target, resp, side)[0] for g in groups.values())), {}


class SearchResponder:
    """The ``respond`` agent (module docstring).

    Args:
        target: the fixed agent's spec (:data:`TARGETS`).
        worlds: worlds kept per decision (>= 1); candidates: worlds drawn per kept world (>= 1).

    Raises:
        ValueError: a bad option or target.
    """

    stateless = True
    """Decisions depend only on (information set, legal actions, rng)."""

    def __init__(self, target: str = "exit:default", worlds: int = 32, candidates: int = 8, exact_tricks: int = 0,
                 max_worlds: int = 2000):
        _positive_int("worlds", worlds)
        _positive_int("candidates", candidates)
        _positive_int("max_worlds", max_worlds)
        if isinstance(exact_tricks, bool) or not isinstance(exact_tricks, int) or not 0 <= exact_tricks <= 3:
            raise ValueError(f"respond option exact_tricks must be an integer 0..3 (0: off), got {exact_tricks!r}")
        self.target = TargetPolicy(str(target))
        self.worlds, self.candidates = int(worlds), int(candidates)
        self.exact_tricks, self.max_worlds = int(exact_tricks), int(max_worlds)
        self._exact_target = None
        self.name = f"respond:target={target},worlds={worlds},candidates={candidates}" + (
            f",exact_tricks={exact_tricks},max_worlds={max_worlds}" if exact_tricks else "")
        self.last_consistent = None
        """Consistent worlds found at the last decision (of ``worlds × candidates`` drawn)."""

    def reset(self) -> None:
        """Nothing to reset: each decision draws fresh worlds."""

    def consistent_worlds(self, info, rng: np.random.Generator) -> np.ndarray:
        """``(k, 4)`` dealt hands of worlds in which the fixed agent's past decisions are
        its own (step 1 of the module docstring); all candidates when none is."""
        from twilight_env.agents.fast_ismcts import sample_hands

        hands = sample_hands(info, self.worlds * self.candidates, rng)
        init = initial_hands(info, hands)
        actions = public_actions(info)
        eng = VectorEngine(len(init), info.num_players)
        eng.reset(deals=init, leaders=np.full(len(init), info.first_leader))
        ok = np.ones(len(init), dtype=bool)
        mine = info.seat & 1
        for a in actions:
            dec = int(eng.deciding_seat[0])  # public: the same in every world
            if (dec & 1) != mine and ok.any():
                idx = np.flatnonzero(ok)
                ok[idx[self.target.actions(eng, idx) != a]] = False
            eng.apply(np.full(len(init), a, dtype=np.int64))
        self.last_consistent = int(ok.sum())
        keep = init[ok][:self.worlds] if ok.any() else init[:self.worlds]
        return keep

    def action_values(self, info, legal, rng: np.random.Generator) -> dict[int, float]:
        """Mean outcome for the responder's side (deal points, R5) of each legal action."""
        worlds = self.consistent_worlds(info, rng)
        legal = sorted(int(a) for a in legal)
        k, n = len(worlds), len(legal)
        init = np.repeat(worlds, n, axis=0)
        eng = _replay(info.num_players, init, info.first_leader, public_actions(info))
        eng.apply(np.tile(np.array(legal, dtype=np.int64), k))
        while True:
            live = np.flatnonzero(~eng.done)
            if not live.size:
                break
            acts = np.zeros(len(init), dtype=np.int64)
            acts[live] = self.target.actions(eng, live)
            eng.apply(acts, active=~eng.done)
        s = eng.side_scores()
        diff = (s[:, 0] - s[:, 1]).astype(np.float64) * (1 if info.seat & 1 == 0 else -1)
        means = diff.reshape(k, n).mean(axis=0)
        return {a: float(m) for a, m in zip(legal, means)}

    def act(self, info, legal_actions, rng: np.random.Generator) -> int:
        """The legal action of best mean outcome (lowest id on ties); a forced action without search."""
        if not legal_actions:
            raise ValueError("respond.act needs at least one legal action (the deal may be over)")
        if len(legal_actions) == 1:
            return int(legal_actions[0])
        values = None
        if self.exact_tricks and 7 - info.trick <= self.exact_tricks:
            values = self.exact_action_values(info)
        if values is None:
            values = self.action_values(info, legal_actions, rng)
        return max(sorted(values), key=lambda a: (values[a], -a))

    def exact_action_values(self, info) -> dict[int, float] | None:
        """Each legal action's mean outcome for the responder's side under the exact best
        response over the rest of the deal (:func:`exact_value`): every
        deal of the unseen cards in which the other side's target made its past decisions as
        it did, the target's policy on every other seat, and the deciding seat's later
        decisions chosen at each set of worlds the public actions leave indistinguishable
        (module docstring). None when more
        than ``max_worlds`` deals of the unseen cards exist or none is consistent (the
        sampled search then decides)."""
        every = enumerate_hands(info)
        if len(every) > self.max_worlds:
            return None
        if self._exact_target is None:
            self._exact_target = Target(self.target.spec)
        side = frozenset(s for s in range(4) if (s & 1) == (info.seat & 1))
        worlds = consistent_worlds(info, self._exact_target, side, every)  # the partner's past play filters nothing
        self.last_consistent = len(worlds)
        if not worlds:
            return None
        _, per = exact_value(worlds, self._exact_target, frozenset({info.seat}), info.seat & 1)
        return {a: v / len(worlds) for a, v in per.items()}


__all__ = ["SearchResponder", "TargetPolicy", "TARGETS", "public_actions", "initial_hands", "Target",
           "enumerate_hands", "consistent_worlds", "exact_value"]
