"""``neural``: the greedy policy of a Deep Monte-Carlo Q-network trained by ``twilight train``.

Spec: ``neural`` or ``neural:default`` loads the shipped weights,
``agents/weights/neural_4p.pt`` or ``neural_3p.pt`` chosen by the information set's
number of players; ``neural:path=RUN/checkpoint.pt`` (or ``neural:RUN/checkpoint.pt``, or
a run directory) loads a training checkpoint. Checkpoints are read with
``torch.load(..., weights_only=True)``.

At a decision the agent builds the DMC features of its information set
(``agents.nn.features``, only what the seat may know: R2.5, R7.1), scores every legal
action in one forward pass and plays the best one; it never considers an action
outside ``legal_actions`` (R3.2, R3.5). :meth:`NeuralAgent.act_batch` scores many
decisions in one pass.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from .base import register
from .nn.checkpoint import load_checkpoint, model_from_checkpoint
from .nn.features import infoset_row, role_of
from .nn.network import score_decisions

WEIGHTS_DIR = Path(__file__).resolve().parent / "weights"
"""Folder of the shipped weights ``neural_4p.pt`` and ``neural_3p.pt``."""

_MODEL_CACHE: dict = {}


def default_weights(num_players: int) -> Path:
    """Path of the shipped weights for 3 or 4 players."""
    return WEIGHTS_DIR / f"neural_{num_players}p.pt"


def _load(path: Path, num_players: int | None):
    """Model and variant of a checkpoint, cached per (path, mtime, size)."""
    try:
        st = path.stat()
        key = (str(path.resolve()), st.st_mtime_ns, st.st_size)
    except OSError:
        key = None
    if key is not None and key in _MODEL_CACHE:
        model, npl = _MODEL_CACHE[key]
        if num_players is not None and npl != num_players:
            raise ValueError(f"checkpoint {str(path)!r} was trained for {npl} players, "
                             f"but a {num_players}-player network is needed")
        return model, npl
    ckpt = load_checkpoint(path, num_players)
    model = model_from_checkpoint(ckpt, str(path))
    for p in model.parameters():
        p.requires_grad_(False)
    if key is not None:
        _MODEL_CACHE[key] = (model, ckpt["num_players"])
    return model, ckpt["num_players"]


@register("neural")
class NeuralAgent:
    """Greedy DMC policy (see the module docstring).

    Args:
        path: ``"default"`` for the shipped weights, or a checkpoint file / run directory.
        threads: torch intra-op threads to use in this process (None leaves torch's setting).

    Raises:
        ValueError: if the checkpoint is missing, corrupt, or for the other number of
            players (for ``default``: when the first decision of that variant is made).
    """

    stateless = True
    """Decisions depend only on (information set, legal actions, rng): one instance may
    play many deals at once (``experiments.common.play_lockstep``)."""

    def __init__(self, path: str = "default", threads: int | None = 1):
        if not isinstance(path, str) or not path:
            raise ValueError(f"neural: path must be 'default' or a checkpoint path, got {path!r}")
        self.path = path
        self.name = "neural" if path == "default" else f"neural:{path}"
        if threads is not None:
            torch.set_num_threads(int(threads))
        self._models: dict[int, object] = {}
        if path != "default":  # the file is loaded and checked now, when the agent is built
            try:
                model, npl = _load(Path(path), None)
            except ValueError as e:
                raise ValueError(f"neural option path={path!r}: {e}") from None
            self._models[npl] = model
            self.num_players = npl
        else:
            self.num_players = None

    def model_for(self, num_players: int):
        """The network for a variant (loads the shipped weights on first use).

        Raises:
            ValueError: if this agent's checkpoint is for the other variant, or the file is
                missing or corrupt.
        """
        model = self._models.get(num_players)
        if model is not None:
            return model
        if self.path != "default":
            raise ValueError(f"neural checkpoint {self.path!r} was trained for {self.num_players} players; "
                             f"it cannot play a {num_players}-player deal")
        model, _ = _load(default_weights(num_players), num_players)
        self._models[num_players] = model
        return model

    def act(self, infoset, legal_actions, rng: np.random.Generator) -> int:
        """The legal action with the highest Q-value (first one on ties)."""
        return self.act_batch([infoset], [legal_actions])[0]

    def q_values(self, infosets, legal_actions_list) -> list[list[float]]:
        """Q-values (deal points / 360) of each decision's legal actions, one forward pass per variant.

        Raises:
            ValueError: on a decision with no legal action, or an information set whose
                viewer is not to act.
        """
        out: list = [None] * len(infosets)
        by_npl: dict[int, list[int]] = {}
        for i, (info, legal) in enumerate(zip(infosets, legal_actions_list)):
            if not legal:
                raise ValueError("neural: no legal action given (the deal is over?)")
            by_npl.setdefault(info.num_players, []).append(i)
        for npl, idx in by_npl.items():
            model = self.model_for(npl)
            rows = [infoset_row(infosets[i]) for i in idx]
            roles = [role_of(npl, infosets[i].acting_seat) for i in idx]
            legals = [tuple(int(a) for a in legal_actions_list[i]) for i in idx]
            qs = score_decisions(model, rows, roles, legals, "cpu")
            for i, q in zip(idx, qs):
                out[i] = q
        return out

    def act_batch(self, infosets, legal_actions_list) -> list[int]:
        """Greedy actions for many decisions at once; each is one of its legal actions."""
        qs = self.q_values(infosets, legal_actions_list)
        actions = []
        for q, legal in zip(qs, legal_actions_list):
            best = max(range(len(q)), key=q.__getitem__)
            actions.append(int(legal[best]))
        return actions

    def reset(self) -> None:
        """Nothing to reset: the policy keeps no state between decisions."""
