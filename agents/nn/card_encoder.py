"""A card-set encoder for the policy/value network: one shared network per card, pooled over cards.

The compact row (:mod:`twilight_env.agents.nn.features`) holds 19 card masks (entries
0..18: the viewer's hand, the open hand of the new moon, the acting hand, the unseen
cards, the cards played for and from each relative seat, the current trick's four places,
the pending pile and the cards each side has taken) and 6 entries that are not about single
cards (card-back counts, the trick and seat one-hots, flags). The MLP of
:class:`twilight_env.agents.exit.PolicyValueNet` reads all 700 bits at once; this encoder
instead treats the deal as the set of its 28 cards (Deep Sets, Zaheer et al. 2017):

    card c's token:  x_c = the 19 mask bits of card c                        (B, 28, 19)
    t_c = ReLU(W2 · ReLU(W1 · x_c + e_c))    one W1, W2 shared by all cards  (B, 28, d)
        with e_c a learned embedding of card c (its identity: strength, souls, cult)
    pooled = [mean_c t_c, max_c t_c]                                         (B, 2d)
    h = trunk MLP([pooled, the 6 other entries' 168 bits])                   (B, trunk[-1])

Everything the deal's history says about a card (who played it, for whom, where it lies
now) is in that card's token, so the encoder is the same function whichever order the
tricks were played in and shares what it learns about one card's situation with the others.
:class:`CardPolicyHead` scores each card action from its own token and ``h``
(``W_t · t_c + W_h · h``, then an MLP to one logit; the same weights for every card) and
the three request actions (R3.2) from ``h`` alone.

Inputs are only what the deciding seat may know: the compact row is built from its
information set (R2.5, R7.1), as for the MLP.
"""

from __future__ import annotations

import torch
from torch import nn

from twilight_env.rules.cards import NUM_CARDS
from twilight_env.rules.engine import NUM_ACTIONS

from twilight_env.agents.nn.features import BITS_PER_MASK, NUM_MASKS
from twilight_env.agents.nn.network import mlp

CARD_MASKS = 19
"""Compact-row entries 0..18 are card masks (bit = card id); the rest are not per card."""
GLOBAL_SIZE = (NUM_MASKS - CARD_MASKS) * BITS_PER_MASK
"""Bits of the entries that are not card masks: 6 × 28 = 168."""
NUM_REQUESTS = NUM_ACTIONS - NUM_CARDS
"""Request actions (ids 28..30, R3.2): 3."""


class CardSetEncoder(nn.Module):
    """Compact-row bits ``(B, 25, 28)`` float32 -> ``h`` ``(B, trunk[-1])`` and card tokens ``(B, 28, width)``.

    Args:
        width: token width ``d`` (units, >= 1).
        trunk: hidden widths of the MLP on the pooled tokens and the global bits (units).
    """

    def __init__(self, width: int, trunk: tuple):
        super().__init__()
        self.token_in = nn.Linear(CARD_MASKS, width)
        self.card_embed = nn.Parameter(torch.randn(NUM_CARDS, width) * 0.1)
        self.token_out = nn.Linear(width, width)
        self.trunk = mlp((2 * width + GLOBAL_SIZE, *trunk), final_act=True)

    def forward(self, bits: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        cards = bits[:, :CARD_MASKS, :].transpose(1, 2)
        t = torch.relu(self.token_in(cards) + self.card_embed)
        t = torch.relu(self.token_out(t))
        pooled = torch.cat([t.mean(1), t.amax(1)], dim=1)
        glob = bits[:, CARD_MASKS:, :].reshape(bits.shape[0], GLOBAL_SIZE)
        return self.trunk(torch.cat([pooled, glob], dim=1)), t


class CardPolicyHead(nn.Module):
    """Policy logits ``(B, 31)``: card ``c``'s logit from its token and ``h``, requests from ``h``.

    Args:
        width: token width (units). state: width of ``h`` (units). head: hidden widths (units, >= 1 entry).
    """

    def __init__(self, width: int, state: int, head: tuple):
        super().__init__()
        self.card_token = nn.Linear(width, head[0])
        self.card_state = nn.Linear(state, head[0], bias=False)
        self.card_rest = mlp((*head, 1), final_act=False)
        self.requests = mlp((state, *head, NUM_REQUESTS), final_act=False)

    def forward(self, h: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
        z = torch.relu(self.card_token(tokens) + self.card_state(h).unsqueeze(1))
        cards = self.card_rest(z).squeeze(-1)
        return torch.cat([cards, self.requests(h)], dim=1)


__all__ = ["CARD_MASKS", "GLOBAL_SIZE", "NUM_REQUESTS", "CardSetEncoder", "CardPolicyHead"]
