"""``policy``: the expert-iteration network alone, played with NumPy (no search, no torch).

The agent plays the legal action of highest probability under the policy head of
:class:`twilight_env.agents.exit.PolicyValueNet` (Anthony, Tian & Barber 2017; trained on
search decisions by ``python -m twilight_env.training.exit``), computed by
:class:`twilight_env.agents.nn.numpy_pv.NumpyPolicyValueNet`, which equals torch's forward
pass within float32 tolerance. It is the ``exit`` agent's decision rule on a NumPy
forward pass: no torch at play time, and 0.4 ms of CPU per decision on one core
(``python benchmarks/decision_time.py policy guided ismcts --players 3 --deals 5``, idle
machine; 0.6 ms beside two other jobs, where ``exit`` with torch took 1.9 ms).

Input: the compact row of the deciding seat's information set
(:func:`twilight_env.agents.nn.features.infoset_row`: only what that seat may know, R2.5,
R7.1), its role (:func:`~twilight_env.agents.nn.features.role_of`) and the legal actions
(R3.2, R3.5); an action outside ``legal_actions`` is never played. Ties go to the lowest
action id, as in ``exit``.

Sampling: ``temperature=T`` (0 by default: the greedy play above) plays the network's
distribution sharpened or flattened, ``p(a)^(1/T)`` normalised over the legal actions
(``T = 1``: the network's own policy; :mod:`twilight_env.agents.sampling`), drawing from the
generator passed to ``act`` only; :meth:`PolicyAgent.action_probs` gives that distribution.

Spec: ``policy`` or ``policy:default`` reads the shipped weights, chosen by the deal's
number of players (:data:`DEFAULT_WEIGHTS`); ``policy:PATH`` reads a ``.npz`` of
:func:`~twilight_env.agents.nn.numpy_pv.save_pv_npz` (no torch) or an expert-iteration
checkpoint / run directory (read with torch, then played with NumPy);
``policy:default,temperature=0.5`` samples (above).

Deck: a network whose file records a reduced deck (``tricks`` below 7, as MMD runs on
reduced decks write) plays deals of that deck only; the shipped full-deck networks play
reduced-deck deals too (:meth:`PolicyAgent.check_deck`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from twilight_env.rules.cards import deck_mask, deck_words  # deck_words: named here too
from twilight_env.rules.engine import NUM_ACTIONS, NUM_TRICKS

from twilight_env.agents.nn.features import infoset_row, role_of
from twilight_env.agents.sampling import check_temperature, legal_matrix, sample, temperature_suffix, tempered_probs

WEIGHTS_DIR = Path(__file__).resolve().parent / "weights"
"""Folder of the shipped weights."""
DEFAULT_WEIGHTS = {3: "policy_3p.npz", 4: "policy_4p.npz"}
"""The shipped network of ``policy:default`` per number of players (files in :data:`WEIGHTS_DIR`):
3 players, the iteration-8 network ``results/exit_scale/3p_it8``; 4 players, the iteration-6
network ``results/exit_scale/4p_it6`` (``results/exit_scale/README.md``)."""
DEFAULT_SOURCES = {3: "results/exit_scale/3p_it8/checkpoint.pt", 4: "results/exit_scale/4p_it6/checkpoint.pt"}
"""The training checkpoint each default file was exported from (``export_pv_npz``), relative to
the repository root (tested equal)."""


def default_weights(num_players: int) -> Path:
    """Path of the shipped ``.npz`` of ``policy:default`` for 3 or 4 players.

    Raises:
        ValueError: a number of players other than 3 or 4.
    """
    if num_players not in DEFAULT_WEIGHTS:
        raise ValueError(f"policy:default has weights for 3 and 4 players, not {num_players!r}")
    return WEIGHTS_DIR / DEFAULT_WEIGHTS[num_players]


def load_network(path: str, num_players: int | None = None):
    """The NumPy network of a ``policy`` path and its number of players.

    Args:
        path: ``"default"`` (needs ``num_players``), a ``.npz`` weights file, or an
            expert-iteration checkpoint file / run directory (needs torch).
        num_players: the variant the caller needs (None: any, unless ``path`` is ``"default"``).

    Returns:
        ``(NumpyPolicyValueNet, num_players)``.

    Raises:
        ValueError: a missing, damaged or mismatched file, naming it.
    """
    from twilight_env.agents.nn.numpy_pv import NumpyPolicyValueNet, load_pv_npz

    if path == "default":
        return load_pv_npz(default_weights(num_players), num_players)
    if str(path).endswith(".npz"):
        return load_pv_npz(path, num_players)
    from twilight_env.agents.exit import load_model

    model, npl = load_model(path, num_players)
    return NumpyPolicyValueNet({k: v.detach().numpy() for k, v in model.state_dict().items()},
                               model.cfg.to_dict()), npl


class PolicyAgent:
    """The policy network's most probable legal action, or a sample of its policy (module docstring).

    Args:
        path: ``"default"``, a ``.npz`` weights file, or an expert-iteration checkpoint
            file / run directory (read with torch when it is built).
        temperature: 0 (greedy, the default) or ``T`` in ``(0, 100]``: sample ``p^(1/T)``.

    Raises:
        ValueError: a missing, corrupt or mismatched weights file (naming it), a path
            that is not a non-empty string, or a temperature outside ``[0, 100]``.
    """

    stateless = True
    """Decisions depend only on (information set, legal actions, rng): one instance may play
    many deals at once (``twilight_env.experiments.common.play_lockstep``)."""
    kind = "policy"
    """The spec's agent name, for messages."""
    strict_deck = False
    """Whether a full-deck network refuses deals of a reduced deck too (:meth:`check_deck`;
    ``mmd``: yes). A network trained on a reduced deck plays deals of that deck only, always."""

    def __init__(self, path: str = "default", temperature: float = 0.0):
        if not isinstance(path, str) or not path:
            raise ValueError(f"policy: path must be 'default', a .npz weights file or an exit checkpoint, "
                             f"got {path!r}")
        self.temperature = check_temperature(temperature, "policy")
        self.path = path
        self._nets: dict = {}
        if path != "default":  # the file is loaded and checked now, when the agent is built
            try:
                net, npl = load_network(path)
            except ValueError as e:
                raise ValueError(f"policy option path={path!r}: {e}") from None
            self._nets[npl] = net
        self._deck_guard = self.strict_deck or any(n.tricks != NUM_TRICKS for n in self._nets.values())
        self.name = ("policy" if path == "default" else f"policy:{path}")
        if self.temperature:
            self.name = f"policy:{path}{temperature_suffix(self.temperature)}"

    @property
    def num_players(self) -> int | None:
        """The variant a weights file was trained for (3 or 4), or None for ``default``,
        which holds both."""
        return None if self.path == "default" else next(iter(self._nets))

    @property
    def tricks(self) -> int:
        """Tricks per deal of the deck the network was trained on (7: the full deck; the
        shipped weights and a file that records no deck), as its ``.npz`` records it (R2.3)."""
        return min((net.tricks for net in self._nets.values()), default=NUM_TRICKS)

    def net_for(self, num_players: int):
        """The NumPy network for a variant, loaded on first use.

        Raises:
            ValueError: weights of the other variant, or missing or corrupt shipped weights.
        """
        net = self._nets.get(num_players)
        if net is None:
            if self.path != "default":
                raise ValueError(f"policy weights {self.path!r} are for {next(iter(self._nets))} players; "
                                 f"they cannot play a {num_players}-player deal")
            net, _ = load_network("default", num_players)
            self._nets[num_players] = net
        return net

    def reset(self) -> None:
        """Nothing to reset: the policy keeps no state between decisions."""

    def check_deck(self, infoset) -> None:
        """Refuse a deal of another deck than the network's.

        A network whose file records a reduced deck (``tricks`` below 7 in its ``.npz``,
        :mod:`twilight_env.agents.nn.numpy_pv`) plays deals of that deck only; a full-deck
        network (the shipped ones, files without ``tricks``) also plays reduced-deck deals,
        as the reduced-deck studies play ``policy:default``, unless :attr:`strict_deck`
        (``mmd``). Every decision method calls it (:meth:`act`, :meth:`action_probs`,
        :meth:`action_probs_batch`, :meth:`greedy_batch`).

        Args:
            infoset: an :class:`~twilight_env.rules.infoset.InfoSet` of the deal (its
                ``num_players``, ``num_tricks`` and ``deck`` mask, R2.3).

        Raises:
            ValueError: naming the network's file and deck and the deal's deck.
        """
        net = self._nets.get(infoset.num_players)
        if net is None or (net.tricks == NUM_TRICKS and not self.strict_deck):
            return  # the shipped full-deck weights, or the other variant (net_for refuses it)
        if infoset.num_tricks != net.tricks or infoset.deck != deck_mask(net.tricks):
            game = (deck_words(infoset.num_tricks) if infoset.deck == deck_mask(infoset.num_tricks)
                    else f"a deck of {bin(infoset.deck).count('1')} cards")
            raise ValueError(f"{self.kind}: the network {self.path!r} was trained on {deck_words(net.tricks)}, but "
                             f"this deal is played with {game}; play it on deals of its own deck, or train a "
                             f"network with --tricks {infoset.num_tricks}")

    def action_probs(self, infoset, legal_actions) -> np.ndarray:
        """The distribution this agent plays at a decision (module docstring).

        Returns:
            ``(31,)`` float64 by action id: 0 outside ``legal_actions``, summing to 1; at
            temperature 0 all mass on the action :meth:`act` plays.

        Raises:
            ValueError: no legal action, or an information set whose viewer is not to act.
        """
        return self.action_probs_batch([infoset], [legal_actions])[0]

    def action_probs_batch(self, infosets, legal_actions_list) -> np.ndarray:
        """:meth:`action_probs` of many decisions, one forward pass per number of players.

        Returns:
            ``(B, 31)`` float64, one distribution per decision.

        Raises:
            ValueError: a decision without legal actions, or lists of different lengths.
        """
        out = np.zeros((len(infosets), NUM_ACTIONS), dtype=np.float64)
        for idx, probs, legal in self._forward_groups(infosets, legal_actions_list):
            out[idx] = tempered_probs(probs, legal, self.temperature)
        return out

    def _forward_groups(self, infosets, legal_actions_list):
        """The network's policy for many decisions, one forward pass per number of players:
        yields ``(idx, probs, legal)`` per group, ``idx`` the decisions' positions in the
        lists, ``probs`` ``(len(idx), 31)`` and ``legal`` ``(len(idx), 31)`` bool.

        Raises:
            ValueError: a decision without legal actions, or lists of different lengths.
        """
        if len(infosets) != len(legal_actions_list):
            raise ValueError(f"{len(infosets)} information sets but {len(legal_actions_list)} legal-action lists")
        by_npl: dict[int, list[int]] = {}
        for i, info in enumerate(infosets):
            if len(legal_actions_list[i]) == 0:
                raise ValueError("policy: a decision has no legal action (the deal is over?)")
            if self._deck_guard:
                self.check_deck(info)
            by_npl.setdefault(info.num_players, []).append(i)
        for npl, idx in by_npl.items():
            rows = np.array([infoset_row(infosets[i]) for i in idx], dtype=np.int64)
            roles = np.array([role_of(npl, infosets[i].acting_seat) for i in idx], dtype=np.int64)
            legal = legal_matrix([legal_actions_list[i] for i in idx])
            probs, _ = self.net_for(npl).forward(rows, roles, legal)
            yield idx, probs, legal

    def act(self, infoset, legal_actions, rng: np.random.Generator | None = None) -> int:
        """The legal action of highest policy probability (lowest id on ties) at temperature
        0; at ``T > 0`` a draw from :meth:`action_probs` with one uniform number of ``rng``.

        Raises:
            ValueError: no legal action, an information set whose viewer is not to act, or
                ``rng`` None at ``T > 0``.
        """
        if len(legal_actions) == 0:
            raise ValueError("policy: a decision has no legal action (the deal is over?)")
        if self.temperature:
            return int(sample(self.action_probs(infoset, legal_actions)[None], rng)[0])
        if self._deck_guard:
            self.check_deck(infoset)
        npl = infoset.num_players
        legal = np.zeros(NUM_ACTIONS, dtype=bool)
        legal[list(legal_actions)] = True
        probs, _ = self.net_for(npl).forward_one(infoset_row(infoset), role_of(npl, infoset.acting_seat), legal)
        return int(np.argmax(np.where(legal, probs, -1.0)))  # the first maximum: lowest id on ties

    @property
    def act_batch(self):
        """Greedy actions for many decisions (:meth:`greedy_batch`); present only at
        temperature 0 (``hasattr`` is False otherwise: a sampled decision needs the generator
        passed to ``act``, and batch callers then decide one by one)."""
        if self.temperature:
            raise AttributeError("act_batch: a sampled policy (temperature > 0) decides with act(..., rng)")
        return self.greedy_batch

    def greedy_batch(self, infosets, legal_actions_list) -> list[int]:
        """Greedy actions for many decisions, one forward pass per number of players.

        Raises:
            ValueError: a decision without legal actions.
        """
        out: list = [None] * len(infosets)
        for idx, probs, legal in self._forward_groups(infosets, legal_actions_list):
            probs = np.where(legal, probs, -1.0)
            for k, i in enumerate(idx):
                out[i] = int(np.argmax(probs[k]))  # the first maximum: lowest id on ties
        return out


__all__ = ["DEFAULT_SOURCES", "DEFAULT_WEIGHTS", "PolicyAgent", "deck_words", "default_weights", "load_network"]


# The declaration (twilight_env.agents.declaration): read from this source without importing it.
from twilight_env.agents.base import AgentDecl, Option, declare  # noqa: E402

declare(AgentDecl(
    name="policy", factory=PolicyAgent, summary="the expert-iteration network (NumPy), greedy or sampled",
    served=True, shipped_weights=True, bare_option="path", exact_target=True, family="exit",
    options=(
        Option("path", str, "default", serve=("default",), doc="'default' (shipped), a .npz or an exit checkpoint", holds="path"),
        Option("temperature", float, 0.0, low=0, high=100, doc="0: greedy; above 0: sampled"),
    )))
