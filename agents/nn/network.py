"""The Deep Monte-Carlo Q-network: Q(information set, action) -> expected final return.

Architecture (DouZero-style, Zha et al. 2021, with the state part computed once per
decision so all legal actions of a decision are scored in one pass):

    compact row (B, 25) int64 --bits--> (B, 700) --trunk MLP--> h (B, trunk)
    for each action row n of decision owner[n]:
        [h[owner[n]], ACTION_FEATURES[action[n]]] --head[role[owner[n]]] MLP--> q[n]

(the head's first layer is evaluated in two parts, state columns once per decision and
action columns once per action id; see ``QNetwork._head``)

One trunk is shared; roles that differ get their own head (``num_roles``: 1 in 4
players, 4 in 3 players: solo for itself, Sun left, solo for the new moon, Sun right).
The output is in units of deal points / 360 (the return the trainer regresses on).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
from torch import nn

from twilight_env.agents.nn.features import ACTION_FEATURES, ACTION_SIZE, BITS_PER_MASK, NUM_MASKS, STATE_SIZE


@dataclass
class NetConfig:
    """Shape of a :class:`QNetwork` (stored in checkpoints as a plain dict)."""

    num_roles: int = 1
    """Heads: 1 (4 players) or 4 (3 players)."""
    trunk: tuple = (256, 256)
    """Hidden widths of the shared state trunk (units)."""
    head: tuple = (128,)
    """Hidden widths of each per-role head (units)."""

    def to_dict(self) -> dict:
        d = asdict(self)
        d["trunk"] = list(self.trunk)
        d["head"] = list(self.head)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "NetConfig":
        return cls(num_roles=int(d["num_roles"]), trunk=tuple(int(x) for x in d["trunk"]),
                   head=tuple(int(x) for x in d["head"]))


def mlp(sizes, final_act: bool) -> nn.Sequential:
    """Linear layers of widths ``sizes`` (inputs first) with a ReLU after each but the last (after the last too
    when ``final_act``), as an ``nn.Sequential`` of Linear and ReLU modules."""
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2 or final_act:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


class QNetwork(nn.Module):
    """Scores (decision, action) pairs; see the module docstring."""

    def __init__(self, cfg: NetConfig):
        super().__init__()
        self.cfg = cfg
        self.trunk = mlp((STATE_SIZE, *cfg.trunk), final_act=True)
        self.heads = nn.ModuleList(mlp((cfg.trunk[-1] + ACTION_SIZE, *cfg.head, 1), final_act=False)
                                   for _ in range(cfg.num_roles))
        self.register_buffer("shifts", torch.arange(BITS_PER_MASK, dtype=torch.int64), persistent=False)
        self.register_buffer("action_table", torch.from_numpy(ACTION_FEATURES.copy()), persistent=False)

    def expand(self, rows: torch.Tensor) -> torch.Tensor:
        """``(B, 25)`` int64 compact rows -> ``(B, 700)`` float32 bits."""
        return ((rows.unsqueeze(-1) >> self.shifts) & 1).reshape(rows.shape[0], NUM_MASKS * BITS_PER_MASK).float()

    def trunk_forward(self, rows: torch.Tensor) -> torch.Tensor:
        """Trunk output ``(B, trunk[-1])`` of compact rows ``(B, 25)`` int64.

        The first layer is a dense ``Linear`` on the expanded 0/1 bits. A sparse variant
        (``embedding_bag`` over the set bits, about 10% of them) was measured slower: one
        learner update of a self-play batch of 1024 took 58 ms with it against 39 ms dense
        (one idle core, torch 2.13 CPU).
        """
        return self.trunk(self.expand(rows))

    def forward(self, rows: torch.Tensor, roles: torch.Tensor, actions: torch.Tensor,
                owner: torch.Tensor | None = None) -> torch.Tensor:
        """Q-values of action rows.

        Args:
            rows: ``(B, 25)`` int64 compact rows (``twilight_env.agents.nn.features``), one per decision.
            roles: ``(B,)`` int64 head index per decision (0..num_roles-1).
            actions: ``(N,)`` int64 action ids 0..30.
            owner: ``(N,)`` int64 decision index of each action row; None means
                ``arange(B)`` (one action per decision, N == B).

        Returns:
            ``(N,)`` float32 Q-values in deal points / 360.
        """
        h = self.trunk_forward(rows)
        T = h.shape[1]
        n_dec = h.shape[0]
        if owner is None:
            owner = torch.arange(n_dec, device=h.device)
        if len(self.heads) == 1:
            return self._head(self.heads[0], h, owner, actions, T)
        out = torch.empty(actions.shape[0], dtype=h.dtype, device=h.device)
        pair_roles = roles.index_select(0, owner)
        for r, head in enumerate(self.heads):
            dsel = (roles == r).nonzero(as_tuple=True)[0]
            if not dsel.numel():
                continue
            pos = torch.full((n_dec,), -1, dtype=torch.int64, device=h.device)
            pos[dsel] = torch.arange(dsel.numel(), device=h.device)
            idx = (pair_roles == r).nonzero(as_tuple=True)[0]
            out[idx] = self._head(head, h.index_select(0, dsel), pos.index_select(0, owner.index_select(0, idx)),
                                  actions.index_select(0, idx), T)
        return out

    def _head(self, head: nn.Sequential, h: torch.Tensor, owner: torch.Tensor, actions: torch.Tensor,
              T: int) -> torch.Tensor:
        """One head on (decision, action) pairs: ``head([h[owner], action_features])``.

        The head's first ``Linear`` is split into its state and action columns, so the state
        part is computed once per decision (not once per legal action) and the action part
        once per action id: the same function and parameters, and the main cost of scoring
        every legal action in self-play (several actions per decision) is paid once.
        """
        first = head[0]
        w = first.weight
        hd = nn.functional.linear(h, w[:, :T], first.bias)
        ta = nn.functional.linear(self.action_table, w[:, T:])
        x = hd.index_select(0, owner) + ta.index_select(0, actions)
        for layer in list(head)[1:]:
            x = layer(x)
        return x.squeeze(1)


@torch.no_grad()
def score_decisions(model, rows: list, roles: list, legals: list, device) -> list[list[float]]:
    """Q-values of every legal action of a list of decisions, in one forward pass.

    Args:
        model: a :class:`QNetwork`.
        rows: compact rows (lists of 25 ints). roles: head per decision.
        legals: legal action tuples per decision.

    Returns:
        per decision, the Q-values (deal points / 360) of its legal actions in order.
    """
    n = len(rows)
    acts, owner = [], []
    for i, legal in enumerate(legals):
        acts.extend(legal)
        owner.extend([i] * len(legal))
    q = model(torch.tensor(rows, dtype=torch.int64, device=device),
              torch.tensor(roles, dtype=torch.int64, device=device),
              torch.tensor(acts, dtype=torch.int64, device=device),
              torch.tensor(owner, dtype=torch.int64, device=device)).cpu().tolist()
    out, k = [], 0
    for i in range(n):
        m = len(legals[i])
        out.append(q[k:k + m])
        k += m
    return out


__all__ = ["NetConfig", "QNetwork", "score_decisions"]
