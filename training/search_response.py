"""A search responder: determinized search in which a fixed network agent's own policy plays its seats.

For a fixed agent whose action probabilities are known (``exit:...``, ``neural:...`` or
``policy:...``: a network over the deciding seat's compact row, greedy or sampled with
``temperature``, :mod:`twilight_env.agents.sampling`; or ``heuristic``), a responder on the
other side can simulate the agent *exactly* inside its search, because the agent's policy is
one forward pass. The ``respond`` agent (``respond:target=policy:default,worlds=32``) does so:

1. **Worlds weighted by the likelihood of the agent's play.** It draws ``worlds ×
   candidates`` deals of the unseen cards uniformly from its information set (R2.5;
   :func:`twilight_env.agents.fast_ismcts.sample_hands`), replays the deal's public actions
   in each with the batch engine and weighs each world by the likelihood of everything the
   fixed agent played: the product, over the other side's past decisions, of the agent's
   probability, in that world, of the action it took (Bayes' rule; all deals of the unseen
   cards are equally likely a priori, R2.3). A greedy agent's probabilities are 0 or 1, so
   its weights keep the worlds in which it would have made every one of its past decisions
   as it did; the first ``worlds`` of them are used (all candidates' first ``worlds`` if
   none is). For a sampled agent ``worlds`` draws are made from the candidates in
   proportion to their weights (sampling-importance-resampling), each distinct world kept
   once with its number of draws as its weight.
2. **Every legal action, played out.** In each kept world, each legal action is
   applied and the deal played to its end with the fixed agent's policy on every seat
   (the responder's own later decisions included; a sampled agent's actions drawn from its
   probabilities), all worlds and actions in lockstep, one forward pass per step.
3. It plays the action with the best weighted mean outcome for its side (R5; ties: lowest id).

Its margin against the fixed agent (duplicate deals, both sides) is a lower bound on the
agent's exploitability; it is the *search* responder of the exploitability table, beside the
DMC best responder of :mod:`twilight_env.training.best_response`. It looks one decision
ahead (its own later moves are the fixed agent's): a lower bound, not a best response.

In the last ``exact_tricks`` tricks (option, 0..3; 0, the default, is off) the responder
plays the exact best response instead: every deal of the unseen cards is enumerated
(when there are at most ``max_worlds``), each weighted by the likelihood of the target's
play (:func:`weighted_worlds`; the partner's past play, like the responder's own, weighs no
world), and the deciding seat's remaining decisions are chosen by backward induction with
the target's policy on every other seat, the partner's included, in expectation over a
sampled target's probabilities (:func:`exact_value`, validated by
:mod:`twilight_env.training.br_validation`). For the 3-player solo, who decides for both
Moon hands (R7.3), this is the exact best response to the target in those tricks; for a
seat with a partner it is exact when the partner plays the target's policy and its past
play is not used.

**The partner as a team member** (``team=joint``, with ``exact_tricks``; a seat with a
partner: the 3-player Sun side, either side in 4 players). The default (``independent``)
takes the partner to play the target's policy in the endgame, while in play the partner is
the responder too. With ``team=joint`` both seats of the side are the team's decisions in
the exact endgame: below the deciding seat's own action the worlds split by the partner's
hand and both seats choose by backward induction knowing both of the side's hands (and not
the other side's hidden ones): the team's best response if the partners showed each other
their hands after this decision (:func:`tree_value`, ``partner``), an upper bound on the
best response of a team without communication, the solution concept of the Sun side (a
team-maxmin plan, TMECor; Celli & Gatti 2018). In play each seat still decides from its
own information set alone, re-solving at each of its decisions, so the side is a team
without communication and its margin remains a lower bound on the target's
exploitability. Before the endgame each seat's search takes the partner to play the
target's policy, as with ``independent``; an endgame of more than ``max_worlds`` worlds is
left to that search too. Choosing by a plan solved with shared hands can mis-coordinate:
the partner, re-solving from its own information set, need not play the part the deciding
seat's plan gave it (``br_validation --mode team=S`` measures how far the pair stays below
the shared-hands value). On the 3-player solo's seat the option changes no value, but
agents draw their random numbers from their spec, so a spec with ``team=joint`` draws other
numbers, and plays other games, than the same spec without it.

**A target whose policy is not known** (``pimc``, ``ismcts``, ``guided``, any agent):
``respond:target=SPEC,model=MODEL`` *models* it, as the approximate best responses ISMCTS-BR
(Timbers et al. 2022) and local best response (LBR; Lisý & Bowling 2017) do. ``MODEL`` is an
agent whose action probabilities are known (:data:`TARGETS`, e.g. ``policy:default`` at a
``temperature``, or for ``guided`` the network prior it searches with, ``policy:default``
at temperature 1). The model replaces the target in steps 1 and 2 only: it weighs the
worlds by the likelihood of the real target's past play *under the model*, and it plays the
target's later moves in the playouts. The real target plays the deal. So that no world's
weight becomes 0 when the real target plays an action the model gives probability 0, the
likelihood of each past action is the model's probability mixed with the uniform
distribution over the legal actions there, ``(1 - epsilon) p(a) + epsilon / |legal|``
(option ``epsilon``, default :data:`MODEL_EPSILON`; only the weights use the mixture, the
playouts use the model itself). With a mixture every world keeps a positive weight, so
the worlds are drawn as for a sampled target (sampling-importance-resampling), a greedy
model's included. ``epsilon=0`` is allowed only when the model is the target itself; it
is then the known-target responder above, world for world. With ``epsilon=1`` and the target
as its model every consistent world weighs the same (each hand's cult counts are public,
R2.5): the *blind* responder of ``training/README.md``, which reads nothing off the play. In the last ``exact_tricks``
tricks the exact best response is to the model (its weights mixed the same way).

**The margin is still a lower bound.** The responder is a fixed agent on its side whatever
it uses to decide (a model that is wrong only makes it play worse), and the target's
exploitability is the most any agent on the other side wins against it: the duplicate
margin of any responder against the real target, modelled or not, is a lower bound on the
real target's exploitability (estimated from deals, hence its interval).

A target option holding commas cannot sit inside a ``respond`` spec, whose options are
split at commas: write the target's (or the model's) own options with ``;`` instead,
``respond:target=ismcts:backend=numba;iterations=6000,model=policy:default``.

Spec: ``respond:target=SPEC,worlds=32,candidates=8,exact_tricks=0,max_worlds=2000,team=independent`` where SPEC is ``policy:default``,
``policy:PATH``, ``neural:default``, ``neural:PATH``, ``mmd:RUN``, ``nfsp:PATH``, ``exit:PATH``, each with
an optional ``temperature`` (e.g. ``respond:target=policy:default,temperature=0.5``; the
``threads`` and ``backend`` options of those agents are not taken here), or ``heuristic``
(deterministic too: its compiled copy, :func:`twilight_env.agents.fast_rollout.decide_state`,
which ``tests/agents/test_fast_rollout.py`` holds equal to it, is what is simulated).
"""

from __future__ import annotations

import itertools

import numpy as np
import torch

from twilight_env.agents import sampling
from twilight_env.agents.base import AgentSpecError, agent_name, check_nested_spelling, make_agent, network_players
from twilight_env.agents.pimc import check_positive_int
from twilight_env.envs.vector import VectorEngine
from twilight_env.rules.cards import MOON_MASK, SUN_MASK, deck_words
from twilight_env.rules.engine import NUM_ACTIONS, NUM_TRICKS, State
from twilight_env.rules.infoset import InfoSet
from twilight_env.training.target_model import (MODEL_EPSILON, TARGETS, MixedTarget, mix_uniform,  # noqa: F401
                                                 resolve_model)
from twilight_env.training.vec_selfplay import greedy_actions, vector_rows

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


def _target_temperature(agent) -> float:
    return float(getattr(agent, "temperature", 0.0) or 0.0)


class NotATarget(ValueError):
    """A spec that builds an agent whose action probabilities are not known (not in
    :data:`TARGETS`): the search responder needs a model of it (``respond``'s ``model``)."""


class TargetPolicy:
    """The exact policy of a fixed agent over batch-engine rows: its greedy action, or (a
    sampled network agent) its action probabilities.

    Args:
        spec: ``exit:...``, ``neural:...``, ``policy:...``, ``mmd:...``, ``nfsp:...`` (any
            ``temperature``) or ``heuristic`` (:data:`TARGETS`); an agent that offers
            ``probs_rows(eng, idx) -> (len(idx), 31)`` probabilities (``nfsp``) is read through it.

    Raises:
        NotATarget: an agent built from ``spec`` whose probabilities are not known.
        ValueError: a bad spec or checkpoint (as :func:`make_agent`), or a network trained
            on a reduced deck (its ``tricks``; the batch engine deals the full deck).
    """

    def __init__(self, spec: str):
        agent = make_agent(spec)
        kind = agent_name(spec)
        if kind not in TARGETS or not (kind == "heuristic" or hasattr(agent, "net_for") or hasattr(agent, "model_for")
                                       or hasattr(agent, "probs_rows")):
            raise NotATarget(f"the target must be an agent whose action probabilities are known ("
                             f"{', '.join(TARGETS)}; the networks at any temperature), got {spec!r}")
        tricks = getattr(agent, "tricks", NUM_TRICKS)
        if tricks != NUM_TRICKS:  # the batch engine deals the full deck (R2.3)
            raise ValueError(f"respond: the target {spec!r} was trained on {deck_words(tricks)}; the responder "
                             f"plays {deck_words(NUM_TRICKS)}: give a target trained on it (--tricks 7)")
        self.spec, self.kind, self.agent = spec, kind, agent
        self.rows_only = not (kind == "heuristic" or hasattr(agent, "net_for") or hasattr(agent, "model_for"))
        """True for a target that gives its policy only through ``probs_rows(eng, idx)`` (``nfsp``)."""
        self.temperature = _target_temperature(agent)
        self.deterministic = self.temperature == 0
        """True when the target plays one action per information set (temperature 0, or the heuristic)."""

    def actions(self, eng: VectorEngine, idx: np.ndarray, rng: np.random.Generator | None = None) -> np.ndarray:
        """The agent's action in each row ``idx`` of ``eng`` (deals in progress), as it would
        choose from its deciding seat's information there: its greedy action, or for a sampled
        target a draw from :meth:`probs` with ``rng`` (one uniform per row).
        Returns ``(len(idx),)`` int64."""
        if not self.deterministic:
            return sampling.sample(self.probs(eng, idx), rng)
        if self.rows_only:  # greedy: the agent's most probable action (its probs are one-hot at T = 0)
            return self.agent.probs_rows(eng, idx).argmax(1)
        if self.kind == "heuristic":
            from twilight_env.agents.fast_rollout import decide_state

            return np.array([decide_state(eng.to_state(int(i))) for i in idx], dtype=np.int64)
        rows, roles, bits, legal = self._inputs(eng, idx)
        if self.kind == "policy":  # the NumPy network: the greedy action, lowest id on ties, as the agent
            probs, _ = self.agent.net_for(eng.num_players).forward(rows, roles, legal)
            return np.where(legal, probs, -1.0).argmax(1)
        model = self.agent.model_for(eng.num_players)
        if self.kind == "neural":
            return greedy_actions(model, rows, roles, bits, "cpu")
        with torch.no_grad():
            logits, _ = model(torch.from_numpy(rows), torch.from_numpy(roles), torch.from_numpy(legal))
        return logits.argmax(1).numpy()  # the first maximum: ties to the lowest id, as the agent

    def probs(self, eng: VectorEngine, idx: np.ndarray) -> np.ndarray:
        """The agent's action probabilities in each row ``idx`` of ``eng``, as its
        ``action_probs`` gives them from the deciding seat's information set there.

        Returns:
            ``(len(idx), 31)`` float64 by action id, 0 on illegal actions, rows summing to 1
            (one-hot at the greedy action for a deterministic target).
        """
        if self.kind == "heuristic":
            return sampling.one_hot(self.actions(eng, idx))
        if self.rows_only:
            return np.asarray(self.agent.probs_rows(eng, np.asarray(idx, dtype=np.int64)), dtype=np.float64)
        rows, roles, bits, legal = self._inputs(eng, idx)
        t = self.temperature
        if self.kind == "policy":
            probs, _ = self.agent.net_for(eng.num_players).forward(rows, roles, legal)
            return sampling.tempered_probs(probs, legal, t)
        model = self.agent.model_for(eng.num_players)
        if self.kind == "neural":
            owner, acts = np.nonzero(legal)
            if isinstance(model, torch.nn.Module):
                with torch.no_grad():
                    q = model(*(torch.from_numpy(x) for x in (rows, roles, acts, owner))).numpy()
            else:  # the NumPy backend
                q = model.forward(rows, roles, acts, owner)
            full = np.zeros(legal.shape, dtype=np.float64)
            full[owner, acts] = q
            return sampling.boltzmann(full, legal, t)
        with torch.no_grad():
            logits, _ = model(torch.from_numpy(rows), torch.from_numpy(roles), torch.from_numpy(legal))
            probs = torch.softmax(logits, dim=1).numpy()
        return sampling.tempered_probs(probs, legal, t)

    @staticmethod
    def _inputs(eng: VectorEngine, idx: np.ndarray):
        """Compact rows, heads, legal bits and the ``(k, 31)`` legal mask of rows ``idx``."""
        rows = vector_rows(eng, eng.deciding_seat)[idx]
        roles = eng.acting_seat[idx] if eng.num_players == 3 else np.zeros(idx.size, dtype=np.int64)
        bits = eng.legal_bits()[idx]
        legal = ((bits[:, None] >> np.arange(NUM_ACTIONS)) & 1).astype(bool)
        return rows, roles, bits, legal


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

TEAM_MODES = ("independent", "joint")
"""The ``respond`` option ``team``: how the exact endgame plays the responder's partner."""


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
        spec: an agent whose action probabilities are known (:data:`TARGETS`): the network
            agents (``exit``, ``neural``, ``policy``; greedy, or sampled with ``temperature``)
            or ``heuristic``.

    Raises:
        ValueError: any other agent (e.g. ``pimc``, ``ismcts``): the likelihood of its past
            play in a world, and so the exact best response, needs its action probabilities
            as a function of the information set.
    """

    def __init__(self, spec: str):
        # the same check as the search responder's (its ValueError names the allowed agents)
        self.spec, self.agent = spec, TargetPolicy(spec).agent
        self.deterministic = _target_temperature(self.agent) == 0
        """True when the target plays one action per information set."""
        self.calls = 0

    def actions(self, states: list[State], rng: np.random.Generator | None = None) -> list[int]:
        """The target's action in each state, from its deciding seat's information set (a
        sampled target: a draw from :meth:`probs` with ``rng``)."""
        infos = [InfoSet(s, s.deciding_seat) for s in states]
        self.calls += len(states)
        if not self.deterministic:
            return [int(a) for a in sampling.sample(self._probs(infos), rng)]
        if hasattr(self.agent, "act_batch"):
            return [int(a) for a in self.agent.act_batch(infos, [i.legal_actions for i in infos])]
        return [int(self.agent.act(i, i.legal_actions, np.random.default_rng(0))) for i in infos]

    def probs(self, states: list[State]) -> np.ndarray:
        """``(len(states), 31)`` float64: the target's action probabilities in each state
        (one-hot at its action for a deterministic target)."""
        if self.deterministic:
            return sampling.one_hot(np.array(self.actions(states), dtype=np.int64))
        self.calls += len(states)
        return self._probs([InfoSet(s, s.deciding_seat) for s in states])

    def _probs(self, infos) -> np.ndarray:
        return self.agent.action_probs_batch(infos, [i.legal_actions for i in infos])


def weighted_worlds(info: InfoSet, target: Target, resp: frozenset[int], worlds=None) -> tuple[list[State], np.ndarray]:
    """The worlds of an information set with the likelihood of the target's past play in each.

    Every world (``worlds``, 4 hand masks each; None: :func:`enumerate_hands`) is replayed
    from its dealt hands through the deal's public actions; at each decision of a seat the
    responder does not play, the world's weight is multiplied by the target's probability of
    the action that was played there (Bayes' rule: all deals of the unseen cards are equally
    likely a priori, R2.3, so the posterior of a world is its weight over the total). Worlds
    of weight 0 are dropped. For a deterministic target the weights are 1 on the worlds in
    which it would have made each of its past decisions as it did.

    Returns:
        the kept worlds' states (at the information set's position) and their weights,
        ``(k,)`` float64 in (0, 1].
    """
    worlds = enumerate_hands(info) if worlds is None else worlds
    if not worlds:
        return [], np.zeros(0)
    states = [State([int(h) for h in init], info.first_leader, info.num_players)
              for init in initial_hands(info, np.array(worlds, dtype=np.int64))]
    weights = np.ones(len(states))
    for a in public_actions(info):
        if not states:  # no world explains the target's play (it did not play these seats)
            break
        dec = states[0].deciding_seat  # public: the same in every world
        if dec not in resp:
            if target.deterministic:
                keep = np.array(target.actions(states)) == a
            else:
                weights = weights * target.probs(states)[:, a]
                keep = weights > 0
            states = [s for s, k in zip(states, keep) if k]
            weights = weights[keep]
        for s in states:
            s.apply(a)
    return states, weights


def consistent_worlds(info: InfoSet, target: Target, resp: frozenset[int], worlds=None) -> list[State]:
    """The states of the worlds in which the target's past play has a positive likelihood
    (:func:`weighted_worlds` without the weights): for a deterministic target, those in
    which it made each of its past decisions as it did."""
    return weighted_worlds(info, target, resp, worlds)[0]


def outcome(s: State, side: int) -> int:
    """Side ``side``'s deal points minus the other side's in finished state ``s`` (R5)."""
    a, b = s.side_scores()
    return (a - b) if side == 0 else (b - a)


def split_by_action(states: list[State], acts: list[int]) -> dict[int, list[State]]:
    """``{action: [copy of each state with that action played]}``, ``acts[i]`` played in ``states[i]``."""
    groups: dict[int, list[State]] = {}
    for s, a in zip(states, acts):
        c = s.clone()
        c.apply(a)
        groups.setdefault(a, []).append(c)
    return groups


def target_branches(states: list[State], weights: np.ndarray | None, target: Target):
    """The target's move at a decision of its own, over worlds the responder cannot tell
    apart: ``(action, child states, child weights)`` for each action the target may play in
    some world, the worlds where it may, each weight times the action's probability there
    (weights None: all 1, a deterministic target's groups of :func:`split_by_action`)."""
    if target.deterministic:
        acts = target.actions(states)
        groups = split_by_action(states, acts)
        if weights is None:
            return [(a, g, None) for a, g in groups.items()]
        acts = np.array(acts)
        return [(a, g, weights[acts == a]) for a, g in groups.items()]
    w = np.ones(len(states)) if weights is None else weights
    p = target.probs(states)
    out = []
    for a in np.flatnonzero((p > 0).any(axis=0)):
        sel = np.flatnonzero(p[:, a] > 0)
        out.append((int(a), split_by_action([states[i] for i in sel], [int(a)] * sel.size)[int(a)], w[sel] * p[sel, a]))
    return out


def total_outcome(states: list[State], weights: np.ndarray | None, side: int) -> float:
    """The sum of :func:`outcome` over finished ``states`` (times ``weights``, None: all 1)."""
    if weights is None:
        return float(sum(outcome(s, side) for s in states))
    return float(np.dot(weights, [outcome(s, side) for s in states]))


def exact_value(states: list[State], target: Target, resp: frozenset[int], side: int,
                weights: np.ndarray | None = None) -> tuple[float, dict]:
    """The exact best response's total outcome over ``states`` (worlds the responder cannot
    tell apart, weighted by ``weights``, the likelihood of the target's play in each, from
    :func:`weighted_worlds`; None: all 1), and at the root each legal action's total. At the
    target's decisions the value is the expectation over its action probabilities.

    Returns:
        ``(total, {action: total})`` in deal points summed over the worlds times their
        weights (divide by the weights' sum for the mean); the dict is empty unless the
        responder decides at the root.
    """
    if not target.deterministic:
        return tree_value(states, np.ones(len(states)) if weights is None else weights, target, resp, side)
    if states[0].done:
        return total_outcome(states, weights, side), {}
    dec = states[0].deciding_seat
    if dec in resp:
        per = {}
        for a in states[0].legal_actions():
            per[a] = exact_value(split_by_action(states, [a] * len(states))[a], target, resp, side, weights)[0]
        return max(per.values()), per
    return float(sum(exact_value(g, target, resp, side, w)[0]
                     for _, g, w in target_branches(states, weights, target))), {}


def tree_value(states: list[State], weights: np.ndarray, target: Target, resp: frozenset[int], side: int,
               responder=None, rng: np.random.Generator | None = None, best: bool = True,
               partner: int | None = None) -> tuple[float, dict]:
    """:func:`exact_value` (``best``) or a responder's value, computed level by level: the
    states of one depth are expanded together and the target's probabilities at all of
    them come from one batch (a sampled target branches on every action it may play, so the
    depth-first recursion would ask for them one small group at a time).

    Every state is keyed by the public actions played since the root: the states of one key
    are the worlds the responder cannot tell apart (all plays are public). A key's total is
    the sum of its worlds' weighted outcomes at the end, the sum over the target's actions at
    its decisions, and at the responder's decisions the largest over its legal actions
    (``best``), or the total after the action ``responder`` (an agent) takes from its
    information set, drawing on ``rng``; ``best`` False with no responder: the target plays
    the responder seats too.

    ``partner`` (a seat of ``resp``; None: no split): the team's value with information
    shared after the root decision. Below each root action the worlds split by the
    partner's hand (keys gain ``-1 - hand``), so the decisions of both team seats are taken
    knowing both of the side's hands and not the other side's hidden ones: the value of a
    team that shows each other its hands after this decision, an upper bound on what a team
    without communication can reach from here (the joint responder, :class:`SearchResponder`).

    Returns:
        ``(total, {action: total})`` as :func:`exact_value`, the dict filled when the
        responder decides at the root (with ``responder``: its one action there).
    """
    kind: dict[tuple, str] = {}
    kids: dict[tuple, set] = {}
    ends: dict[tuple, float] = {}
    items = [(s, float(w), ()) for s, w in zip(states, weights)]
    while items:
        groups: dict[tuple, list] = {}
        for it in items:
            groups.setdefault(it[2], []).append(it)
        items, mine_to_move = [], []
        for key, its in groups.items():
            s0 = its[0][0]
            if s0.done:
                kind[key] = "end"
                ends[key] = float(sum(w * outcome(s, side) for s, w, _ in its))
                continue
            if partner is not None and len(key) == 1:  # just below the root: split by the partner's hand
                kind[key] = "sum"
                split = [(s, w, key + (-1 - int(s.hands[partner]),)) for s, w, _ in its]
                kids[key] = {k for _, _, k in split}
                items.extend(split)
                continue
            if s0.deciding_seat in resp and (best or responder is not None):
                kind[key] = "max" if best else "pick"
                if best:
                    acts = s0.legal_actions()
                else:
                    info = InfoSet(s0, s0.deciding_seat)
                    legal = info.legal_actions
                    acts = [int(legal[0]) if len(legal) == 1 else int(responder.act(info, legal, rng))]
                kids[key] = {key + (int(a),) for a in acts}
                items.extend((_child(s, a), w, key + (int(a),)) for s, w, _ in its for a in acts)
            else:
                kind[key] = "sum"
                kids[key] = set()
                mine_to_move.extend(its)
        if mine_to_move:
            probs = target.probs([s for s, _, _ in mine_to_move])
            for (s, w, key), p in zip(mine_to_move, probs):
                for a in np.flatnonzero(p > 0):
                    kids[key].add(key + (int(a),))
                    items.append((_child(s, int(a)), w * float(p[a]), key + (int(a),)))
    return _back_up(kind, kids, ends)


def _back_up(kind: dict[tuple, str], kids: dict[tuple, set], ends: dict[tuple, float]) -> tuple[float, dict]:
    """``(total, {action: total})`` of :func:`tree_value` from its tree: each key's
    ``kind`` (``"end"``, ``"max"``, ``"pick"`` or ``"sum"``), children and end totals,
    valued from the deepest keys up."""
    value: dict[tuple, float] = {}
    for key in sorted(kind, key=len, reverse=True):
        k = kind[key]
        if k == "end":
            value[key] = ends[key]
        elif k == "max":
            value[key] = max(value[c] for c in kids[key])
        else:
            value[key] = float(sum(value[c] for c in sorted(kids[key])))
    per = {c[0]: value[c] for c in sorted(kids.get((), ()))} if kind[()] in ("max", "pick") else {}
    return value[()], per


def _child(state: State, action: int) -> State:
    c = state.clone()
    c.apply(int(action))
    return c


class SearchResponder:
    """The ``respond`` agent (module docstring).

    Args:
        target: the fixed agent's spec: an exact target (:data:`TARGETS`, any temperature),
            or with ``model`` any agent (``;`` for the commas of its options).
        worlds: worlds kept per decision (>= 1; for a sampled target, draws); candidates:
            worlds drawn per kept world (>= 1).
        temperature: the *simulated* agent's ``temperature``: the target's, or the model's
            when there is one (None: the spec's own, 0 by default). In a spec string
            ``respond:target=policy:default,temperature=0.5`` the comma makes it an option of
            ``respond``, which hands it on; the responder itself always plays its best action.
        model: None (the target is simulated), or the spec of the exact target that stands
            in for the target (module docstring: a modelled target).
        epsilon: a model's uniform share in the likelihood weights (:func:`mix_uniform`;
            None: :data:`MODEL_EPSILON`; 0 only with the target itself as the model).
        team: ``independent`` or ``joint`` (:data:`TEAM_MODES`; module docstring): in the
            exact endgame, the partner plays the target's policy, or the side is solved as one
            team (needs ``exact_tricks`` >= 1; no effect for the 3-player solo, who decides for
            both Moon hands already).

    Raises:
        ValueError: a bad option, target or model (``team=joint`` without ``exact_tricks``, a
            temperature for ``heuristic``, one given both here and in the spec, a target whose
            probabilities are not known without a model, ``epsilon`` without one).
    """

    stateless = True
    """Decisions depend only on (information set, legal actions, rng)."""

    def __init__(self, target: str = "policy:default", worlds: int = 32, candidates: int = 8, exact_tricks: int = 0,
                 max_worlds: int = 2000, temperature: float | None = None, model: str | None = None,
                 epsilon: float | None = None, team: str = "independent"):
        check_nested_spelling(target, "respond option target")
        check_nested_spelling(model, "respond option model")
        real, simulated, self.epsilon = resolve_model(target, model, temperature, epsilon)
        check_positive_int("worlds", worlds)
        check_positive_int("candidates", candidates)
        check_positive_int("max_worlds", max_worlds)
        if isinstance(exact_tricks, bool) or not isinstance(exact_tricks, int) or not 0 <= exact_tricks <= 3:
            raise ValueError(f"respond option exact_tricks must be an integer 0..3 (0: off), got {exact_tricks!r}")
        if team not in TEAM_MODES:
            raise ValueError(f"respond option team must be one of {', '.join(TEAM_MODES)}, got {team!r}")
        if team == "joint" and not exact_tricks:
            raise ValueError("respond option team=joint solves the side's endgame as one team: "
                             "give exact_tricks=1..3 with it")
        self.team = team
        try:
            self.target = TargetPolicy(simulated)
        except ValueError as e:
            if model is not None:
                message = f"respond: bad model {simulated!r} ({e})"  # names the model's spec: not the outer one too
                raise (AgentSpecError(message, e.spec) if isinstance(e, AgentSpecError)
                       else ValueError(message)) from None
            if isinstance(e, NotATarget):
                raise ValueError(f"{e}; for any other agent give a model of it, e.g. "
                                 f"respond:target={target},model=policy:default") from None
            raise
        """The policy simulated: the target's own, or its model's."""
        self.real_target, self.modelled = real, model is not None
        self.filters = self.target.deterministic and not self.epsilon
        """True when the worlds are filtered (kept or not) rather than weighted: a
        deterministic target simulated exactly (module docstring, step 1)."""
        self.worlds, self.candidates = int(worlds), int(candidates)
        self.exact_tricks, self.max_worlds = int(exact_tricks), int(max_worlds)
        self._exact_target = None
        head = (f"respond:target={str(target).replace(',', ';')},model={simulated.replace(',', ';')},"
                f"epsilon={self.epsilon:g}" if self.modelled else f"respond:target={simulated}")
        self.name = f"{head},worlds={worlds},candidates={candidates}" + (
            f",exact_tricks={exact_tricks},max_worlds={max_worlds}" if exact_tricks else "") + (
            ",team=joint" if team == "joint" else "")
        self.last_consistent = None
        """Consistent worlds found at the last decision (of ``worlds × candidates`` drawn)."""

    @property
    def num_players(self) -> int | None:
        """The player count the simulated target's network was trained for (3 or 4), or None
        when it plays both (:func:`~twilight_env.agents.base.network_players`)."""
        return network_players(self.target.agent)

    def reset(self) -> None:
        """Nothing to reset: each decision draws fresh worlds."""

    def likelihoods(self, info, init: np.ndarray) -> np.ndarray:
        """The likelihood of the target's past play in each world (step 1 of the module
        docstring): the product, over the deal's decisions of the other side, of the target's
        probability of the action played there, in that world.

        Args:
            info: the responder's information set.
            init: ``(n, 4)`` int64 dealt hands of the worlds (:func:`initial_hands`).

        Returns:
            ``(n,)`` float64 in [0, 1]; for a deterministic target 1 where it would have made
            each of its past decisions as it did, else 0. A modelled target (``model``): the
            model's probabilities mixed with the uniform one (:func:`mix_uniform`,
            ``epsilon``), positive in every world where the actions played were legal.
        """
        eng = VectorEngine(len(init), info.num_players)
        eng.reset(deals=init, leaders=np.full(len(init), info.first_leader))
        w = np.ones(len(init))
        mine = info.seat & 1
        for a in public_actions(info):
            dec = int(eng.deciding_seat[0])  # public: the same in every world
            if (dec & 1) != mine and (w > 0).any():
                idx = np.flatnonzero(w > 0)
                if self.filters:
                    w[idx[self.target.actions(eng, idx) != a]] = 0.0
                elif self.epsilon:
                    legal = ((eng.legal_bits()[idx][:, None] >> np.arange(NUM_ACTIONS)) & 1).astype(bool)
                    w[idx] *= mix_uniform(self.target.probs(eng, idx), legal, self.epsilon)[:, a]
                else:
                    w[idx] *= self.target.probs(eng, idx)[:, a]
            eng.apply(np.full(len(init), a, dtype=np.int64))
        return w

    def weighted_worlds(self, info, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray | None]:
        """``(k, 4)`` dealt hands of the worlds to play out and their weights (step 1 of the
        module docstring).

        A deterministic target: the first ``worlds`` of the candidates in which its past
        decisions are its own (all candidates' first ``worlds`` when none is), weights None
        (all equal). A sampled or modelled target (:attr:`filters` False): ``worlds`` draws from the candidates with probability
        proportional to :meth:`likelihoods` (sampling-importance-resampling), each distinct
        world once with its number of draws as its weight.
        """
        from twilight_env.agents.fast_ismcts import sample_hands

        hands = sample_hands(info, self.worlds * self.candidates, rng)
        init = initial_hands(info, hands)
        w = self.likelihoods(info, init)
        ok = w > 0
        self.last_consistent = int(ok.sum())
        if self.filters or not ok.any():
            return (init[ok][:self.worlds] if ok.any() else init[:self.worlds]), None
        draws = rng.choice(len(init), size=self.worlds, p=w / w.sum())
        kept, counts = np.unique(draws, return_counts=True)
        return init[kept], counts.astype(np.float64)

    def consistent_worlds(self, info, rng: np.random.Generator) -> np.ndarray:
        """``(k, 4)`` dealt hands of the worlds :meth:`weighted_worlds` plays out (without
        their weights): for a deterministic target those in which its past decisions are
        its own (all candidates when none is)."""
        return self.weighted_worlds(info, rng)[0]

    def action_values(self, info, legal, rng: np.random.Generator) -> dict[int, float]:
        """Mean outcome for the responder's side (deal points, R5) of each legal action,
        over the kept worlds weighted as :meth:`weighted_worlds` gives them; a sampled
        target's later actions are drawn with ``rng``."""
        worlds, weights = self.weighted_worlds(info, rng)
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
            acts[live] = self.target.actions(eng, live, rng)
            eng.apply(acts, active=~eng.done)
        s = eng.side_scores()
        diff = (s[:, 0] - s[:, 1]).astype(np.float64) * (1 if info.seat & 1 == 0 else -1)
        if weights is None:
            means = diff.reshape(k, n).mean(axis=0)
        else:
            means = weights @ diff.reshape(k, n) / weights.sum()
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
        # the partner's past play, like the responder's own, weighs no world
        weigh = MixedTarget(self._exact_target, self.epsilon) if self.epsilon else self._exact_target
        worlds, weights = weighted_worlds(info, weigh, side, every)
        self.last_consistent = len(worlds)
        if not worlds:
            return None
        partner = info.seat ^ 2
        if self.team == "joint" and not (info.num_players == 3 and NEW_MOON in (info.seat, partner)):
            w = np.ones(len(worlds)) if weights is None else weights
            _, per = tree_value(worlds, w, self._exact_target, side, info.seat & 1, partner=partner)
            return {a: v / w.sum() for a, v in per.items()}
        if weigh.deterministic:
            _, per = exact_value(worlds, self._exact_target, frozenset({info.seat}), info.seat & 1)
            return {a: v / len(worlds) for a, v in per.items()}
        _, per = exact_value(worlds, self._exact_target, frozenset({info.seat}), info.seat & 1, weights)
        return {a: v / weights.sum() for a, v in per.items()}


__all__ = ["SearchResponder", "TargetPolicy", "NotATarget", "TARGETS", "MODEL_EPSILON", "mix_uniform", "MixedTarget", "public_actions", "initial_hands", "Target",
           "enumerate_hands", "consistent_worlds", "weighted_worlds", "target_branches", "exact_value", "tree_value"]


# The declaration (twilight_env.agents.declaration): read from this source without importing it.
from twilight_env.agents.base import AgentDecl, Option, declare  # noqa: E402

declare(AgentDecl(
    name="respond", factory=SearchResponder, summary="the search responder to a fixed target agent",
    needs="torch", searches=True, shipped_weights=True,
    options=(
        Option("target", str, "policy:default", doc="the fixed agent's spec (an exact target)", holds="spec"),
        Option("worlds", int, 32, low=1, doc="worlds per decision"),
        Option("candidates", int, 8, low=1, doc="worlds drawn per kept world"),
        Option("exact_tricks", int, 0, low=0, high=3, doc="tricks left solved exactly (0: off)"),
        Option("max_worlds", int, 2000, low=1, doc="most consistent worlds enumerated"),
        Option("temperature", float, None, low=0, high=100,
               doc="the simulated agent's temperature: the target's, or the model's (default: its own)"),
        Option("model", str, None, doc="an exact target standing in for a target whose policy is not known",
               holds="spec", exact_target=True),
        Option("epsilon", float, None, low=0, high=1, doc="the model's uniform share in the weights (default 0.05)"),
        Option("team", str, "independent", choices=("independent", "joint"), requires=(("exact_tricks", (1, 2, 3)),),
               doc="the partner in the exact endgame: independent (the target's policy) or joint (the team's best)"),
    )))
