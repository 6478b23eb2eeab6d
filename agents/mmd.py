"""``mmd``: a network trained by Magnetic Mirror Descent, played as the distribution it learned.

The network is the expert-iteration policy-value network
(:class:`twilight_env.agents.exit.PolicyValueNet`) trained by
``python -m twilight_env.training.mmd`` (Sokota et al., ICLR 2023), which aims at a policy
a best response cannot exploit by much: such a policy is a distribution, so this agent
samples it by default (``temperature=1``: ``p(a)`` over the legal actions, R3.2, R3.5),
drawing from the generator passed to ``act`` only. :meth:`MMDAgent.action_probs` gives the
distribution it plays, and the search responder (``respond:target=mmd:RUN``) simulates it
exactly. ``temperature=0`` plays the most probable action (lowest id on ties); other
temperatures play ``p(a)^(1/T)`` normalised (:mod:`twilight_env.agents.sampling`).

Input, as ``policy``'s: the compact row of the deciding seat's information set (R2.5,
R7.1), its role and the legal actions; decisions are computed with NumPy
(:class:`~twilight_env.agents.nn.numpy_pv.NumpyPolicyValueNet`).

Deck: a network trained on a reduced deck (``--tricks`` below 7) plays deals of that deck
only. ``policy.npz`` records the deck (``tricks``; a file without it is a full-deck
network), and a decision of a deal of another deck raises ``ValueError`` naming both
decks (:meth:`~twilight_env.agents.policy.PolicyAgent.check_deck`, stricter here than
for ``policy``: a full-deck MMD network refuses reduced-deck deals too): the agent learns the deal's deck from the information
set (``num_tricks``, ``deck``; R2.3), when it is first asked to decide. The commands that deal
the full deck (``twilight arena``, ``edge``, ``ladder``, ``play``) refuse a reduced-deck network
before they start (:func:`~twilight_env.agents.base.check_specs`, from its ``tricks``), and the
search responder refuses it as a target.

Spec: ``mmd:RUN_DIR`` (reads ``RUN_DIR/policy.npz``, written with each checkpoint, or by
``python -m twilight_env.training.mmd --out RUN_DIR --export`` from a folder that keeps the
checkpoint alone) or
``mmd:PATH.npz``; ``mmd:RUN_DIR,temperature=0`` for the greedy play.
"""

from __future__ import annotations

from pathlib import Path

from twilight_env.rules.engine import NUM_TRICKS

from twilight_env.agents.policy import PolicyAgent, deck_words

POLICY_FILE = "policy.npz"
"""The file an MMD run directory keeps its policy in (``training/mmd/checkpoint.py``)."""


def weights_path(path: str) -> str:
    """The ``.npz`` of an ``mmd`` path: ``path/policy.npz`` for a run directory, else ``path``.

    Raises:
        ValueError: a path that is not a non-empty string, a run directory without its policy
            file, a path that does not exist, or a file that is not a ``.npz``.
    """
    if not isinstance(path, str) or not path or path == "default":
        raise ValueError(f"mmd: path must be an MMD run directory or its {POLICY_FILE} (no MMD network is "
                         f"shipped; the shipped network is policy:default), got {path!r}")
    p = Path(path)
    if p.name == "checkpoint.pt":
        raise ValueError(f"mmd plays a run's {POLICY_FILE}, not its checkpoint {path!r}: give the run directory "
                         f"{str(p.parent)!r} (if it keeps the checkpoint alone: python -m twilight_env.training.mmd "
                         f"--out {p.parent} --export)")
    if p.is_dir():
        if not (p / POLICY_FILE).is_file():
            if (p / "checkpoint.pt").is_file():
                raise ValueError(f"mmd: the run directory {path!r} keeps its checkpoint alone, without {POLICY_FILE}; "
                                 f"write it with: python -m twilight_env.training.mmd --out {path} --export")
            raise ValueError(f"mmd: the run directory {path!r} holds no {POLICY_FILE} (the run wrote no "
                             "checkpoint yet); give another run or its .npz")
        return str(p / POLICY_FILE)
    what = (f"give an MMD run directory (the --out of python -m twilight_env.training.mmd) or its {POLICY_FILE}")
    if not p.exists():
        raise ValueError(f"mmd: {path!r} does not exist; {what}")
    if p.suffix != ".npz":
        raise ValueError(f"mmd: {path!r} is not a .npz file; {what}")
    return path


class MMDAgent(PolicyAgent):
    """Samples (or, at temperature 0, maximises) an MMD network's policy (module docstring).

    Args:
        path: an MMD run directory or a ``.npz`` of the ``twilight-exit-npz`` format.
        temperature: 1 (default: the learned distribution), 0 (greedy) or ``T`` in ``(0, 100]``.

    Raises:
        ValueError: a missing or damaged file (naming it), or a temperature outside ``[0, 100]``.
            Every decision method (:meth:`act`, :meth:`action_probs`, :meth:`action_probs_batch`,
            :meth:`greedy_batch`) raises ``ValueError`` on a deal of another deck than the
            network's (:meth:`check_deck`).
    """

    kind = "mmd"
    strict_deck = True
    """A full-deck MMD network refuses reduced-deck deals too (:meth:`PolicyAgent.check_deck
    <twilight_env.agents.policy.PolicyAgent.check_deck>`)."""

    def __init__(self, path: str = "", temperature: float = 1.0):
        super().__init__(weights_path(path), temperature)
        self.path = path
        self.name = f"mmd:{path}" + ("" if self.temperature == 1.0 else f",temperature={self.temperature:g}")
        self._torch: dict = {}

    def model_for(self, num_players: int):
        """The network as a torch :class:`~twilight_env.agents.exit.PolicyValueNet` (same weights;
        the search responder's targets read it so).

        Its readers (the search responder's batch engine, ``twilight play``) deal the full
        deck, so a network trained on a reduced deck is refused here.

        Raises:
            ValueError: weights of the other variant, or a network of a reduced deck.
        """
        if self.tricks != NUM_TRICKS:
            raise ValueError(f"mmd: the network {self.path!r} was trained on {deck_words(self.tricks)}; the torch "
                             f"network serves full-deck play ({deck_words(NUM_TRICKS)}: the search responder's "
                             "batch engine, twilight play)")
        model = self._torch.get(num_players)
        if model is None:
            from twilight_env.agents.exit import TorchForward

            model = self._torch[num_players] = TorchForward.from_numpy(self.net_for(num_players), "cpu").model
        return model


__all__ = ["MMDAgent", "POLICY_FILE", "deck_words", "weights_path"]


# The declaration (twilight_env.agents.declaration): read from this source without importing it.
from twilight_env.agents.base import AgentDecl, Option, declare  # noqa: E402

declare(AgentDecl(
    name="mmd", factory=MMDAgent, summary="a Magnetic Mirror Descent network (NumPy), sampled or greedy",
    bare_option="path", exact_target=True, family="exit",
    options=(
        Option("path", str, "", doc="an MMD run directory or its policy.npz", holds="path"),
        Option("temperature", float, 1.0, low=0, high=100, doc="1: the learned distribution; 0: greedy"),
    )))
