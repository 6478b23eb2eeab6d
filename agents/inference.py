"""Card-location model: for every unseen card, a distribution over the seats that may hold it.

After Solinas, Rebstock & Buro, "Improving Search with Supervised Learning in
Trick-Based Card Games" (AAAI 2019): a network reads the searcher's information set
(:func:`twilight_env.agents.worlds.infoset_features`, only what the seat may know: R2.5, R7.1) and
gives, for each of the 28 cards, logits over the 4 relative seats; the logits of seats
that cannot hold the card (seen hands, seats with no card of its cult left,
:func:`twilight_env.agents.worlds.allowed_seats`) are masked out before the softmax. Determinized
search draws worlds from these marginals with :class:`twilight_env.agents.worlds.WorldSampler`,
exactly restricted to the worlds consistent with the information set.

Trained by ``python -m twilight_env.training.train_inference``; shipped weights
``agents/weights/inference_3p.pt`` and ``inference_4p.pt``. A checkpoint is a dict
readable with ``torch.load(path, weights_only=True)``: ``format``
(``"twilight-inference"``), ``version`` (1), ``feature_version``, ``num_players``,
``hidden`` (hidden layer width), ``model`` (``state_dict``), and in training
checkpoints also ``optimizer``, ``step``, ``seconds``, ``best_val``, ``rng``, ``data``.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import torch
from torch import nn

from twilight_env.agents.worlds import FEATURE_SIZE, FEATURE_VERSION, WorldSampler, allowed_seats, infoset_features

FORMAT = "twilight-inference"
VERSION = 1
WEIGHTS_DIR = Path(__file__).resolve().parent / "weights"
"""Folder of the shipped weights ``inference_3p.pt`` and ``inference_4p.pt``."""
PROB_FLOOR = 1e-6
"""Smallest probability given to an allowed (card, seat) pair, so that every consistent world keeps weight > 0."""


class CardLocationNet(nn.Module):
    """MLP ``FEATURE_SIZE -> hidden -> hidden -> 28 × 4`` logits ``[card id, relative seat]``.

    Args:
        hidden: width of the two hidden layers.
        dropout: dropout after each hidden layer while training (none in eval mode).
    """

    def __init__(self, hidden: int = 256, dropout: float = 0.0):
        super().__init__()
        self.hidden = hidden
        self.body = nn.Sequential(nn.Linear(FEATURE_SIZE, hidden), nn.ReLU(), nn.Dropout(dropout),
                                  nn.Linear(hidden, hidden), nn.ReLU(), nn.Dropout(dropout),
                                  nn.Linear(hidden, 28 * 4))

    def forward(self, x: torch.Tensor, allowed: torch.Tensor) -> torch.Tensor:
        """Masked log-probabilities.

        Args:
            x: ``(B, FEATURE_SIZE)`` float32 features.
            allowed: ``(B, 28, 4)`` bool, the seats each card may lie with.

        Returns:
            ``(B, 28, 4)`` float32 log-probabilities over relative seats; ``-inf`` where not
            allowed, and 0 everywhere on cards with no allowed seat (not unseen).
        """
        logits = self.body(x).view(-1, 28, 4)
        logits = logits.masked_fill(~allowed, float("-inf"))
        none = ~allowed.any(dim=2, keepdim=True)
        logits = logits.masked_fill(none, 0.0)
        return torch.log_softmax(logits, dim=2).masked_fill(none, 0.0)


def allowed_from_features(x: torch.Tensor | np.ndarray) -> torch.Tensor:
    """The :func:`twilight_env.agents.worlds.allowed_seats` mask rebuilt from feature vectors (unseen
    block, count one-hots and, in 3 players, the new moon's relative seat).

    Args:
        x: ``(B, FEATURE_SIZE)`` features.

    Returns:
        ``(B, 28, 4)`` bool.
    """
    x = torch.as_tensor(np.asarray(x) if not isinstance(x, torch.Tensor) else x)
    unseen = x[:, 2 * 28:3 * 28] > 0.5                                   # (B, 28)
    o = 24 * 28
    counts = x[:, o:o + 64].view(-1, 4, 2, 8)
    has = counts[:, :, :, 1:].sum(dim=3) > 0.5                            # (B, rel seat, cult): count >= 1
    three = x[:, FEATURE_SIZE - 17] > 0.5
    viewer = x[:, FEATURE_SIZE - 21:FEATURE_SIZE - 17].argmax(dim=1)     # absolute viewer seat
    rel_new_moon = (2 - viewer) % 4
    hidden = torch.ones(x.shape[0], 4, dtype=torch.bool)
    hidden[:, 0] = False
    hidden[three, rel_new_moon[three]] = False
    cult = torch.zeros(28, dtype=torch.long)
    cult[14:] = 1
    seat_has = has[:, :, cult].transpose(1, 2)                             # (B, 28, 4)
    return unseen[:, :, None] & hidden[:, None, :] & seat_has


def checkpoint_dict(model: CardLocationNet, num_players: int, **extra) -> dict:
    """The checkpoint dict of a model (module docstring), plus ``extra`` keys."""
    return {"format": FORMAT, "version": VERSION, "feature_version": FEATURE_VERSION, "num_players": num_players,
            "hidden": model.hidden, "model": {k: v.detach().cpu() for k, v in model.state_dict().items()},
            **extra}


def save_checkpoint(obj: dict, path: str | os.PathLike) -> None:
    """``torch.save`` to a temporary file, then ``os.replace`` onto ``path`` (atomic on POSIX)."""
    path = Path(path)
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    torch.save(obj, tmp)
    os.replace(tmp, path)


def read_checkpoint(path: str | os.PathLike, num_players: int | None = None) -> dict:
    """Load and check a card-location checkpoint (``weights_only=True``).

    Raises:
        ValueError: if the file is missing, corrupt or truncated, not a
            ``twilight-inference`` checkpoint, of another feature version, or for the other
            number of players.
    """
    p = Path(path)
    if p.exists() and not p.is_file():
        raise ValueError(f"card-location checkpoint {str(p)!r} is not a regular file (a folder, a device, a pipe, "
                         "...); give a file written by `python -m twilight_env.training.train_inference`")
    if not p.is_file():
        raise ValueError(f"card-location checkpoint not found: {str(p)!r} (give a file written by "
                         f"`python -m twilight_env.training.train_inference`, or inference=model for the shipped weights)")
    try:
        ckpt = torch.load(p, map_location="cpu", weights_only=True)
    except Exception as e:  # torch raises many kinds on a damaged file
        raise ValueError(f"cannot read card-location checkpoint {str(p)!r}: the file is corrupt, truncated or "
                         f"not written by twilight_env.training.train_inference ({type(e).__name__} while loading)") from None
    if not isinstance(ckpt, dict) or ckpt.get("format") != FORMAT:
        raise ValueError(f"{str(p)!r} is not a card-location checkpoint (expected a dict with format={FORMAT!r})")
    if ckpt.get("version") != VERSION or ckpt.get("feature_version") != FEATURE_VERSION:
        raise ValueError(f"{str(p)!r} has version {ckpt.get('version')!r} / feature version "
                         f"{ckpt.get('feature_version')!r}; this code reads {VERSION} / {FEATURE_VERSION}")
    for key in ("num_players", "hidden", "model"):
        if key not in ckpt:
            raise ValueError(f"card-location checkpoint {str(p)!r} lacks {key!r}: corrupt")
    if num_players is not None and ckpt["num_players"] != num_players:
        raise ValueError(f"card-location checkpoint {str(p)!r} was trained for {ckpt['num_players']} players, "
                         f"but {num_players} players are needed")
    return ckpt


def model_from_checkpoint(ckpt: dict, path: str = "checkpoint") -> CardLocationNet:
    """Build the network of a checkpoint dict (eval mode).

    Raises:
        ValueError: if the weights do not fit the stored shape.
    """
    try:
        model = CardLocationNet(int(ckpt["hidden"]))
        model.load_state_dict({k: v.float() for k, v in ckpt["model"].items()})
    except (KeyError, TypeError, ValueError, RuntimeError, AttributeError) as e:
        raise ValueError(f"card-location checkpoint {path!r} has weights that do not fit its network: "
                         f"{type(e).__name__}: {str(e)[:200]}") from None
    return model.eval()


_CACHE: dict = {}


def default_weights(num_players: int) -> Path:
    """Path of the shipped card-location weights for 3 or 4 players."""
    return WEIGHTS_DIR / f"inference_{num_players}p.pt"


def load_model(path: str | os.PathLike | None, num_players: int) -> CardLocationNet:
    """The model for a variant: the shipped weights if ``path`` is None, else that file
    (cached per path, modification time and size).

    Raises:
        ValueError: as :func:`read_checkpoint`.
    """
    p = Path(default_weights(num_players) if path is None else path)
    try:
        st = p.stat()
        key = (str(p.resolve()), st.st_mtime_ns, st.st_size, num_players)
    except OSError:
        key = None
    if key is not None and key in _CACHE:
        return _CACHE[key]
    model = model_from_checkpoint(read_checkpoint(p, num_players), str(p))
    for q in model.parameters():
        q.requires_grad_(False)
    if key is not None:
        _CACHE[key] = model
    return model


def check_file(path: str | os.PathLike) -> int:
    """Load and check a card-location checkpoint now (the file an ``inference=FILE``
    option names), keeping its model for :func:`load_model`; returns its number of players.

    Raises:
        ValueError: as :func:`read_checkpoint` and :func:`model_from_checkpoint` (missing,
            a folder, not a checkpoint, corrupt, weights that do not fit), naming the file.
    """
    p = Path(path)
    if p.is_dir():
        raise ValueError(f"card-location checkpoint {str(p)!r} is a folder; give a checkpoint file written by "
                         "`python -m twilight_env.training.train_inference`")
    ckpt = read_checkpoint(p)
    npl = ckpt["num_players"]
    if npl not in (3, 4) or isinstance(npl, bool):
        raise ValueError(f"card-location checkpoint {str(p)!r} says num_players={npl!r}; 3 or 4 expected: corrupt")
    load_model(p, npl)  # builds the network (and caches it): weights that do not fit are refused here
    return int(npl)


def card_probs(model: CardLocationNet, info) -> np.ndarray:
    """The model's seat distribution of every unseen card of an information set.

    Returns:
        float64 ``(28, 4)`` ``[card id, relative seat]``: each unseen card's row sums to 1
        over its allowed seats (at least ``PROB_FLOOR`` each, then renormalised); rows of
        cards that are not unseen are 0.
    """
    allowed = allowed_seats(info)
    x = torch.from_numpy(infoset_features(info))[None]
    with torch.inference_mode():
        logp = model(x, torch.from_numpy(allowed)[None])[0].double().numpy()
    p = np.where(allowed, np.maximum(np.exp(logp), PROB_FLOOR), 0.0)
    s = p.sum(axis=1, keepdims=True)
    s[s == 0] = 1.0
    return p / s


def model_sampler(info, path: str | os.PathLike | None = None) -> WorldSampler:
    """A :class:`~twilight_env.agents.worlds.WorldSampler` for ``info`` drawing from the card-location model.

    Args:
        info: the searcher's :class:`~twilight_env.rules.infoset.InfoSet`.
        path: a checkpoint file, or None for the shipped weights of ``info.num_players``.

    Raises:
        ValueError: as :func:`load_model`.
    """
    return WorldSampler(info, card_probs(load_model(path, info.num_players), info))


__all__ = ["CardLocationNet", "allowed_from_features", "checkpoint_dict", "save_checkpoint", "read_checkpoint", "check_file",
           "model_from_checkpoint", "default_weights", "load_model", "card_probs", "model_sampler", "FORMAT",
           "VERSION", "PROB_FLOOR"]
